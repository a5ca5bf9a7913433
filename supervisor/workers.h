// Operations that may block (a FIFO with no reader yet, a blocking
// connect) run on threads of their own, so that the loop keeps serving
// every other call; their rows come back to the loop, which alone feeds the
// sinks.  Each thread polls until its operation completes, the target goes
// away, or the session ends.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "notify/listener.h"
#include "notify/ops.h"
#include "procs/procs.h"
#include "record/record.h"

namespace cb {

class Workers {
 public:
  explicit Workers(Listener& listener);
  ~Workers();  // stop()
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // `row`: what the operation's result completes, or none (a send to a
  // connected peer: nothing was judged, nothing is recorded).
  void run(const Call& call, Operation op, Creds creds, std::optional<EventRow> row);
  // Readable when rows are done.
  int fd() const { return done_fd_.get(); }
  // The rows of the operations that completed since the last call.
  std::vector<EventRow> take_done();
  // Ends every operation still waiting and joins its thread.
  void stop();

 private:
  Listener& listener_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<EventRow> done_;
  struct Thread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> finished;
  };
  std::vector<Thread> threads_;
  UniqueFd done_fd_;
};

}  // namespace cb
