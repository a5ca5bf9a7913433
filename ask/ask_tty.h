// Asking on the supervisor's controlling terminal (/dev/tty), not on the
// command's stdin: the command may be reading that, or not have one.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "ask/ask.h"
#include "base/fd.h"
#include "base/result.h"

namespace cb {

class TtyAsker : public AskBackend {
 public:
  // Fails when there is no controlling terminal.
  static Result<std::unique_ptr<TtyAsker>> open();
  ~TtyAsker() override;

  std::string name() const override { return "tty"; }
  void ask(const AskRequest& req) override;
  void update(uint64_t ask_id, uint32_t count) override;
  void cancel(uint64_t ask_id) override;

 private:
  explicit TtyAsker(UniqueFd tty);
  void loop();
  // Shows one request and waits for a key or its deadline.
  void prompt(AskRequest req);

  UniqueFd tty_;
  UniqueFd wake_;  // eventfd: new request, update, cancel or stop
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<AskRequest> queue_;
  uint64_t current_ = 0;
  uint32_t current_count_ = 1;
  bool current_cancelled_ = false;
  bool stop_ = false;
  std::thread thread_;
};

// Shell-quotes one argument for display (argv shown to a human).
std::string shell_quote(const std::string& s);
// Makes a path or argument safe to print: control bytes become \n, \xNN.
std::string printable(const std::string& s);

}  // namespace cb
