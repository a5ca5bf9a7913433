// Internal to host/: running a probe where its effects (a filter, a
// namespace) cannot outlive it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace cb {

// Runs `probe` in a forked child that may only make system calls, and
// returns its exit status (or -1 if it did not exit normally).
template <typename F>
int in_child(F probe) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(probe());
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace cb
