// The filter of a session without a supervisor of its own
// (plan/kernel_only.h): it notifies nothing, refuses what the policy
// refuses whoever asks, and installs where a listener cannot.  Judged by
// the program itself and, in forked children, by the real kernel.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "launch/filter.h"
#include "plan/kernel_only.h"
#include "policy/policy.h"
#include "tests/support/cbpf.h"

namespace cb {
namespace {

uint32_t run(const FilterProgram& prog, int nr, std::initializer_list<uint64_t> args) {
  seccomp_data d{};
  d.nr = nr;
  d.arch = AUDIT_ARCH_X86_64;
  int i = 0;
  for (uint64_t a : args) d.args[i++] = a;
  return test::run_seccomp_bpf(prog.insns, d);
}

// The built-in guards, and a policy that also refuses namespaces (but a
// bare user namespace) and mounts, as the default policy once did.
FilterSpec guards_only() {
  LoadOptions o;
  o.resolve_identities = false;
  auto r = load_policy_text({{"p.yaml",
                              "version: 1\ndefault: allow\nrules:\n"
                              "  - {id: userns, action: sys.namespace, path: [user], decision: allow}\n"
                              "  - {id: no-namespaces, action: sys.namespace, decision: deny}\n"
                              "  - {id: no-mounts, action: sys.mount, decision: deny}\n"}},
                            o);
  EXPECT_TRUE(r.policy);
  FilterSpec s;
  s.notify = false;
  s.gates = ~GateMask{0};  // every gate open: still nothing may notify
  if (r.policy) s.refusals = kernel_only_filter(*r.policy).refusals;
  return s;
}

// Runs `body` in a forked child; its exit status.
template <typename F>
int in_child(F body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(KernelOnlyFilter, NothingIsNotifiedWhateverTheGates) {
  auto prog = build_filter(guards_only());
  ASSERT_TRUE(prog.ok()) << prog.error().message;
  for (const Syscall& s : syscall_table())
    for (const FilterClause& c : s.filter) {
      if (c.gate == Gate::Count) continue;
      uint64_t a[6] = {};
      for (const ArgCmp& cmp : c.cmp)
        if (cmp.op == CmpOp::AnyBit || cmp.op == CmpOp::MaskedEq)
          a[cmp.arg] |= cmp.op == CmpOp::AnyBit ? cmp.mask : cmp.value;
      uint32_t v = run(*prog, s.nr, {a[0], a[1], a[2], a[3], a[4], a[5]}) & SECCOMP_RET_ACTION_FULL;
      EXPECT_NE(v, SECCOMP_RET_USER_NOTIF) << s.name;
    }
}

TEST(KernelOnlyFilter, TheGuardsAreRefusedInTheKernelWithTheSupervisorsErrno) {
  auto prog = build_filter(guards_only());
  ASSERT_TRUE(prog.ok()) << prog.error().message;
  EXPECT_EQ(run(*prog, SYS_unshare, {CLONE_NEWNS}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_unshare, {CLONE_NEWUSER | CLONE_NEWPID}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_unshare, {CLONE_NEWUSER}), SECCOMP_RET_ALLOW) << "a bare user namespace";
  EXPECT_EQ(run(*prog, SYS_clone, {CLONE_NEWNET | SIGCHLD}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_clone, {SIGCHLD}), SECCOMP_RET_ALLOW) << "a plain fork";
  EXPECT_EQ(run(*prog, SYS_mount, {0, 0, 0, 0}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_bpf, {0}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_ptrace, {0}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_io_uring_setup, {1, 0}), SECCOMP_RET_ERRNO | ENOSYS);
  // What the table refuses anyway stays refused.
  EXPECT_EQ(run(*prog, SYS_clone3, {0, 0}), SECCOMP_RET_ERRNO | ENOSYS);
  EXPECT_EQ(run(*prog, SYS_openat, {uint64_t(AT_FDCWD), 0, O_WRONLY}), SECCOMP_RET_ALLOW);
  EXPECT_EQ(run(*prog, SYS_unlink, {0}), SECCOMP_RET_ALLOW);
  // socket() is a kernel facility for packet and raw sockets only: every
  // other socket (a test's server on loopback, a DNS lookup) is made.
  EXPECT_EQ(run(*prog, SYS_socket, {AF_PACKET, SOCK_RAW, 0}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_socket, {AF_INET, SOCK_RAW, 1}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_socket, {AF_INET6, SOCK_RAW | SOCK_CLOEXEC, 58}), SECCOMP_RET_ERRNO | EPERM);
  EXPECT_EQ(run(*prog, SYS_socket, {AF_INET, SOCK_STREAM, 0}), SECCOMP_RET_ALLOW);
  EXPECT_EQ(run(*prog, SYS_socket, {AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0}), SECCOMP_RET_ALLOW);
  EXPECT_EQ(run(*prog, SYS_socket, {AF_UNIX, SOCK_STREAM, 0}), SECCOMP_RET_ALLOW);
}

// The kernel fact the mode exists for, and that the filter installs there.
TEST(KernelOnlyFilter, InstallsWhereAListenerIsAlreadyAboveAndRefusesThere) {
  auto listening = build_filter(FilterSpec{});
  auto refusing = build_filter(guards_only());
  ASSERT_TRUE(listening.ok() && refusing.ok());
  int rc = in_child([&]() -> int {
    // A call the inner filter lets through waits on a listener nobody
    // serves: a failure, not a hang.
    alarm(20);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return 10;
    bool killable = false;
    if (install_filter_raw(*listening, &killable) < 0) return 11;  // the outer supervisor's
    if (install_filter_raw(*listening, &killable) >= 0 || errno != EBUSY) return 12;
    if (install_filter_plain(*refusing) != 0) return 13;
    // The listener above never gets these: the inner filter answers first.
    if (syscall(SYS_unshare, CLONE_NEWNS) == 0 || errno != EPERM) return 14;
    if (syscall(SYS_bpf, 0, nullptr, 0) == 0 || errno != EPERM) return 15;
    return 0;
  });
  EXPECT_EQ(rc, 0) << "10 nnp, 11 first listener, 12 a second listener was not refused with EBUSY, "
                      "13 the plain filter, 14 unshare not refused, 15 bpf not refused, 142 a call waited on "
                      "the listener (SIGALRM)";
}

}  // namespace
}  // namespace cb
