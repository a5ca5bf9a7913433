// bench_tracer_floor: the bare eBPF tracer floor, the tracer's counterpart of
// bench_notify_floor (issue 5).
//
//   bench_tracer_floor [-v] -- CMD [ARG...]
//
// Attaches bpf/cb_floor.bpf.c's two programs to the raw sys_enter and
// sys_exit tracepoints, runs CMD, detaches, and exits with CMD's status.  The
// programs stop where cottonbox's own stop for a syscall no rule records, and
// nothing is ever recorded: what CMD pays under them is the least any tracer
// on these tracepoints costs every syscall of the host, getppid included.
// With -v, says on stderr whether both programs ran and how long loading,
// attaching and detaching took.
//
// Why not a cheaper attach point: the per-syscall tracepoints
// (syscalls:sys_enter_openat, ...) cost a syscall outside the traced set
// almost nothing, but each is a perf event whose release waits out RCU grace
// periods (about 70 ms apiece on the reference VM, seconds for a tracer's
// set); kprobes, fentry and BPF LSM hooks are not built into every kernel
// (bench/README.md).
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cb_floor.skel.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int quiet_libbpf(enum libbpf_print_level level, const char* fmt, va_list ap) {
  return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char** argv) {
  int verbose = 0, i = 1;
  for (; i < argc && strcmp(argv[i], "-v") == 0; ++i) verbose = 1;
  if (i + 1 >= argc || strcmp(argv[i], "--") != 0) {
    fprintf(stderr, "usage: bench_tracer_floor [-v] -- CMD [ARG...]\n");
    return 125;
  }
  char** cmd = argv + i + 1;

  libbpf_set_print(quiet_libbpf);
  double t0 = now_ms();
  struct cb_floor_bpf* skel = cb_floor_bpf__open_and_load();
  if (!skel) {
    fprintf(stderr, "bench_tracer_floor: cannot load the programs: %s\n", strerror(errno));
    return 125;
  }
  if (cb_floor_bpf__attach(skel) != 0) {
    fprintf(stderr, "bench_tracer_floor: cannot attach to raw_syscalls: %s\n", strerror(errno));
    cb_floor_bpf__destroy(skel);
    return 125;
  }

  double t1 = now_ms();
  // Forked before this process ignores the terminal's signals, so the
  // command keeps their default dispositions; libbpf's fds are close-on-exec.
  pid_t pid = fork();
  if (pid < 0) {
    perror("bench_tracer_floor: fork");
    cb_floor_bpf__destroy(skel);
    return 125;
  }
  if (pid == 0) {
    execvp(cmd[0], cmd);
    fprintf(stderr, "bench_tracer_floor: cannot run %s: %s\n", cmd[0], strerror(errno));
    _exit(127);
  }
  // Like a shell: the terminal's signals reach the command, which decides.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      perror("bench_tracer_floor: waitpid");
      status = 125 << 8;
      break;
    }
  }
  int enter_ran = skel->bss->enter_ran, exit_ran = skel->bss->exit_ran;
  double t2 = now_ms();
  cb_floor_bpf__destroy(skel);
  if (verbose)
    fprintf(stderr,
            "bench_tracer_floor: sys_enter program %s, sys_exit program %s; "
            "load and attach %.2f ms, detach %.2f ms\n",
            enter_ran ? "ran" : "never ran", exit_ran ? "ran" : "never ran", t1 - t0, now_ms() - t2);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
