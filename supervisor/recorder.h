// Where the supervisor's records go: every sink, fed from the loop's one
// thread, with the session's sequence numbers and its degradations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "record/sink.h"

namespace cb {

class Recorder {
 public:
  explicit Recorder(std::vector<Sink*> sinks) : sinks_(std::move(sinks)) {}

  // Session-unique, in the order rows are made (approvals refer to them).
  uint64_t next_seq() { return ++seq_; }

  // Sees every row first, in the order the session's calls happened.
  std::function<void(const EventRow&)> observe;

  void emit(const EventRow& row) {
    if (observe) observe(row);
    for (auto* s : sinks_) s->event(row);
  }
  // The first sink (the store) takes the row itself, after the others.
  void emit(EventRow&& row) {
    if (observe) observe(row);
    if (sinks_.empty()) return;
    for (size_t i = 1; i < sinks_.size(); ++i) sinks_[i]->event(static_cast<const EventRow&>(row));
    sinks_[0]->event(std::move(row));
  }
  void refusing(const EventRow& row) {
    for (auto* s : sinks_) s->refusing(row);
  }
  void process(const ProcessRow& r) {
    for (auto* s : sinks_) s->process(r);
  }
  void process_exec(const ProcessExec& x) {
    for (auto* s : sinks_) s->process_exec(x);
  }
  void process_exit(const ProcessExit& x) {
    for (auto* s : sinks_) s->process_exit(x);
  }
  void approval(const ApprovalRow& a) {
    for (auto* s : sinks_) s->approval(a);
  }
  void lookup(const LookupRow& l) {
    for (auto* s : sinks_) s->lookup(l);
  }
  void events_lost(uint64_t total) {
    for (auto* s : sinks_) s->events_lost(total);
  }
  // Once per distinct reason.
  void degraded(const std::string& why);
  const std::vector<std::string>& degradations() const { return degraded_; }

 private:
  std::vector<Sink*> sinks_;
  std::vector<std::string> degraded_;
  uint64_t seq_ = 0;
};

}  // namespace cb
