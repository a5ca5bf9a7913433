// bench_syscalls: the cost of single system calls, to compare natively and
// under a supervisor (run it as `X -- bench_syscalls DIR`).
//
//   bench_syscalls [--iters N] [--batches B] [--cpu] DIR
//
// Each operation runs in B batches (default 7) and the median batch is
// printed as the cost per call:
//   getppid      syscall(SYS_getppid): never decided by any rule
//   read-open    openat(O_RDONLY) + close of an existing file
//   write-open   openat(O_WRONLY|O_CREAT) + close of an existing file
//   unlink       unlink of a file created (untimed) before the batch
// One line per operation:  op=NAME ns=MEDIAN min_ns=MIN max_ns=MAX iters=N
// The files live in DIR/bench_syscalls.PID, which is removed at the end.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// --cpu: the thread's own CPU time (the syscalls and whatever the kernel
// runs on their behalf, tracer programs included) instead of the wall
// clock, which on a machine others keep busy also counts their turns.
static clockid_t g_clock = CLOCK_MONOTONIC;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(g_clock, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void die(const char* what, const char* path) {
  fprintf(stderr, "bench_syscalls: %s %s: %s\n", what, path ? path : "", strerror(errno));
  exit(1);
}

static char g_dir[4096];

static void make_files(int n) {
  char p[4200];
  for (int i = 0; i < n; ++i) {
    snprintf(p, sizeof p, "%s/u%d", g_dir, i);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die("create", p);
    close(fd);
  }
}

// Returns ns per call of one batch of `op`.
static double batch(const char* op, long iters, const char* file) {
  double t0, t1;
  if (!strcmp(op, "getppid")) {
    t0 = now_ns();
    for (long i = 0; i < iters; ++i) syscall(SYS_getppid);
    t1 = now_ns();
  } else if (!strcmp(op, "read-open") || !strcmp(op, "write-open")) {
    int flags = op[0] == 'r' ? O_RDONLY : O_WRONLY | O_CREAT;
    t0 = now_ns();
    for (long i = 0; i < iters; ++i) {
      int fd = openat(AT_FDCWD, file, flags | O_CLOEXEC, 0644);
      if (fd < 0) die(op, file);
      close(fd);
    }
    t1 = now_ns();
  } else {  // unlink
    make_files((int)iters);
    char p[4200];
    t0 = now_ns();
    for (long i = 0; i < iters; ++i) {
      snprintf(p, sizeof p, "%s/u%ld", g_dir, i);
      if (unlink(p) != 0) die("unlink", p);
    }
    t1 = now_ns();
    // snprintf is inside the timed loop: take its cost out again.
    double s0 = now_ns();
    for (long i = 0; i < iters; ++i) snprintf(p, sizeof p, "%s/u%ld", g_dir, i);
    double s1 = now_ns();
    t1 -= s1 - s0;
  }
  return (t1 - t0) / (double)iters;
}

int main(int argc, char** argv) {
  long iters = 20000;
  int batches = 7;
  const char* dir = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atol(argv[++i]);
    else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
      batches = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cpu"))
      g_clock = CLOCK_THREAD_CPUTIME_ID;
    else if (argv[i][0] != '-' && !dir)
      dir = argv[i];
    else {
      fprintf(stderr, "usage: bench_syscalls [--iters N] [--batches B] [--cpu] DIR\n");
      return 2;
    }
  }
  if (!dir || iters < 1 || batches < 1 || batches > 1000) {
    fprintf(stderr, "usage: bench_syscalls [--iters N] [--batches B] [--cpu] DIR\n");
    return 2;
  }
  snprintf(g_dir, sizeof g_dir, "%s/bench_syscalls.%d", dir, (int)getpid());
  if (mkdir(g_dir, 0755) != 0) die("mkdir", g_dir);
  char file[4200];
  snprintf(file, sizeof file, "%s/existing", g_dir);
  int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("create", file);
  close(fd);

  struct {
    const char* name;
    long iters;
  } ops[] = {
      {"getppid", iters * 10}, {"read-open", iters}, {"write-open", iters}, {"unlink", iters / 4 ? iters / 4 : 1}};
  double samples[1000];
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
    batch(ops[o].name, ops[o].iters / 10 ? ops[o].iters / 10 : 1, file);  // warm-up
    for (int b = 0; b < batches; ++b) samples[b] = batch(ops[o].name, ops[o].iters, file);
    qsort(samples, (size_t)batches, sizeof samples[0], cmp_double);
    printf("op=%s ns=%.1f min_ns=%.1f max_ns=%.1f iters=%ld\n", ops[o].name, samples[batches / 2], samples[0],
           samples[batches - 1], ops[o].iters);
    fflush(stdout);
  }
  unlink(file);
  if (rmdir(g_dir) != 0) die("rmdir", g_dir);
  return 0;
}
