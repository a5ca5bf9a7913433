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

#include "db/store.h"
#include "policy/policy.h"
#include "tracer/ask.h"
#include "tracer/launch.h"

namespace cb {

// Receives every record as it is produced (the store, the GUI connection).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void event(const db::EventRow& row) = 0;
  // A row nothing else will read: a sink that keeps rows may take it whole.
  virtual void event(db::EventRow&& row) { event(static_cast<const db::EventRow&>(row)); }
  virtual void process(const db::ProcessRow& row) { (void)row; }
  virtual void process_exec(const db::ProcessExec& e) { (void)e; }
  virtual void process_exit(const db::ProcessExit& e) { (void)e; }
  virtual void approval(const db::ApprovalRow& a) { (void)a; }
  virtual void degraded(const std::string& reason) { (void)reason; }
  // The tracer's running total of records it had no room for.
  virtual void events_lost(uint64_t total) { (void)total; }
};

// A block device whose writes would bypass every path rule: the file
// systems on it hold these protected trees.
struct ProtectedDevice {
  dev_t rdev = 0;
  std::vector<std::string> roots;
};

// Other names of protected files that existed before the session:
// (dev, ino) -> the protected paths a write through any name amounts to.
using InodeAliases = std::unordered_map<uint64_t, std::vector<std::string>>;
inline uint64_t inode_key(dev_t dev, ino_t ino) { return (uint64_t(dev) << 40) ^ uint64_t(ino); }

// The InodeAliases of the protected trees, found by a walk on its own thread
// that starts with the session.  A repository's .git can hold a hundred
// thousand entries: launch must not wait for them, and only a lookup that
// needs the answer (a file with several links, which is rare) waits for
// the walk to end.
class LinkIndex {
 public:
  // `done(complete)` runs on the walk's thread when it ends; complete is
  // false when `limit` entries cut it short.
  LinkIndex(std::vector<std::string> trees, size_t limit, std::function<void(bool complete)> done = {});
  explicit LinkIndex(InodeAliases ready);  // a walk that ended already
  ~LinkIndex();                            // stops the walk and joins it
  LinkIndex(const LinkIndex&) = delete;
  LinkIndex& operator=(const LinkIndex&) = delete;

  const InodeAliases& wait() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool ready_ = false;
  std::atomic<bool> stop_{false};
  InodeAliases map_;
  std::thread thread_;
};

class EbpfTracer;

struct SupervisorOptions {
  const Policy* policy = nullptr;
  bool observe = false;
  int64_t session = 0;
  std::string session_name;
  AskBackend* asker = nullptr;  // null: asks are denied
  std::chrono::milliseconds ask_timeout{60000};
  std::vector<StaticDenial> mount_denials;  // trees the mount layer enforces
  std::vector<ProtectedDevice> protected_devices;
  const LinkIndex* links = nullptr;     // hard links that existed before the session
  std::vector<std::string> self_files;  // audit db, policy files: builtin protection
  bool landlock_signals = false;        // signals are scoped by Landlock
  EbpfTracer* tracer = nullptr;         // records what is not notified; null: seccomp only
  bool execs_notified = true;           // the supervisor records proc.exec itself
  ActionMask kernel_carried = 0;        // allowed file actions the kernel may run (Plan::kernel_carried)
  std::vector<std::pair<std::string, std::string>> mount_aliases;  // (other name, protected tree), Plan::alias_of
};

struct SessionOutcome {
  int exit_status = -1;  // as cottonbox run returns it
  int exit_signal = 0;
  bool exec_failed = false;
  uint64_t notifications = 0;
  uint64_t kernel_carried = 0;  // of them, let through at once (carry.h)
  uint64_t denials = 0;
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
