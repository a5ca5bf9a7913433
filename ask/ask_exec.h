// `--ask exec:PROGRAM`: a program answers each ask.
//
// Per ask, PROGRAM runs (through /bin/sh -c, outside the session, as the
// supervisor's user) with the ask on its standard input as one JSON line,
// the protocol's `ask` message (docs/protocol.md), and answers on its
// standard output with one line: `allow`, `deny`, `allow-tree` or
// `deny-tree`, optionally followed by a reason (docs/approvers.md).
// Anything else is a denial: no answer before the ask's deadline (the
// program and everything it started are killed), a crash, a non-zero exit
// status, output that is not an answer.  Asks run side by side, one
// program each.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ask/ask.h"
#include "base/result.h"

namespace cb {

// One answer as an approver wrote it.  Pure, for tests.
struct ApproverAnswer {
  AskAnswer answer = AskAnswer::DenyOnce;
  std::string reason;
};
Result<ApproverAnswer> parse_approver_output(std::string_view out);

class ExecAsker : public AskBackend {
 public:
  // `command`: what follows "exec:"; `cwd`: the session's (summaries
  // shorten paths below it).
  ExecAsker(std::string command, std::string cwd);
  ~ExecAsker() override;  // kills the approvers still running and waits for them

  std::string name() const override { return "exec"; }
  void ask(const AskRequest& req) override;
  void cancel(uint64_t ask_id) override;

 private:
  void run(AskRequest req);

  std::string command_;
  std::string cwd_;
  std::mutex mu_;
  std::map<uint64_t, pid_t> running_;   // ask id -> the approver's process group
  std::map<uint64_t, bool> cancelled_;  // asks being answered -> cancelled by the supervisor
  bool stopping_ = false;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Worker> workers_;  // finished ones are joined at the next ask
};

}  // namespace cb
