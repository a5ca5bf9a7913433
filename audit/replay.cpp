#include "audit/replay.h"

#include <algorithm>

#include "audit/judge.h"
#include "db/bytes.h"
#include "db/json.h"
#include "db/report.h"
#include "proto/explain_json.h"

namespace cb::audit {

using proto::rule_location;
using proto::Sources;
namespace {

using nlohmann::json;

std::string_view verb(Decision d) {
  switch (d) {
    case Decision::Allow: return "allow";
    case Decision::Deny: return "deny";
    case Decision::Ask: return "ask about";
    case Decision::Log: return "log";
  }
  return "?";
}

const Rule* rule_named(const Policy& p, const std::string& id) {
  for (const auto& r : p.rules)
    if (r.id == id) return &r;
  return nullptr;
}

// Actions a seccomp-only session recorded: only what its policy could
// deny, ask about or log reached the supervisor.
ActionMask recorded_actions(const Policy& p) { return actions_needing_decision(p) | actions_logged(p); }

std::string action_list(ActionMask m) {
  std::string out;
  for (int i = 0; i < static_cast<int>(Action::Count); ++i)
    if (m & (ActionMask{1} << i)) out += (out.empty() ? "" : ", ") + std::string(action_name(static_cast<Action>(i)));
  return out;
}

// The process by its command name, and by the identity it was judged with.
std::string event_line(const db::StoredEvent& e) {
  const Event& ev = e.row.ev;
  std::string who =
      db::escape_for_terminal(ev.proc ? ev.proc->comm : std::string("?")) + " (pid " + std::to_string(ev.pid);
  if (ev.proc && !ev.proc->names.empty())
    who += ", identity " + db::escape_for_terminal(identity_text(*ev.proc, e.identity_recorded));
  else if (ev.proc)
    who += e.identity_recorded ? ", no identity" : ", identity not recorded";
  std::string line = "#" + std::to_string(e.id) + " session " + std::to_string(e.session) + "  " + who + ")  " +
                     std::string(action_name(ev.action)) + " " + db::escape_for_terminal(ev.path);
  if (!ev.target.empty()) line += " -> " + db::escape_for_terminal(ev.target);
  return line;
}

}  // namespace

ReplayReport replay(const std::vector<ReplaySession>& sessions) {
  ReplayReport rep;
  for (size_t si = 0; si < sessions.size(); ++si) {
    const ReplaySession& s = sessions[si];
    const std::string sid = "session " + std::to_string(s.summary.id);
    PolicyReads reads = policy_reads(s.next);
    if (s.original) {
      PolicyReads old = policy_reads(*s.original);
      reads.process |= old.process;
      reads.deletes |= old.deletes;
    } else {
      rep.notes.push_back(
          sid + ": the policy texts it ran with were not recorded (" +
          (s.original_problem.empty() ? std::string("a session from before schema 3") : s.original_problem) +
          "); its recorded verdicts are taken as they are");
    }
    if (s.summary.events_lost > 0)
      rep.notes.push_back(sid + " lost " + std::to_string(s.summary.events_lost) +
                          " tracer records: those events were never recorded and cannot be judged");
    if (s.summary.start.tracer.find("ebpf") == std::string::npos && s.original) {
      ActionMask unseen = recorded_actions(s.next) & ~recorded_actions(*s.original);
      if (unseen)
        rep.notes.push_back(sid +
                            " ran without the eBPF tracer: it recorded only what its policy could refuse or "
                            "log, so its " +
                            action_list(unseen) + " events, which the new policy decides, are not in the trail");
    }
    for (size_t ei = 0; ei < s.events.size(); ++ei) {
      const db::StoredEvent& e = s.events[ei];
      ++rep.judged;
      Verdict before = e.row.verdict;
      if (decided_by_filter_alone(e)) {
        ++rep.unchanged;
        continue;
      }
      std::vector<std::string> reasons = missing_fields(e, reads, &s.next.identities);
      // Doubts about an identity, only where some identity would decide otherwise.
      std::vector<std::string> doubts = identity_doubts(e, reads, &s.next.identities);
      if (!doubts.empty() && (identity_matters(s.next, e) || (s.original && identity_matters(*s.original, e))))
        reasons.insert(reasons.end(), doubts.begin(), doubts.end());
      if (s.original) {
        // With the identities the supervisor found: what it decided.
        Rejudged again = rejudge(*s.original, e, Identity::Recorded);
        if (again.verdict.decision != before.decision || again.verdict.rule_id != before.rule_id) {
          std::string why = "the policy it ran with says " + verdict_text(again.verdict) + " where the trail says " +
                            verdict_text(before);
          if (e.row.layer == Layer::Mount) why += " (refused by a read-only mount, which saw another name)";
          reasons.push_back(why);
        }
      }
      // Another policy may trust other files: each process is looked up
      // in its table by the file it ran.
      Rejudged after = rejudge(s.next, e, Identity::Afresh);
      if (!reasons.empty()) rep.uncertain.push_back({si, ei, std::move(reasons)});
      if (after.verdict.decision == before.decision) {
        ++rep.unchanged;
        continue;
      }
      ++rep.counts[{before.decision, after.verdict.decision}];
      rep.changes.push_back({si, ei, before, std::move(after.verdict)});
    }
  }
  return rep;
}

std::string replay_summary(const ReplayReport& r) {
  if (r.counts.empty()) return "no event would be decided differently";
  // Grouped by the new decision, strictest first.
  std::string out = "would ";
  bool first = true;
  for (Decision after : {Decision::Deny, Decision::Ask, Decision::Allow, Decision::Log}) {
    for (Decision before : {Decision::Allow, Decision::Log, Decision::Ask, Decision::Deny}) {
      auto it = r.counts.find({before, after});
      if (it == r.counts.end()) continue;
      out += (first ? "" : ", ") + std::string(verb(after)) + " " + std::to_string(it->second) +
             (it->second == 1 ? " that was " : " that were ") + std::string(decision_past(before));
      first = false;
    }
  }
  return out;
}

std::string replay_text(const ReplayReport& r, const std::vector<ReplaySession>& sessions,
                        const std::string& policy_label) {
  std::string out = "replayed " + std::to_string(r.judged) + " events of " + std::to_string(sessions.size()) +
                    (sessions.size() == 1 ? " session" : " sessions") + " against " + policy_label + ":\n  " +
                    replay_summary(r) + "\n";
  if (!r.uncertain.empty()) out += "  " + std::to_string(r.uncertain.size()) + " uncertain (see below)\n";
  // Group by the rule that decides now.
  std::map<std::string, std::vector<const ReplayChange*>> groups;
  for (const auto& c : r.changes) groups[c.after.rule_id].push_back(&c);
  for (auto& [rule, changes] : groups) {
    const Policy& next = sessions[changes.front()->session].next;
    const Rule* def = rule_named(next, rule);
    out += "\n";
    if (rule.empty()) {
      out += "the default (" + std::string(decision_name(next.default_decision)) + "): ";
    } else {
      out +=
          "rule " + db::escape_for_terminal(rule) + " (" + std::string(decision_name(changes.front()->after.decision));
      if (def && !rule_location(*def).empty()) out += ", " + db::escape_for_terminal(rule_location(*def));
      out += "): ";
    }
    out += std::to_string(changes.size()) + (changes.size() == 1 ? " event\n" : " events\n");
    for (const ReplayChange* c : changes) {
      const db::StoredEvent& e = sessions[c->session].events[c->event];
      out += "  " + event_line(e) + "\n    " + verdict_text(c->before) + " -> " + verdict_text(c->after) + "\n";
    }
  }
  if (!r.uncertain.empty()) {
    out += "\nuncertain:\n";
    for (const auto& u : r.uncertain) {
      out += "  " + event_line(sessions[u.session].events[u.event]) + "\n";
      for (const auto& why : u.reasons) out += "    " + db::escape_for_terminal(why) + "\n";
    }
  }
  for (const auto& n : r.notes) out += "\nnote: " + db::escape_for_terminal(n) + "\n";
  return out;
}

json replay_json(const ReplayReport& r, const std::vector<ReplaySession>& sessions) {
  json j = json::object();
  j["summary"] = replay_summary(r);
  j["judged"] = r.judged;
  j["unchanged"] = r.unchanged;
  json counts = json::array();
  for (const auto& [k, n] : r.counts)
    counts.push_back({{"before", decision_name(k.first)}, {"after", decision_name(k.second)}, {"events", n}});
  j["counts"] = counts;
  json changes = json::array();
  for (const auto& c : r.changes) {
    const db::StoredEvent& e = sessions[c.session].events[c.event];
    json x = {{"id", e.id},
              {"session", e.session},
              {"before", decision_name(c.before.decision)},
              {"before_rule", c.before.rule_id.empty() ? json(nullptr) : json(db::to_valid_utf8(c.before.rule_id))},
              {"after", decision_name(c.after.decision)},
              {"after_rule", c.after.rule_id.empty() ? json(nullptr) : json(db::to_valid_utf8(c.after.rule_id))}};
    x["event"] = db::event_json(e);
    changes.push_back(std::move(x));
  }
  j["changes"] = changes;
  json groups = json::array();
  std::map<std::string, std::vector<int64_t>> by_rule;
  for (const auto& c : r.changes) by_rule[c.after.rule_id].push_back(sessions[c.session].events[c.event].id);
  for (const auto& [rule, ids] : by_rule) {
    json g = {{"rule", rule.empty() ? json(nullptr) : json(db::to_valid_utf8(rule))}, {"events", ids}};
    groups.push_back(std::move(g));
  }
  j["by_rule"] = groups;
  json uncertain = json::array();
  for (const auto& u : r.uncertain) {
    json reasons = json::array();
    for (const auto& why : u.reasons) reasons.push_back(db::to_valid_utf8(why));
    const db::StoredEvent& e = sessions[u.session].events[u.event];
    uncertain.push_back({{"id", e.id}, {"session", e.session}, {"reasons", reasons}});
  }
  j["uncertain"] = uncertain;
  json notes = json::array();
  for (const auto& n : r.notes) notes.push_back(db::to_valid_utf8(n));
  j["notes"] = notes;
  return j;
}

}  // namespace cb::audit
