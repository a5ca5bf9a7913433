// The handlers of the guards (io_uring, mounts, namespaces, kernel
// facilities: rare, and every attempt belongs in the trail) and of the
// calls that keep the supervisor's caches exact (chdir, credential
// changes, a shared fs_struct).  Guards are decided on scalar arguments and
// let through when allowed: what they set up is itself judged by the
// supervisor afterwards.
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "base/paths.h"
#include "procs/creds.h"

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

// Whether `fd` (a namespace, or a pidfd standing for all of a process's)
// is one that some process of the session is in.
bool namespace_of_session(int fd, const ClassifyEnv& env) {
  if (!env.session_pids) return false;
  std::vector<pid_t> pids = env.session_pids();
  struct stat want {};
  if (fstat(fd, &want)) return false;
  if (auto pid = fdinfo_field(0, fd, "Pid")) {  // a pidfd
    return std::find(pids.begin(), pids.end(), static_cast<pid_t>(*pid)) != pids.end();
  }
  static const char* const kinds[] = {"mnt", "net", "pid", "user", "uts", "ipc", "cgroup", "time"};
  Privileged priv;
  for (pid_t p : pids)
    for (const char* k : kinds) {
      char ns[64];
      snprintf(ns, sizeof ns, "/proc/%d/ns/%s", p, k);
      struct stat st {};
      if (stat(ns, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino) return true;
    }
  return false;
}

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

Classified classify_namespaces(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv& env) {
  uint64_t flags = call.args[row.args.flags];
  if (row.args.fd < 0) {
    Classified c = guard(Action::SysNamespace, ns_names(flags), flags);
    c.mounts_changed = flags & CLONE_NEWNS;
    return c;
  }
  // setns: the namespace the fd names, which must be one a process of the
  // session is in: the host's would leave the session's layers behind.
  std::string what = "setns";
  Classified c;
  auto f = target_fd_object(call, as_fd(call.args[row.args.fd]), false, env);
  if (!f) return fail(f.error().err);
  what = fd_path(f->get());
  c = guard(Action::SysNamespace, what, flags);
  c.mounts_changed = true;
  if (!namespace_of_session(f->get(), env)) {
    c.facets[0].breaks_layer = "entering a namespace no process of the session is in would leave the session's layers";
  }
  return c;
}

Classified classify_clone(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv&) {
  uint64_t flags = call.args[row.args.flags];
  if ((flags & CLONE_FS) && !(flags & CLONE_THREAD) && !(flags & kNamespaceFlags)) {
    Classified c = cont();
    c.shares_fs = true;
    return c;
  }
  Classified c = guard(Action::SysNamespace, ns_names(flags), flags);
  c.mounts_changed = flags & CLONE_NEWNS;
  return c;
}

Classified classify_kernel(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv&) {
  if (row.nr == SYS_socket) return guard(Action::SysKernel, call.args[0] == AF_PACKET ? "packet socket" : "raw socket");
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
