// A session without notifications or the eBPF tracer (plan/kernel_only.h)
// learns its processes by looking: every so often the tree below init is
// walked in /proc, new processes are recorded under their parents, and a
// process whose image changed is recorded as having exec'd.  What starts
// and ends between two looks is not seen (the session says so).
#pragma once

#include <sys/types.h>

#include <vector>

#include "procs/procs.h"

namespace cb {

class ProcScan {
 public:
  ProcScan(ProcessTable& procs, pid_t init) : procs_(procs), init_(init) {}

  // How often the supervisor looks.
  static constexpr int kIntervalMs = 100;

  // One look at the whole tree.
  void scan();
  // Waits (briefly) until `pid` has exec'd the command, so that the first
  // look records the command rather than cottonbox's child about to be it.
  static void await_exec(pid_t pid);

 private:
  std::vector<pid_t> children(pid_t pid) const;

  ProcessTable& procs_;
  pid_t init_;
};

}  // namespace cb
