// trace-lab: eBPF tracing, bare (docs/labs/2-ebpf-tracing.md).
//
//   trace-lab [--tp] [--ring-pages N] [--stall-ms MS] [--cost] [-q|-v] -- CMD [ARG...]
//
// Loads trace_lab.bpf.c, runs CMD, and prints what CMD and its children
// deleted (unlink, unlinkat) and opened for writing, as the records arrive
// from the ring buffer: after each call has returned.  Nothing is stopped.
//   --tp            attach to the syscalls:sys_{enter,exit}_<name> tracepoints
//                   instead of the raw sys_enter/sys_exit ones
//   --ring-pages N  the ring buffer's size in 4 KiB pages (a power of two; 64)
//   --stall-ms MS   wait MS before reading the first record, as a reader busy
//                   elsewhere (a database write) would
//   --cost          time a getppid of trace-lab's own (a process outside the
//                   traced tree) before and after attaching
//   -q              print only the summary
//   -v              also say how long loading, attaching and detaching took
// Exits with CMD's status.  Needs root (CAP_BPF and CAP_PERFMON).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "trace_lab.h"
#include "trace_lab.skel.h"

static int quiet, verbose;

static __u64 now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);  // the clock of bpf_ktime_get_ns()
  return (__u64)t.tv_sec * 1000000000ull + (__u64)t.tv_nsec;
}

static int libbpf_warnings_only(enum libbpf_print_level level, const char* fmt, va_list ap) {
  return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

// Called by ring_buffer__poll() for each record, in the order the kernel
// committed them (one buffer for all CPUs keeps that order).
static int on_record(void* ctx, void* data, size_t size) {
  (void)ctx;
  const struct record* r = data;
  if (quiet || size < sizeof *r) return 0;
  double late_us = (double)(now_ns() - r->ts_exit) / 1e3;
  char call[TRACE_LAB_PATH_MAX + 96], dfd[16], result[48], now[64] = "";
  snprintf(dfd, sizeof dfd, "%d", r->dirfd);
  const char* d = r->dirfd == -100 ? "AT_FDCWD" : dfd;
  if (r->nr == 87)
    snprintf(call, sizeof call, "unlink(\"%s\")", r->path);
  else if (r->nr == 263)
    snprintf(call, sizeof call, "unlinkat(%s, \"%s\", %s)", d, r->path, r->flags & 0x200 ? "AT_REMOVEDIR" : "0");
  else
    snprintf(call, sizeof call, "openat(%s, \"%s\", %s%s%s)", d, r->path,
             (r->flags & 3) == O_WRONLY ? "O_WRONLY"
             : (r->flags & 3) == O_RDWR ? "O_RDWR"
                                        : "O_RDONLY",
             r->flags & O_CREAT ? "|O_CREAT" : "", r->flags & O_TRUNC ? "|O_TRUNC" : "");
  if (r->ret < 0)
    snprintf(result, sizeof result, "-1 %s", strerrorname_np((int)-r->ret));
  else
    snprintf(result, sizeof result, "%lld", (long long)r->ret);
  // Where the name stands now, looked up from trace-lab's directory (CMD's
  // starting one), so only for names relative to the cwd or absolute.
  struct stat st;
  if (r->path[0] && (r->dirfd == -100 || r->path[0] == '/'))
    snprintf(now, sizeof now, "; now %s", fstatat(AT_FDCWD, r->path, &st, AT_SYMLINK_NOFOLLOW) ? "absent" : "present");
  fprintf(stderr, "trace-lab: pid %u %s %s = %s, recorded %.0f us after it returned%s\n", r->pid, r->comm, call, result,
          late_us, now);
  return 0;
}

// The cost of one getppid, a call no program here records: the best of 5
// batches of 200,000 (the least disturbed by other work on the machine).
static double getppid_ns(void) {
  double best = 1e18;
  for (int b = 0; b < 5; ++b) {
    __u64 t = now_ns();
    for (int k = 0; k < 200000; ++k) syscall(SYS_getppid);
    double ns = (double)(now_ns() - t) / 200000;
    if (ns < best) best = ns;
  }
  return best;
}

// libbpf finds a tracepoint's id in tracefs.  Debian's systemd mounts it at
// /sys/kernel/tracing; where nothing did, mount one in a mount namespace of
// our own, which no other process sees (CMD is forked already and stays out).
static int ensure_tracefs(void) {
  if (access("/sys/kernel/tracing/events/syscalls", F_OK) == 0 ||
      access("/sys/kernel/debug/tracing/events/syscalls", F_OK) == 0)
    return 0;
  if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
      mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
    return -1;
  return 0;
}

int main(int argc, char** argv) {
  int tp = 0, cost = 0, i = 1;
  long pages = 64, stall_ms = 0;
  for (; i < argc && strcmp(argv[i], "--"); ++i) {
    if (!strcmp(argv[i], "--tp"))
      tp = 1;
    else if (!strcmp(argv[i], "--ring-pages") && i + 1 < argc)
      pages = atol(argv[++i]);
    else if (!strcmp(argv[i], "--stall-ms") && i + 1 < argc)
      stall_ms = atol(argv[++i]);
    else if (!strcmp(argv[i], "--cost"))
      cost = 1;
    else if (!strcmp(argv[i], "-q"))
      quiet = 1;
    else if (!strcmp(argv[i], "-v"))
      verbose = 1;
    else
      break;
  }
  if (i + 1 >= argc || strcmp(argv[i], "--") || pages <= 0 || (pages & (pages - 1))) {
    fprintf(
        stderr,
        "usage: trace-lab [--tp] [--ring-pages N (a power of two)] [--stall-ms MS] [--cost] [-q|-v] -- CMD [ARG...]\n");
    return 125;
  }
  char** cmd = argv + i + 1;

  // CMD is forked first and waits on a pipe: its pid must be in the map
  // before it runs, or its first calls (and children) would be missed.
  int go[2];
  if (pipe2(go, O_CLOEXEC)) return perror("trace-lab: pipe"), 125;
  pid_t pid = fork();
  if (pid < 0) return perror("trace-lab: fork"), 125;
  if (pid == 0) {
    char c;
    close(go[1]);
    if (read(go[0], &c, 1) != 1) _exit(125);  // trace-lab failed: run nothing untraced
    execvp(cmd[0], cmd);
    fprintf(stderr, "trace-lab: %s: %s\n", cmd[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  close(go[0]);

  libbpf_set_print(libbpf_warnings_only);
  if (tp && ensure_tracefs()) fprintf(stderr, "trace-lab: no tracefs, and mounting one failed: %s\n", strerror(errno));
  __u64 t0 = now_ns();
  struct trace_lab_bpf* skel = trace_lab_bpf__open();
  if (!skel) return perror("trace-lab: open"), 125;
  bpf_map__set_max_entries(skel->maps.records, (__u32)(pages * 4096));
  // Both sets of programs are in the object; load only the chosen one.
  struct bpf_program* raw[] = {skel->progs.raw_enter, skel->progs.raw_exit};
  struct bpf_program* per[] = {skel->progs.tp_enter_unlink, skel->progs.tp_enter_unlinkat, skel->progs.tp_enter_openat,
                               skel->progs.tp_exit_unlink,  skel->progs.tp_exit_unlinkat,  skel->progs.tp_exit_openat};
  for (int k = 0; k < 2; ++k) bpf_program__set_autoload(raw[k], !tp);
  for (int k = 0; k < 6; ++k) bpf_program__set_autoload(per[k], tp);
  // Loading runs the verifier over each program and applies the CO-RE
  // relocations against this kernel's BTF; attaching makes them run.
  int err = trace_lab_bpf__load(skel);
  __u64 t1 = now_ns();
  double before = !err && cost ? getppid_ns() : 0;
  __u64 t2 = now_ns();
  if (!err) err = trace_lab_bpf__attach(skel);
  __u64 t3 = now_ns();
  if (err) {
    fprintf(stderr, "trace-lab: cannot load or attach the programs: %s\n", strerror(-err));
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    trace_lab_bpf__destroy(skel);
    return 125;
  }
  __u32 key = (__u32)pid;
  __u8 one = 1;
  bpf_map__update_elem(skel->maps.tracked, &key, sizeof key, &one, sizeof one, BPF_ANY);
  struct ring_buffer* rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, NULL, NULL);
  if (!rb) return perror("trace-lab: ring buffer"), 125;
  fprintf(stderr, "trace-lab: attached to %s; ring buffer %ld KiB\n",
          tp ? "syscalls:sys_{enter,exit}_{unlink,unlinkat,openat}" : "raw_syscalls sys_enter and sys_exit", pages * 4);

  if (cost)
    fprintf(stderr, "trace-lab: a getppid outside the traced tree: %.0f ns before attaching, %.0f ns attached\n",
            before, getppid_ns());

  if (write(go[1], "g", 1) != 1) return perror("trace-lab: release"), 125;
  close(go[1]);
  if (stall_ms) usleep((useconds_t)stall_ms * 1000);
  int status = 0;
  for (;;) {
    ring_buffer__poll(rb, 50);  // sleeps until a record comes, or 50 ms
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
  }
  ring_buffer__consume(rb);  // what was committed before CMD ended
  unsigned long long sent = skel->bss->sent;
  fprintf(stderr, "trace-lab: %llu record%s", sent, sent == 1 ? "" : "s");
  if (skel->bss->dropped)
    fprintf(stderr, ", %llu dropped: the ring buffer was full\n", (unsigned long long)skel->bss->dropped);
  else
    fprintf(stderr, ", none dropped\n");
  ring_buffer__free(rb);
  __u64 t4 = now_ns();
  trace_lab_bpf__destroy(skel);
  if (verbose)
    fprintf(stderr, "trace-lab: open and load %.1f ms, attach %.1f ms, detach %.1f ms\n", (double)(t1 - t0) / 1e6,
            (double)(t3 - t2) / 1e6, (double)(now_ns() - t4) / 1e6);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
