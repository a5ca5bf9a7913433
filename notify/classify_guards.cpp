// The handlers of the guards (io_uring, mounts, namespaces, kernel
// facilities: rare, and every attempt belongs in the trail) and of the
// calls that keep the supervisor's caches exact (chdir, credential
// changes, a shared fs_struct).  Guards are decided on scalar arguments and
// let through when allowed: what they set up is itself judged by the
// supervisor afterwards.
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>

#include <string>

#include "notify/handlers.h"
#include "syscalls/compat.h"

namespace cb::handlers {
namespace {

std::string ns_names(uint64_t flags) {
  static const std::pair<uint64_t, const char*> kinds[] = {
      {CLONE_NEWNS, "mnt"},  {CLONE_NEWUTS, "uts"}, {CLONE_NEWIPC, "ipc"},       {CLONE_NEWUSER, "user"},
      {CLONE_NEWPID, "pid"}, {CLONE_NEWNET, "net"}, {CLONE_NEWCGROUP, "cgroup"}, {CLONE_NEWTIME, "time"}};
  std::string s;
  for (auto& [bit, name] : kinds)
    if (flags & bit) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "ns" : s;
}

constexpr uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                     CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME;

Classified guard(Action a, std::string what, uint64_t flags = 0) {
  Classified c;
  c.flags = flags;
  c.facets.push_back(facet(a, std::move(what)));
  c.op.kind = OpKind::Continue;
  return c;
}

}  // namespace

Classified classify_io_uring_setup(const Call&, const Syscall&, PathContext&, const ClassifyEnv&) {
  Classified c = guard(Action::SysIoUring, "io_uring");
  c.io_uring = true;
  c.deny_errno = ENOSYS;  // programs fall back to plain syscalls
  return c;
}

Classified classify_mount(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv&) {
  std::string what;
  if (row.args.path1 >= 0 && call.args[row.args.path1]) {
    if (auto p = read_path(call, row.args.path1)) {
      what = *p;
      // A file system's name (fsopen) is no path.
      if (row.args.dirfd1 != kAtRaw)
        if (auto r = resolve_path(ctx, AT_FDCWD, *p, Follow::Final)) what = r->path;
    }
  }
  return guard(Action::SysMount, what, arg_or(call, row.args.flags, 0));
}

Classified classify_namespaces(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv& env) {
  uint64_t flags = call.args[row.args.flags];
  if (row.args.fd < 0) return guard(Action::SysNamespace, ns_names(flags), flags);
  // setns: the namespace the fd names.
  std::string what = "setns";
  if (auto f = target_fd_object(call, as_fd(call.args[row.args.fd]), false, env)) what = fd_path(f->get());
  return guard(Action::SysNamespace, what, flags);
}

Classified classify_clone(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv&) {
  uint64_t flags = call.args[row.args.flags];
  if ((flags & CLONE_FS) && !(flags & CLONE_THREAD) && !(flags & kNamespaceFlags)) {
    Classified c = cont();
    c.shares_fs = true;
    return c;
  }
  return guard(Action::SysNamespace, ns_names(flags), flags);
}

Classified classify_kernel(const Call&, const Syscall& row, PathContext&, const ClassifyEnv&) {
  return guard(Action::SysKernel, std::string(row.name));
}

Classified classify_chdir(const Call&, const Syscall&, PathContext&, const ClassifyEnv&) {
  Classified c = cont();
  c.fs_changed = true;
  return c;
}

Classified classify_creds(const Call&, const Syscall&, PathContext&, const ClassifyEnv&) {
  Classified c = cont();
  c.creds_changed = true;
  return c;
}

}  // namespace cb::handlers
