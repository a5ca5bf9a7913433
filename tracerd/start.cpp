#include "tracerd/start.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/fd.h"
#include "trace/tracer_service.h"

namespace cb::tracerd {

namespace {

// Whether a service holds the lock: one runs, or is loading.
bool service_holds_lock() {
  UniqueFd l(open(tracer_lock_path().c_str(), O_RDONLY | O_CLOEXEC));
  if (!l) return false;
  return flock(l.get(), LOCK_SH | LOCK_NB) != 0;
}

}  // namespace

Result<Ok> start_service(int idle_exit_s, int wait_ms) {
  std::string idle = std::to_string(idle_exit_s);
  // Prepared before the fork: the child of a threaded process may only make
  // async-signal-safe calls.
  std::vector<const char*> argv{"cottonbox",  "tracer",     "serve", "--idle-exit",
                                idle.c_str(), "--ready-fd", "3",     nullptr};
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return Error::from_errno("cannot find cottonbox's own executable");
  exe[n] = '\0';
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return Error::from_errno("pipe2");
  UniqueFd ready(p[0]), ready_w(p[1]);
  pid_t pid = fork();
  if (pid < 0) return Error::from_errno("fork");
  if (pid == 0) {
    // Twice, so that the service is nobody's child and no session waits on it.
    setsid();
    if (fork() != 0) _exit(0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(p[1], 3) != 3) _exit(126);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    syscall(SYS_close_range, 4U, ~0U, 0U);
    if (chdir("/") != 0) _exit(126);
    umask(022);
    execv(exe, const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  ready_w.reset();
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  pollfd pf{ready.get(), POLLIN, 0};
  char c = 0;
  if (poll(&pf, 1, wait_ms) > 0 && read(ready.get(), &c, 1) == 1 && c == '1') return Ok{};
  // It ended without serving: another one may be starting (the lock says).
  std::string last = "it exited (`cottonbox tracer serve` says why)";
  for (int waited = 0; waited <= wait_ms && service_holds_lock(); waited += 10) {
    auto s = connect_tracer_service();
    if (s) return Ok{};
    last = s.error().message;
    timespec ts{0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  return Error{ETIMEDOUT, "the tracer service did not start: " + last};
}

}  // namespace cb::tracerd
