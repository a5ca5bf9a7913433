// The supervisor: one event loop that serves the seccomp listener.
//
//   notification -> read arguments (ID_VALID after every read) -> resolve paths
//   -> classify into Events -> decide(policy, event) -> carry out what is
//   allowed (on the resolved objects, with the target's credentials) and
//   answer the kernel -> record (the store's writer thread, live sinks)
//
// The database and the GUI never sit on this path, except for `ask`, which
// parks the request and answers it when the human (or the timeout) does.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ask/ask.h"
#include "host/mounts.h"
#include "launch/launch.h"
#include "policy/policy.h"
#include "record/sink.h"

namespace cb {

class EbpfTracer;
namespace net {
class NameMap;
class Resolver;
}  // namespace net
namespace keep {
class Keeper;
}

struct SupervisorOptions {
  const Policy* policy = nullptr;
  bool observe = false;
  int64_t session = 0;
  std::string session_name;
  AskBackend* asker = nullptr;  // null: asks are denied
  std::chrono::milliseconds ask_timeout{60000};
  std::vector<StaticDenial> mount_denials;  // trees the mount layer enforces
  std::vector<ProtectedDevice> protected_devices;
  LinkIndex* links = nullptr;     // other names of files: made before the session, or by it
  EbpfTracer* tracer = nullptr;   // records what is not notified; null: seccomp only
  bool execs_notified = true;     // the supervisor records proc.exec itself
  ActionMask kernel_carried = 0;  // allowed file actions the kernel may run (Plan::kernel_carried)
  // The command runs as root: a proc or sys it mounts in a namespace of its
  // own has writable kernel settings, which no mount of the session covers.
  bool root = false;
  std::vector<std::pair<std::string, std::string>> mount_aliases;  // (other name, protected tree), Plan::alias_of
  keep::Keeper* keeper = nullptr;  // keeps what allowed calls destroy (null: --no-keep, or none could open)
  int64_t started_ns = 0;          // the session's start: what was born since, the session made
  // The session's resolver, served from the supervisor's loop so that its
  // lookups reach the trail in order with the calls around them; and the
  // names it recorded, read when net.* calls are judged.  Null: none.
  net::Resolver* resolver = nullptr;
  const net::NameMap* names = nullptr;
};

struct SessionOutcome {
  int exit_status = -1;  // as cottonbox run returns it
  int exit_signal = 0;
  bool exec_failed = false;
  uint64_t notifications = 0;
  uint64_t kernel_carried = 0;  // of them, let through at once (carry.h)
  uint64_t denials = 0;
  uint64_t not_kept = 0;  // calls some of whose destroyed content could not be kept for undo
};

class Supervisor {
 public:
  Supervisor(SupervisorOptions opts, Launched launched, std::vector<Sink*> sinks);
  ~Supervisor();

  // Serves the session until its last process has exited.
  SessionOutcome run();

  // Thread-safe: ends the session (kills every process of it).
  void request_kill();

  // Degradations found while running (e.g. no sync wake-up).
  const std::vector<std::string>& degradations() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cb
