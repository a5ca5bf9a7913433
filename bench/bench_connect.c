// bench_connect: a connect-heavy workload on loopback, the network's
// counterpart of bench_syscalls: many short HTTP requests, each over a new
// TCP connection, so that every request costs one connect(2) that a
// supervisor with host rules decides.
//
//   bench_connect serve [--port-file F] [--idle S] [--max N]
//       listens on 127.0.0.1 (an ephemeral port, written to F or stdout),
//       and answers each connection with a fixed HTTP/1.0 response, then
//       closes it.  One thread, blocking accept.  Stops by itself after S
//       seconds without a connection (default 60) or N connections
//       (default 10,000,000), and on SIGTERM/SIGINT.
//   bench_connect get --port P [--requests N] [--batches B] [--nonblocking]
//       N requests (default 10,000) in B batches (default 5): socket,
//       connect to 127.0.0.1:P, send a GET, read the response to its end,
//       close.  Prints one line:
//         op=connect ns=MEDIAN min_ns=MIN max_ns=MAX requests=N
//       (op=connect-nb with --nonblocking) the wall time per request, as the
//       median of the batches.
//   --unix PATH (both sides) does the same over a unix socket bound to PATH
//   (op=connect-unix): a connect to a unix socket is where a supervisor
//   asks who serves it (net.server).  Exits 1 if any request failed or got
//       another response.  --nonblocking connects as event loops do (curl,
//       node, Go): O_NONBLOCK, then poll until writable and SO_ERROR; the
//       rest of the request is the same.
//
// C rather than python3 on both sides: a request costs ~20-30 µs natively,
// and an interpreter's own cost per request would hide the supervisor's.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char kRequest[] = "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
static const char kResponse[] = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n";

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static int serve(const char* port_file, int idle_s, long max_conns, const char* unix_path) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;  // no SA_RESTART: accept returns EINTR
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  int s = socket(unix_path ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return perror("bench_connect: socket"), 1;
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct sockaddr_un u = {.sun_family = AF_UNIX};
  if (unix_path) {
    snprintf(u.sun_path, sizeof u.sun_path, "%s", unix_path);
    unlink(unix_path);
    if (bind(s, (struct sockaddr*)&u, sizeof u) || listen(s, 512)) return perror("bench_connect: bind/listen"), 1;
  } else if (bind(s, (struct sockaddr*)&a, sizeof a) || listen(s, 512)) {
    return perror("bench_connect: bind/listen"), 1;
  }
  socklen_t len = sizeof a;
  if (!unix_path) getsockname(s, (struct sockaddr*)&a, &len);
  FILE* f = port_file ? fopen(port_file, "w") : stdout;
  if (!f) return perror("bench_connect: port file"), 1;
  fprintf(f, "%d\n", ntohs(a.sin_port));
  if (port_file)
    fclose(f);
  else
    fflush(stdout);
  char buf[1024];
  long served = 0;
  while (!g_stop && served < max_conns) {
    struct pollfd p = {s, POLLIN, 0};
    int r = poll(&p, 1, idle_s * 1000);
    if (r == 0) break;  // idle: the bench is over or gone
    if (r < 0) continue;
    int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) continue;
    // The request fits in one segment on loopback; read until its blank line.
    size_t got = 0;
    for (;;) {
      ssize_t n = read(c, buf + got, sizeof buf - 1 - got);
      if (n <= 0) break;
      got += (size_t)n;
      buf[got] = 0;
      if (strstr(buf, "\r\n\r\n") || got >= sizeof buf - 1) break;
    }
    if (write(c, kResponse, sizeof kResponse - 1) < 0) {
    }
    close(c);
    ++served;
  }
  close(s);
  fprintf(stderr, "bench_connect: served %ld connections\n", served);
  return 0;
}

// connect(2) without waiting in the call: EINPROGRESS, then poll.
static int connect_nonblocking(int c, const struct sockaddr* to, socklen_t to_len) {
  if (fcntl(c, F_SETFL, O_NONBLOCK)) return -1;
  if (connect(c, to, to_len) != 0) {
    if (errno != EINPROGRESS) return -1;
    struct pollfd p = {c, POLLOUT, 0};
    if (poll(&p, 1, 5000) != 1) return -1;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len) || err) return -1;
  }
  return fcntl(c, F_SETFL, 0);  // the request itself as in the blocking case
}

// One request over a new connection; 0 when the whole response came back.
static int request(const struct sockaddr* to, socklen_t to_len, int nonblocking) {
  int c = socket(to->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c < 0) return -1;
  int rc = -1;
  int connected = nonblocking ? connect_nonblocking(c, to, to_len) : connect(c, to, to_len);
  if (connected == 0 && write(c, kRequest, sizeof kRequest - 1) == (ssize_t)(sizeof kRequest - 1)) {
    char buf[256];
    size_t got = 0;
    for (;;) {
      ssize_t n = read(c, buf + got, sizeof buf - got);
      if (n <= 0) break;
      got += (size_t)n;
      if (got == sizeof buf) break;
    }
    rc = got == sizeof kResponse - 1 && memcmp(buf, kResponse, got) == 0 ? 0 : -1;
  }
  close(c);
  return rc;
}

static int get(int port, const char* unix_path, long requests, int batches, int nonblocking) {
  struct sockaddr_in to = {
      .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  struct sockaddr_un u = {.sun_family = AF_UNIX};
  if (unix_path) snprintf(u.sun_path, sizeof u.sun_path, "%s", unix_path);
  const struct sockaddr* addr = unix_path ? (const struct sockaddr*)&u : (const struct sockaddr*)&to;
  socklen_t addr_len = unix_path ? (socklen_t)sizeof u : (socklen_t)sizeof to;
  if (batches < 1) batches = 1;
  long per = requests / batches;
  if (per < 1) per = 1;
  double samples[64];
  if (batches > 64) batches = 64;
  long failed = 0;
  for (int b = 0; b < batches; ++b) {
    double t0 = now_ns();
    for (long i = 0; i < per; ++i)
      if (request(addr, addr_len, nonblocking)) ++failed;
    samples[b] = (now_ns() - t0) / (double)per;
  }
  qsort(samples, (size_t)batches, sizeof samples[0], cmp_double);
  printf("op=%s%s ns=%.1f min_ns=%.1f max_ns=%.1f requests=%ld\n", nonblocking ? "connect-nb" : "connect",
         unix_path ? "-unix" : "", samples[batches / 2], samples[0], samples[batches - 1], per * batches);
  if (failed) fprintf(stderr, "bench_connect: %ld of %ld requests failed\n", failed, per * batches);
  return failed ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && !strcmp(argv[1], "serve")) {
    const char* port_file = NULL;
    const char* unix_path = NULL;
    int idle = 60;
    long max = 10000000;
    for (int i = 2; i + 1 < argc; i += 2) {
      if (!strcmp(argv[i], "--port-file"))
        port_file = argv[i + 1];
      else if (!strcmp(argv[i], "--idle"))
        idle = atoi(argv[i + 1]);
      else if (!strcmp(argv[i], "--max"))
        max = atol(argv[i + 1]);
      else if (!strcmp(argv[i], "--unix"))
        unix_path = argv[i + 1];
    }
    return serve(port_file, idle > 0 ? idle : 1, max, unix_path);
  }
  if (argc >= 2 && !strcmp(argv[1], "get")) {
    int port = 0, batches = 5, nonblocking = 0;
    const char* unix_path = NULL;
    long requests = 10000;
    for (int i = 2; i < argc; ++i) {
      if (!strcmp(argv[i], "--nonblocking"))
        nonblocking = 1;
      else if (i + 1 >= argc)
        break;
      else if (!strcmp(argv[i], "--port"))
        port = atoi(argv[++i]);
      else if (!strcmp(argv[i], "--requests"))
        requests = atol(argv[++i]);
      else if (!strcmp(argv[i], "--batches"))
        batches = atoi(argv[++i]);
      else if (!strcmp(argv[i], "--unix"))
        unix_path = argv[++i];
    }
    if (port > 0 || unix_path) return get(port, unix_path, requests, batches, nonblocking);
  }
  fprintf(stderr,
          "usage: bench_connect serve [--port-file F] [--idle S] [--max N] [--unix PATH]\n"
          "       bench_connect get --port P|--unix PATH [--requests N] [--batches B] [--nonblocking]\n");
  return 2;
}
