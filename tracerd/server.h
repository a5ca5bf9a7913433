// `cottonbox tracer serve`: the resident eBPF tracer.  Loads the programs
// once and serves every session on the host from that one load, each
// session through a slot with its own ring buffer (trace/ebpf_programs.h),
// so that what a syscall outside every session pays does not grow with
// their number, and a plain user's session is recorded without the user
// holding any privilege.  The socket and the protocol are in
// trace/tracer_service.h; who may register what, in tracerd/peer.h.
#pragma once

#include <ostream>
#include <string>

namespace cb::tracerd {

struct ServeOptions {
  std::string socket;   // empty: tracer_socket_path()
  int idle_exit_s = 5;  // exit this long after the last session left
  bool keep = false;    // never exit for want of sessions
  int ready_fd = -1;    // written to ("1") and closed once the socket answers
};

// Runs until SIGTERM/SIGINT, or idle; the exit status (125: cannot serve).
int serve(const ServeOptions& o, std::ostream& log);

// `cottonbox tracer status`: whether the service runs, its sessions and
// programs.  0 when it answers, 1 when none does.
int print_status(const std::string& socket, bool json, std::ostream& out);

}  // namespace cb::tracerd
