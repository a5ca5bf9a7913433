#include "supervisor/ask_broker.h"

#include "record/summary.h"

namespace cb {

AskBroker::AskBroker(AskBackend* backend, std::chrono::milliseconds timeout, Clock clock, InTree in_tree,
                     Resolve resolve)
    : backend_(backend),
      timeout_(timeout),
      clock_(std::move(clock)),
      in_tree_(std::move(in_tree)),
      resolve_(std::move(resolve)) {}

std::optional<bool> AskBroker::grant_for(uint64_t proc_id, Action a) const {
  if (!proc_id) return std::nullopt;
  for (auto it = grants_.rbegin(); it != grants_.rend(); ++it)
    if ((it->actions & bit(a)) && in_tree_(proc_id, it->tree_root)) return it->allow;
  return std::nullopt;
}

void AskBroker::park(Pending p, uint64_t proc_id, AskRequest request) {
  const Facet& f = p.cls.facets[0];
  std::string key = std::to_string(p.row.ev.pid) + "|" + std::string(action_name(f.action)) + "|" + dirname_of(f.path) +
                    "|" + p.row.verdict.rule_id;
  for (auto& [id, pk] : parked_) {
    if (pk.fold_key == key) {
      pk.requests.push_back(std::move(p));
      if (backend_) backend_->update(id, static_cast<uint32_t>(pk.requests.size()));
      return;
    }
  }
  if (!backend_) {
    // Nobody to ask: an unanswered ask is a denial.
    int64_t now = clock_();
    ApprovalRow a{p.row.seq, now, now, "no-asker", "deny-once", ""};
    resolve_(p, false, a);
    return;
  }
  Parked pk;
  uint64_t id = next_id_++;
  pk.fold_key = std::move(key);
  pk.asked_ns = clock_();
  pk.deadline_ns = pk.asked_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout_).count();
  pk.proc_id = proc_id;
  pk.action = bit(f.action);
  request.ask_id = id;
  request.row = p.row;
  request.asked_ns = pk.asked_ns;
  request.deadline_ns = pk.deadline_ns;
  pk.requests.push_back(std::move(p));
  parked_.emplace(id, std::move(pk));
  backend_->ask(request);
}

void AskBroker::answer(uint64_t ask_id, AskAnswer a, const std::string& by, const std::string& rule_written) {
  auto it = parked_.find(ask_id);
  if (it == parked_.end()) return;
  Parked pk = std::move(it->second);
  parked_.erase(it);
  bool allow = ask_answer_allows(a);
  if (a == AskAnswer::AllowTree || a == AskAnswer::DenyTree || a == AskAnswer::AllowAlways ||
      a == AskAnswer::DenyAlways)
    grants_.push_back({pk.proc_id, pk.action, allow});
  int64_t now = clock_();
  for (auto& p : pk.requests) {
    ApprovalRow ar{p.row.seq, pk.asked_ns, now, by, std::string(ask_answer_name(a)), rule_written};
    resolve_(p, allow, ar);
  }
}

void AskBroker::expire() {
  int64_t now = clock_();
  std::vector<uint64_t> due;
  for (auto& [id, pk] : parked_)
    if (pk.deadline_ns <= now) due.push_back(id);
  for (uint64_t id : due) {
    if (backend_) backend_->cancel(id);
    answer(id, AskAnswer::Timeout, "timeout");
  }
}

int64_t AskBroker::next_deadline() const {
  int64_t next = 0;
  for (auto& [id, pk] : parked_)
    if (!next || pk.deadline_ns < next) next = pk.deadline_ns;
  return next;
}

void AskBroker::abandon(const std::function<void(Pending&)>& gone) {
  for (auto& [id, pk] : parked_)
    if (backend_) backend_->cancel(id);
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& [id, pk] : parked)
    for (auto& p : pk.requests) gone(p);
}

}  // namespace cb
