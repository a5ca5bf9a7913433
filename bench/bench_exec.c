// bench_exec: run a command N times and print, for each run, its wall time,
// CPU time, exit status and (with --rss) the peak resident memory of the
// process it started, sampled from /proc while it runs.
//
//   bench_exec [--runs N] [--rss] [--timeout S] [--log FILE] [--tag T] -- CMD [ARG...]
//
// One line per run on stdout:
//   run=I wall_us=W user_us=U sys_us=S status=X hwm_kb=K tree_maxrss_kb=M
// status is the exit code, or 128+signal.  hwm_kb is VmHWM of CMD's own
// process (for `cottonbox run`: the supervisor, not the supervised
// command), last sampled every 20 ms, 0 without --rss; self_cpu_ms is that
// process's own user+system time (all its threads, not its children), also
// sampled, in clock ticks: a load-independent measure of the supervisor.  tree_maxrss_kb is
// the largest peak RSS of CMD and every descendant it waited for.
// "{n}" in an argument becomes "T-I" (a fresh name per run, e.g. a database).
//
// The command runs in its own process group with stdin from /dev/null and
// stdout/stderr to --log (default /dev/null).  When it exits, on --timeout
// and on SIGINT/SIGTERM, the whole group is killed so that nothing outlives
// the measurement.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;
static pid_t g_child;

static void on_signal(int sig) {
  g_stop = sig;
  if (g_child > 0) kill(-g_child, SIGKILL);
}

static long long now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static long read_hwm_kb(pid_t pid) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char* p = strstr(buf, "VmHWM:");
  return p ? strtol(p + 6, NULL, 10) : -1;
}

// utime + stime of every thread of the process, in ms (clock ticks).
static long read_cpu_ms(pid_t pid) {
  char path[64], buf[2048];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char* p = strrchr(buf, ')');
  if (!p) return -1;
  unsigned long long ut = 0, st = 0;
  // After ")": state(3) ppid(4) ... utime(14) stime(15).
  if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return -1;
  return (long)((ut + st) * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}

static void usage(void) {
  fprintf(stderr, "usage: bench_exec [--runs N] [--rss] [--timeout S] [--log FILE] [--tag T] -- CMD [ARG...]\n");
  exit(2);
}

int main(int argc, char** argv) {
  int runs = 1, rss = 0;
  double timeout_s = 0;
  const char* log = "/dev/null";
  const char* tag = "run";
  int i = 1;
  for (; i < argc; ++i) {
    if (!strcmp(argv[i], "--")) {
      ++i;
      break;
    }
    if (!strcmp(argv[i], "--rss"))
      rss = 1;
    else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
      timeout_s = atof(argv[++i]);
    else if (!strcmp(argv[i], "--log") && i + 1 < argc)
      log = argv[++i];
    else if (!strcmp(argv[i], "--tag") && i + 1 < argc)
      tag = argv[++i];
    else
      usage();
  }
  if (i >= argc || runs < 1) usage();
  char** cmd = argv + i;
  int ncmd = argc - i;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  int worst = 0;
  for (int r = 1; r <= runs && !g_stop; ++r) {
    // Substitute {n} in the arguments.
    char** args = calloc((size_t)ncmd + 1, sizeof *args);
    for (int a = 0; a < ncmd; ++a) {
      const char* at = strstr(cmd[a], "{n}");
      if (!at) {
        args[a] = cmd[a];
        continue;
      }
      char* s = NULL;
      if (asprintf(&s, "%.*s%s-%d%s", (int)(at - cmd[a]), cmd[a], tag, r, at + 3) < 0) return 1;
      args[a] = s;
    }
    fflush(stdout);
    long long t0 = now_us();
    pid_t pid = fork();
    if (pid < 0) return perror("fork"), 1;
    if (pid == 0) {
      setpgid(0, 0);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      signal(SIGHUP, SIG_DFL);
      int in = open("/dev/null", O_RDONLY);
      int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (in < 0 || out < 0) _exit(126);
      dup2(in, 0);
      dup2(out, 1);
      dup2(out, 2);
      execvp(args[0], args);
      _exit(127);
    }
    setpgid(pid, pid);  // both sides, so the group exists before we might kill it
    g_child = pid;
    long hwm = 0, cpu = 0;
    int status = 0, timed_out = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
      if (pfd >= 0) {
        struct pollfd p = {pfd, POLLIN, 0};
        int wait_ms = rss ? 20 : 1000;
        int n = poll(&p, 1, wait_ms);
        if (n == 0 || (n < 0 && errno == EINTR)) {
          if (rss) {
            long h = read_hwm_kb(pid);
            if (h > hwm) hwm = h;
            long c = read_cpu_ms(pid);
            if (c > cpu) cpu = c;
          }
          if (timeout_s > 0 && now_us() - t0 > (long long)(timeout_s * 1e6) && !timed_out) {
            timed_out = 1;
            kill(-pid, SIGKILL);
          }
          continue;
        }
      }
      if (wait4(pid, &status, 0, &ru) == pid) break;
      if (errno != EINTR) return perror("wait4"), 1;
    }
    long long wall = now_us() - t0;
    if (pfd >= 0) close(pfd);
    g_child = 0;
    kill(-pid, SIGKILL);  // leftovers of the group, if any
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (timed_out) code = 124;
    if (code > worst) worst = code;
    printf("run=%d wall_us=%lld user_us=%lld sys_us=%lld status=%d hwm_kb=%ld self_cpu_ms=%ld tree_maxrss_kb=%ld\n", r,
           wall, (long long)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec,
           (long long)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec, code, hwm, cpu, ru.ru_maxrss);
    for (int a = 0; a < ncmd; ++a)
      if (args[a] != cmd[a]) free(args[a]);
    free(args);
  }
  fflush(stdout);
  if (g_stop) return 128 + g_stop;
  return worst ? 1 : 0;
}
