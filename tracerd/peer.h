// Who may register which process with the tracer service: the checks the
// service makes before it records a process tree for a caller.
//
// The caller is known by its socket's credentials (SO_PEERCRED, taken by
// the kernel at connect), the process by the pidfd it sent.  The process
// must be a direct child of the caller (so a caller can only have recorded
// what it started itself), run by the caller's uid unless the caller is
// root, alive, and neither it nor the caller may be recorded already (a
// process of a session could otherwise move itself out of its session's
// recording).  The caller's pid namespace is what the records' pids are
// numbered in.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include "base/result.h"
#include "trace/ebpf_programs.h"

namespace cb::tracerd {

struct Admitted {
  pid_t pid = 0;           // the process, in the service's pid namespace
  PidNamespace reader_ns;  // the caller's pid namespace
};

// `own_level`: the level of the service's own pid namespace.  Refusals are
// errors with EPERM, ESRCH, EALREADY or EINVAL and a message for the caller.
// `peer_pidfd`: the caller's pidfd from SO_PEERPIDFD, or -1 where the
// kernel has none.
Result<Admitted> admit(const ucred& peer, int peer_pidfd, int pidfd, uint32_t own_level, const EbpfPrograms& progs);
// SO_PEERPIDFD, which older headers lack.
constexpr int kSoPeerPidfd = 77;

}  // namespace cb::tracerd
