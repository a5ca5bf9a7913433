// The resident tracer's socket and what goes over it (the service is
// tracerd/; sessions reach it through EbpfTracer::connect_service).
//
// A session's supervisor connects and sends Register with its session's
// init as a pidfd (SCM_RIGHTS).  The service checks the peer's credentials
// (SO_PEERCRED): the pidfd's process must be a direct child of the peer,
// run by the peer's uid (or the peer is root), and not registered already.
// It then answers with the slot's ring buffer and loss counters as fds and
// the ring's size; the session reads them through their mappings alone
// (trace/ring_reader.h).  The slot lives as long as the connection: when it
// closes, the slot's processes are let go and its maps dropped; when the
// service goes, the session sees the connection's end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/fd.h"
#include "base/result.h"

namespace cb {

// The one place that names the service's socket: beside the cut-down BTF
// (trace/core_btf.h), in a directory every session hides from its
// processes.  COTTONBOX_TRACER_SOCKET names another (tests).
std::string tracer_socket_path();
// Held (flock) by the service of `socket`, so that two never serve at once.
std::string tracer_lock_path(const std::string& socket = tracer_socket_path());

constexpr uint32_t kTracerdMagic = 0x63627464;  // "cbtd"

enum class TracerdOp : uint32_t {
  Register = 1,  // + SCM_RIGHTS: the session init's pidfd
  Status = 2,
};

struct TracerdRequest {
  uint32_t magic = kTracerdMagic;
  TracerdOp op = TracerdOp::Status;
};

struct TracerdReply {
  uint32_t magic = kTracerdMagic;
  int32_t err = 0;           // 0, or the errno of the refusal
  uint64_t ring_bytes = 0;   // Register: the ring's data size
  uint32_t slot = 0;         // Register: the session's slot
  uint32_t sessions = 0;     // Status: live slots
  uint32_t programs = 0;     // Status: programs loaded (one set for all sessions)
  uint32_t service_pid = 0;  // the service, in its own pid namespace
  uint32_t pidns_level = 0;  // Register: the level of the peer's pid namespace
  uint32_t pad = 0;
  char message[240] = {};  // why a refusal; Status: the programs' ids
};

// A connection to the service; ENOENT/ECONNREFUSED when none runs.
Result<UniqueFd> connect_tracer_service(const std::string& path = tracer_socket_path());

struct TracerRegistration {
  UniqueFd ring;
  UniqueFd lost;
  uint64_t ring_bytes = 0;
  uint32_t slot = 0;
  uint32_t pidns_level = 0;
};

// Registers `pidfd`'s process (a child of the caller) on connection `sock`.
Result<TracerRegistration> register_with_tracer(int sock, int pidfd);
// The service's status (Status), on a fresh connection.
Result<TracerdReply> tracer_status(const std::string& path = tracer_socket_path());

}  // namespace cb
