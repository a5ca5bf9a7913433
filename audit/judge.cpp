#include "audit/judge.h"

#include "policy/expr.h"

namespace cb::audit {
namespace {

int severity(Decision d) {
  switch (d) {
    case Decision::Deny: return 3;
    case Decision::Ask: return 2;
    case Decision::Log: return 1;
    case Decision::Allow: return 0;
  }
  return 0;
}

}  // namespace

std::vector<Event> judged_events(const db::StoredEvent& e) {
  std::vector<Event> out;
  out.push_back(e.row.ev);
  // The audit trail does not record identities (policy/identity.h): the
  // recorded command name stands in for one.  Analysis only; the
  // supervisor never trusts it.
  if (out[0].proc && out[0].proc->names.empty() && !out[0].proc->comm.empty()) {
    auto p = std::make_shared<ProcessInfo>(*out[0].proc);
    p->names = {p->comm};
    out[0].proc = std::move(p);
  }
  for (const auto& f : e.row.facets) {
    Event x = e.row.ev;
    x.action = f.action;
    x.path = f.path;
    x.target = f.target;
    x.aliases = f.aliases;
    x.is_dir = f.is_dir;
    x.target_pid = f.target_pid;
    out.push_back(std::move(x));
  }
  if (out.size() > 1 && out[0].proc) {
    uint32_t deletions = 0;
    for (const auto& x : out) deletions += x.action == Action::FileDelete;
    uint32_t before = e.row.ev.proc_deletes >= deletions ? e.row.ev.proc_deletes - deletions : 0;
    for (auto& x : out) x.proc_deletes = before + (x.action == Action::FileDelete ? 1 : 0);
  }
  return out;
}

Rejudged rejudge(const Policy& p, const db::StoredEvent& e) {
  Rejudged best;
  int worst = -1;
  auto events = judged_events(e);
  for (size_t i = 0; i < events.size(); ++i) {
    Verdict v = decide(p, events[i]);
    if (severity(v.decision) > worst) {
      worst = severity(v.decision);
      best.verdict = std::move(v);
      best.facet = i;
    }
  }
  return best;
}

bool decided_by_filter_alone(const db::StoredEvent& e) {
  return e.row.layer == Layer::Filter && e.row.verdict.builtin && e.row.verdict.rule_id == "cottonbox:native-abi";
}

PolicyReads policy_reads(const Policy& p) {
  PolicyReads r;
  for (const auto& rule : p.rules) {
    if (!rule.processes.empty()) r.process = true;
    if (!rule.when) continue;
    for (const auto& f : expr_fields(*rule.when)) {
      if (f == "proc.deletes") r.deletes = true;
      if (f.starts_with("proc.") && f != "proc.deletes" && f != "proc.pid") r.process = true;
      if (f == "uid") r.process = true;
    }
  }
  return r;
}

std::vector<std::string> missing_fields(const db::StoredEvent& e, const PolicyReads& reads) {
  std::vector<std::string> out;
  if (reads.process && !e.image_recorded)
    out.push_back("the process as it was (exe, argv, cwd, ancestors) was not recorded; its last known image is used");
  if (reads.deletes && !e.deletes_recorded) out.push_back("proc.deletes was not recorded");
  if (!e.facets_recorded) {
    Action a = e.row.ev.action;
    if (a == Action::FileRename || a == Action::FileWrite || a == Action::FileCreate || a == Action::FileTruncate ||
        a == Action::FileLink)
      out.push_back("the call's other parts (a file it replaced or truncated) were not recorded");
  }
  return out;
}

std::string verdict_text(const Verdict& v) {
  return std::string(decision_name(v.decision)) + " (" + (v.rule_id.empty() ? std::string("default") : v.rule_id) + ")";
}

std::string_view decision_past(Decision d) {
  switch (d) {
    case Decision::Allow: return "allowed";
    case Decision::Deny: return "denied";
    case Decision::Ask: return "asked";
    case Decision::Log: return "logged";
  }
  return "?";
}

}  // namespace cb::audit
