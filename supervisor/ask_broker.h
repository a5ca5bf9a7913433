// Asks parked while their requests wait in the kernel.
//
// Similar requests (same process, action, directory and rule) fold into one
// prompt; an answer for a process tree holds for the rest of the session;
// no answer before the deadline is a denial; without anyone to ask, an ask
// is a denial at once.  The broker owns no fds and reads the time from the
// clock it is given, so it is tested with a fake one; the loop arms its
// timer from next_deadline() and calls expire() when it fires.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ask/ask.h"
#include "policy/event.h"
#include "supervisor/pending.h"

namespace cb {

class AskBroker {
 public:
  using Clock = std::function<int64_t()>;  // CLOCK_REALTIME in ns
  using InTree = std::function<bool(uint64_t proc_id, uint64_t ancestor)>;
  // Carries out or refuses a request once decided, then records `approval`.
  using Resolve = std::function<void(Pending& p, bool allow, const ApprovalRow& approval)>;

  AskBroker(AskBackend* backend, std::chrono::milliseconds timeout, Clock clock, InTree in_tree, Resolve resolve);

  // What an earlier answer for a tree decided for this process, if any.
  std::optional<bool> grant_for(uint64_t proc_id, Action a) const;

  // Parks `p`, asked by process `proc_id`: folded into an open ask like it,
  // or asked anew with `request` (its chain and summary; the broker sets
  // the id, the times and the count).
  void park(Pending p, uint64_t proc_id, AskRequest request);
  // An answer from the backend (any answer for an ask that is no longer
  // open is ignored).
  void answer(uint64_t ask_id, AskAnswer a, const std::string& by, const std::string& rule_written = "");
  // Answers every ask whose deadline has passed: Timeout, a denial.
  void expire();
  // The earliest deadline of an open ask; 0 when none is open.
  int64_t next_deadline() const;
  // The session ended: the processes behind the open asks are gone.
  void abandon(const std::function<void(Pending&)>& gone);
  size_t open_asks() const { return parked_.size(); }

 private:
  struct Parked {
    std::vector<Pending> requests;
    std::string fold_key;
    int64_t asked_ns = 0, deadline_ns = 0;
    uint64_t proc_id = 0;
    ActionMask action = 0;
  };
  struct Grant {
    uint64_t tree_root = 0;  // proc_id
    ActionMask actions = 0;
    bool allow = false;
  };

  AskBackend* backend_;
  std::chrono::milliseconds timeout_;
  Clock clock_;
  InTree in_tree_;
  Resolve resolve_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Parked> parked_;
  std::vector<Grant> grants_;
};

}  // namespace cb
