#include "audit/judge.h"

#include <algorithm>

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

// The names of the files `ids` trusts at the path `exe`.
std::vector<std::string> names_at_path(const Identities& ids, const std::string& exe) {
  std::vector<std::string> out;
  for (const auto& f : ids.files)
    if (f.path == exe && std::find(out.begin(), out.end(), f.name) == out.end()) out.push_back(f.name);
  return out;
}

}  // namespace

std::vector<Event> judged_events(const db::StoredEvent& e, const Identities* table, Identity identity) {
  std::vector<Event> out;
  out.push_back(e.row.ev);
  if (out[0].proc && (!e.identity_recorded ? table != nullptr : identity == Identity::Afresh && table)) {
    auto p = std::make_shared<ProcessInfo>(*out[0].proc);
    if (!e.identity_recorded) {
      p->names = names_at_path(*table, p->exe);
      p->identity.why = p->names.empty() ? p->exe + " is at no path the policy trusts" : "";
    } else {
      p->names = identities_under(*table, p->names, p->identity, nullptr);
      if (!p->names.empty())
        p->identity.why.clear();
      else if (p->identity.why.empty())
        p->identity.why = p->exe + " is no file this policy trusts";
    }
    out[0].proc = std::move(p);
  }
  // Every part is judged with the row's process as it was judged.
  for (const auto& f : e.row.facets) {
    Event x = out[0];
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

Rejudged rejudge(const Policy& p, const db::StoredEvent& e, Identity identity) {
  Rejudged best;
  int worst = -1;
  auto events = judged_events(e, &p.identities, identity);
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

bool identity_matters(const Policy& p, const db::StoredEvent& e) {
  if (!e.row.ev.proc) return false;
  std::vector<std::string> names;
  for (const auto& f : p.identities.files)
    if (std::find(names.begin(), names.end(), f.name) == names.end()) names.push_back(f.name);
  auto judged_as = [&](std::vector<std::string> as) {
    db::StoredEvent x = e;
    auto info = std::make_shared<ProcessInfo>(*e.row.ev.proc);
    info->names = std::move(as);
    x.row.ev.proc = std::move(info);
    x.identity_recorded = true;
    Verdict v = rejudge(p, x, Identity::Recorded).verdict;
    return std::make_pair(v.decision, v.rule_id);
  };
  auto none = judged_as({});
  for (const auto& n : names)
    if (judged_as({n}) != none) return true;
  return false;
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
      if (f == "proc.ancestors") r.ancestors = true;
      if (f.starts_with("proc.") && f != "proc.deletes" && f != "proc.pid") r.process = true;
      if (f == "uid") r.process = true;
    }
  }
  return r;
}

std::vector<std::string> identity_doubts(const db::StoredEvent& e, const PolicyReads& reads, const Identities* fresh) {
  std::vector<std::string> out;
  if (!reads.process || !e.row.ev.proc) return out;
  const ProcessInfo& p = *e.row.ev.proc;
  if (!e.identity_recorded) {
    out.push_back(
        "its identity was not recorded (a trail from before schema 6): it is judged by the path of its "
        "executable, " +
        p.exe + ", not by its command name; a file changed there since, or code injected into it, is not seen");
  } else if (fresh) {
    std::string doubt;
    identities_under(*fresh, p.names, p.identity, &doubt);
    if (!doubt.empty()) out.push_back(std::move(doubt));
  }
  return out;
}

std::vector<std::string> missing_fields(const db::StoredEvent& e, const PolicyReads& reads, const Identities* fresh) {
  std::vector<std::string> out;
  if (reads.process && !e.image_recorded)
    out.push_back("the process as it was (exe, argv, cwd, ancestors) was not recorded; its last known image is used");
  if (fresh && reads.ancestors && e.identity_recorded && e.row.ev.proc && !e.row.ev.proc->ancestors.empty())
    out.push_back("its parents' identities are those the policy it ran with gave them");
  if (reads.deletes && !e.deletes_recorded) out.push_back("proc.deletes was not recorded");
  if (!e.facets_recorded) {
    Action a = e.row.ev.action;
    if (a == Action::FileRename || a == Action::FileWrite || a == Action::FileCreate || a == Action::FileTruncate ||
        a == Action::FileLink)
      out.push_back("the call's other parts (a file it replaced or truncated) were not recorded");
  }
  return out;
}

std::string identity_text(const ProcessInfo& p, bool recorded) {
  std::string names;
  for (const auto& n : p.names) names += (names.empty() ? "" : ", ") + n;
  if (!recorded)
    return (names.empty() ? std::string("none") : names) +
           " (not recorded, a trail from before schema 6: by the path of its executable)";
  if (!names.empty()) return names;
  if (!p.identity.why.empty()) return "none: " + p.identity.why;
  return "none";
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
