// Starting the command under supervision.
//
//   supervisor ── clone(NEWPID|NEWNS[|NEWUSER]) ──> init (pid 1 of the session)
//                                                     │  private mounts: the kernel layers
//                                                     └─ fork ─> command: Landlock, no_new_privs,
//                                                                seccomp filter, listener taken
//                                                                by the supervisor, exec
//
// init reaps every process of the session (orphans included) and reports the
// command's status; the session ends when init has no process left.  init
// dies with the supervisor (PDEATHSIG), and with it every process of its pid
// namespace: a supervisor that is gone leaves nothing running unsupervised.
//
// Everything the children do between clone and exec is precomputed here, in
// the parent: they only make system calls (the supervisor may have threads,
// so a child must not touch malloc or locks).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "host/inherited.h"
#include "launch/filter.h"
#include "plan/plan.h"

namespace cb {

struct LaunchSpec {
  std::vector<std::string> argv;
  std::string cwd;
  bool new_userns = false;  // unprivileged: needed for the pid and mount namespaces
  bool new_pidns = true;
  bool new_mountns = true;
  std::vector<MountOp> mounts;
  // Landlock: scope signals (and keep ptrace) inside the session's domain.
  int landlock_abi = 0;  // 0: no Landlock
  FilterProgram filter;
  bool drop_caps = false;  // userns: the command must not keep init's capabilities
  // Root's command enters a user namespace and a mount namespace of its own
  // (ids mapped to themselves) before it runs: the mounts it gets are copies
  // the kernel locks (PlanInput::locked_mounts).
  bool locked_mounts = false;
  // The filter notifies, and its listener goes to the supervisor.  False
  // where none can be had (host/nesting.h): the filter only refuses.
  bool listener = true;
};

// What init reports about the mount layer.
struct MountFailure {
  size_t op = 0;
  int err = 0;
};

struct Launched {
  pid_t init_pid = -1;     // in the supervisor's pid namespace
  pid_t command_pid = -1;  // in the supervisor's pid namespace
  UniqueFd listener;       // seccomp user-notification listener (none: LaunchSpec::listener false)
  UniqueFd ctl;            // init's control channel (exit reports)
  UniqueFd init_pidfd;
  bool killable_recv = false;
  int landlock_abi_applied = 0;
};

// Records the fds cottonbox inherited (kept for the command) and reserves a
// low fd number for init's control channel; call first in main().
//
// Why the reservation: when a process dies the kernel closes its fds in
// number order, and detaching the eBPF tracer's tracepoints takes seconds.
// With the control channel below them, init sees the hang-up first and
// ends the session at once.
void record_inherited_fds();
// Whether a command could enter a user namespace of its own with every id
// mapped to itself (LaunchSpec::locked_mounts): tried in a child, since an
// enclosing sandbox or session may refuse it.  0, or the errno.
int try_locked_mounts();
// The files, directories and block devices among the descriptors the
// command inherits (stdin/out/err included): see host/inherited.h.
std::vector<InheritedFile> inherited_files();

// Stage 1: clone init and let it build the mount layer.  On a mount failure
// init exits and the failure is returned so the caller can fall back.
struct LaunchError {
  Error error;
  std::vector<MountFailure> mount_failures;
};

class Launcher {
 public:
  explicit Launcher(LaunchSpec spec);
  ~Launcher();

  // Clones init, maps ids, waits for the mounts.  After this, init_pid() is
  // known (the eBPF tracer seeds its pid map with it before start()).
  Result<Ok> prepare(std::vector<MountFailure>* failures);
  pid_t init_pid() const { return init_pid_; }
  // Lets init fork the command; returns once the listener has arrived.
  Result<Launched> start();
  // Kills init (and so every process of its namespace).
  void kill_all();

 private:
  LaunchSpec spec_;
  std::vector<char*> argv_;
  pid_t init_pid_ = -1;
  UniqueFd ctl_;
  UniqueFd pidfd_;
};

// Messages on the control channel (SOCK_SEQPACKET).
enum class CtlType : uint32_t {
  Mapped = 1,       // supervisor -> init: id maps written
  MountFailed = 2,  // init -> supervisor: a = op index, b = errno
  Ready = 3,        // init -> supervisor: mounts done
  Go = 4,           // supervisor -> init: fork the command
  Listener = 5,     // command -> supervisor: a = killable, b = landlock abi, c = listener fd (or -1), d = ack eventfd
  ExecFailed = 6,   // command -> supervisor: a = errno, b = stage (0 exec, 1 setup)
  Exited = 7,       // init -> supervisor: a = wait status of the command
  Done = 8,         // init -> supervisor: no process left
  Kill = 9,         // supervisor -> init: kill everything
  Orphan = 10,      // init -> supervisor: a = ns pid reaped, b = wait status
};

struct CtlMsg {
  CtlType type;
  int32_t a = 0;
  int32_t b = 0;
  int32_t c = 0;
  int32_t d = 0;
};

}  // namespace cb
