// The handlers of the process families: exec, signals, tracing and limits
// on other processes.  Decided on scalar arguments and the target process
// as the supervisor sees it; exec is let through (it cannot be carried out
// by another process) and recorded.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/paths.h"
#include "notify/handlers.h"
#include "notify/listener.h"

namespace cb::handlers {
namespace {

std::string exe_of(pid_t pid) {
  char p[64], buf[PATH_MAX];
  snprintf(p, sizeof p, "/proc/%d/exe", pid);
  ssize_t n = readlink(p, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The process a pidfd names, in the supervisor's pid namespace; -1 if none.
pid_t pid_of_pidfd(int fd) {
  auto pid = fdinfo_field(0, fd, "Pid");
  return pid ? static_cast<pid_t>(*pid) : -1;
}

Classified classify_target_process(Action a, pid_t target, const ClassifyEnv& env, uint64_t flags) {
  Classified c;
  c.flags = flags;
  Facet f = facet(a, target > 0 ? exe_of(target) : std::string());
  f.target_pid = target;
  if (target > 0) {
    std::string comm;
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/comm", target);
    if (UniqueFd fd{open(p, O_RDONLY | O_CLOEXEC)}) {
      char buf[64];
      ssize_t n = read(fd.get(), buf, sizeof buf);
      if (n > 0) comm.assign(buf, static_cast<size_t>(n - (buf[n - 1] == '\n')));
    }
    f.target = comm;
  }
  c.facets.push_back(std::move(f));
  c.op.kind = OpKind::Continue;
  // The supervisor itself is only visible without a pid namespace; it is
  // never a target, whatever the rules say.
  if (target == env.self_pid && target > 0) {
    c.facets.clear();
    c.op.kind = OpKind::Fail;
    c.op.err = EPERM;
  }
  return c;
}

// The process a call names: by pidfd, or by the pid argument.
pid_t target_of(const Call& call, const Syscall& row, const ClassifyEnv& env) {
  if (row.args.pidfd >= 0) {
    auto f = target_fd_object(call, as_fd(call.args[row.args.pidfd]), true, env);
    return f ? pid_of_pidfd(f->get()) : -1;
  }
  return static_cast<pid_t>(call.args[row.args.target]);
}

}  // namespace

Classified classify_exec(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  Classified c;
  c.exec = true;
  c.op.kind = OpKind::Continue;
  std::string path;
  auto p = read_path(call, row.args.path1);
  if (p && !p->empty()) {
    auto r = resolve_path(ctx, dirfd_arg(call, row.args.dirfd1), *p, Follow::Final);
    // A shell's PATH search tries many names: a name that does not
    // exist fails here exactly as the kernel would fail it, and is no
    // event.
    if (!r && (r.error().err == ENOENT || r.error().err == ENOTDIR)) return fail(r.error().err);
    if (r && !r->exists) return fail(ENOENT);
    path = r ? r->path : *p;
  } else if (row.args.fd >= 0) {
    // execveat(fd, "", AT_EMPTY_PATH): the open file itself.
    if (auto f = target_fd_object(call, as_fd(call.args[row.args.fd]), false, env)) {
      auto name = ctx.name_of(f->get());
      if (name) {
        path = std::move(*name);
      } else {
        // A memfd lies on no mount of any namespace, so it has no host name:
        // it is named as the kernel names it ("memfd:NAME"), which a rule
        // can match and no rule about a path does.
        std::string k = fd_path(f->get());
        if (k.rfind("/memfd:", 0) != 0) return fail(name.error().err);
        k.erase(0, 1);
        if (constexpr std::string_view del = " (deleted)"; k.ends_with(del)) k.resize(k.size() - del.size());
        path = std::move(k);
      }
    }
  }
  c.facets.push_back(facet(Action::ProcExec, path));
  return c;
}

Classified classify_signal(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv& env) {
  return classify_target_process(Action::ProcSignal, target_of(call, row, env), env, call.args[row.args.sig]);
}

Classified classify_trace(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv& env) {
  uint64_t request = arg_or(call, row.args.flags, 0);
  if (row.nr == SYS_ptrace && request == 0 /* PTRACE_TRACEME */) {
    Classified c = classify_target_process(Action::ProcTrace, 0, env, request);
    c.facets[0].path = "traceme";
    return c;
  }
  return classify_target_process(Action::ProcTrace, target_of(call, row, env), env, request);
}

Classified classify_prlimit(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  pid_t target = static_cast<pid_t>(call.args[row.args.target]);
  if (target == ctx.ns_ids().first || target == call.tid) return cont();
  return classify_target_process(Action::ProcTrace, target, env, call.args[row.args.flags]);
}

}  // namespace cb::handlers
