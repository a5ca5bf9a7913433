#include "tests/support/host_features.h"

#include <linux/bpf.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

namespace cb::test {
namespace {

HostFeature yes() { return HostFeature{true, ""}; }
HostFeature no(std::string why) { return HostFeature{false, std::move(why)}; }

// Runs `probe` in a child and returns its wait status: a probe that can
// crash the process (a gate that faults) must not take the test with it.
int in_child(const std::function<int()>& probe) {
  pid_t pid = fork();
  if (pid == 0) {
    // No core file for a probe that faults on purpose.
    signal(SIGSEGV, SIG_DFL);
    _exit(probe());
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return st;
}

std::string status_words(int st) {
  if (WIFSIGNALED(st)) return std::string("died with SIG") + sigabbrev_np(WTERMSIG(st));
  return "exited " + std::to_string(WEXITSTATUS(st));
}

}  // namespace

const HostFeature& int80_syscalls() {
  static const HostFeature f = [] {
#if defined(__x86_64__)
    int st = in_child([] {
      long r;
      // i386 getpid is 20.
      __asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
      return r == getpid() ? 0 : 1;
    });
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return yes();
    return no("`int $0x80` does not reach a syscall on this host: a native i386 getpid through it " + status_words(st) +
              " before any syscall was made");
#else
    return no("not an x86_64 host");
#endif
  }();
  return f;
}

const HostFeature& x32_syscalls() {
  static const HostFeature f = [] {
#if defined(__x86_64__)
    int st = in_child([] {
      long r = syscall(39 /* getpid */ | 0x40000000);
      if (r == getpid()) return 0;
      return errno == ENOSYS ? 2 : 1;
    });
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return yes();
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2) return no("the kernel has no x32 ABI (a native x32 getpid: ENOSYS)");
    return no("a native x32 getpid " + status_words(st));
#else
    return no("not an x86_64 host");
#endif
  }();
  return f;
}

const HostFeature& io_uring() {
  static const HostFeature f = [] {
    char params[120] = {};
    long fd = syscall(SYS_io_uring_setup, 4, params);
    if (fd >= 0) {
      close(static_cast<int>(fd));
      return yes();
    }
    return no(std::string("a native io_uring_setup failed: ") + strerror(errno));
  }();
  return f;
}

HostFeature landlock(int min_abi) {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 0) return no(std::string("Landlock is not enabled: ") + strerror(errno));
  if (abi < min_abi) return no("Landlock ABI " + std::to_string(abi) + ", this needs " + std::to_string(min_abi));
  return yes();
}

const HostFeature& user_namespaces() {
  static const HostFeature f = [] {
    int st = in_child([] {
      if (geteuid() == 0) {
        // Probe as an unprivileged user would: root may always make one.
        if (setgid(65534) || setuid(65534)) return 3;
      }
      if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) return 1;
      return 0;
    });
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return yes();
    if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
      return no("an unprivileged unshare(CLONE_NEWUSER|CLONE_NEWNS) is refused on this host");
    return no("the user-namespace probe " + status_words(st));
  }();
  return f;
}

const HostFeature& bpf_programs() {
  static const HostFeature f = [] {
    // The smallest program: return 0, as a socket filter.
    bpf_insn insns[2] = {};
    insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
    insns[0].dst_reg = BPF_REG_0;
    insns[1].code = BPF_JMP | BPF_EXIT;
    char license[] = "GPL";
    bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
    a.insn_cnt = 2;
    a.insns = reinterpret_cast<uint64_t>(insns);
    a.license = reinterpret_cast<uint64_t>(license);
    long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
    if (fd < 0) return no(std::string("loading a BPF program failed: ") + strerror(errno));
    close(static_cast<int>(fd));
    if (geteuid() != 0) return no("not root: the tracer's programs need CAP_BPF and CAP_PERFMON");
    return yes();
  }();
  return f;
}

const HostFeature& root() {
  static const HostFeature f = geteuid() == 0 ? yes() : no("not root");
  return f;
}

}  // namespace cb::test
