#include "audit/commands.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <iostream>
#include <set>

#include "audit/judge.h"
#include "audit/policy_source.h"
#include "audit/replay.h"
#include "audit/suggest.h"
#include "db/bytes.h"
#include "db/json.h"
#include "db/report.h"
#include "policy/explain.h"
#include "proto/explain_json.h"

namespace cb::audit {

using proto::explanation_json;
using proto::explanation_text;
using proto::layer_words;
using proto::Sources;
using proto::sources_of;
namespace {

using nlohmann::json;

constexpr int kExitFailure = 125;

std::string short_hash(const std::string& h) { return h.size() > 12 ? h.substr(0, 12) + "…" : h; }

std::string absolute(const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + p : p;
}

void print(const Report& r, bool as_json, std::ostream& out) {
  if (as_json)
    out << r.json.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  else
    out << r.text;
}

int fail(const Error& e) {
  std::cerr << "cottonbox: " << e.message << "\n";
  return kExitFailure;
}

// The policy a session ran with, and where it came from.
struct SessionPolicy {
  std::optional<Policy> policy;
  std::optional<PolicySnapshot> snapshot;
  std::string label;
  bool recorded = false;
  std::vector<std::string> notes;
};

SessionPolicy policy_of(db::Reader& reader, const db::SessionSummary& s) {
  SessionPolicy sp;
  auto snap = reader.policy(s.id);
  if (snap && *snap) {
    sp.snapshot = **snap;
    auto p = compile_snapshot(**snap, s.start.policy_hash);
    if (p) {
      sp.policy = std::move(*p);
      sp.recorded = true;
      std::string files;
      for (const auto& [n, t] : sp.snapshot->files) files += (files.empty() ? "" : ", ") + db::to_valid_utf8(n);
      sp.label = "the policy session " + std::to_string(s.id) + " ran with (sha256 " + short_hash(s.start.policy_hash) +
                 "): " + files;
      return sp;
    }
    sp.notes.push_back("the recorded policy of session " + std::to_string(s.id) +
                       " does not load again: " + p.error().message);
  }
  // A session from before the texts were kept: its files as they are now.
  auto p = compile_files(s.start.policy_files, default_vars(), reader.path());
  std::string files;
  for (const auto& f : s.start.policy_files) files += (files.empty() ? "" : ", ") + db::to_valid_utf8(f);
  if (!p) {
    sp.notes.push_back("the texts of session " + std::to_string(s.id) +
                       "'s policy were not recorded, and its files do not load now: " + p.error().message);
    return sp;
  }
  sp.label =
      "session " + std::to_string(s.id) + "'s policy files as they are now (its texts were not recorded): " + files;
  if (p->hash != s.start.policy_hash)
    sp.notes.push_back("the files differ from what session " + std::to_string(s.id) +
                       " loaded (or it had --var values): the explanation may not be what decided then");
  sp.policy = std::move(*p);
  return sp;
}

Result<std::vector<db::StoredEvent>> session_events(db::Reader& reader, int64_t session) {
  db::EventQuery q;
  q.session = session;
  return reader.events(q);
}

std::string errno_text(int e) {
  if (e < 0) return "";
  if (e == 0) return "succeeded";
  const char* name = strerrorname_np(e);
  return std::string("errno ") + std::to_string(e) + (name ? std::string(" (") + name + ")" : "");
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> read_policy_files(const std::vector<std::string>& files) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : files) {
    std::string path = absolute(f);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(path + ": cannot read");
    std::string text;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    int e = errno;
    ::close(fd);
    if (n < 0) return Error::from_errno(path + ": cannot read", e);
    out.emplace_back(path, std::move(text));
  }
  return out;
}

Result<Report> why_event(db::Reader& reader, int64_t event_id) {
  auto e = reader.event(event_id);
  if (!e) return e.error();
  auto s = reader.session(e->session);
  if (!s) return s.error();
  SessionPolicy sp = policy_of(reader, *s);
  const EventRow& row = e->row;
  const Event& ev = row.ev;

  Report r;
  std::string& t = r.text;
  t += "event " + std::to_string(e->id) + " of session " + std::to_string(e->session) + ": " +
       db::escape_for_terminal(ev.proc ? ev.proc->comm : "?") + " (pid " + std::to_string(ev.pid) + ") " +
       std::string(action_name(ev.action)) + " " + db::escape_for_terminal(ev.path);
  if (!ev.target.empty()) t += " -> " + db::escape_for_terminal(ev.target);
  t += "\n";
  if (ev.proc && !ev.proc->argv.empty()) t += "  command:  " + db::shell_join(ev.proc->argv) + "\n";
  // What the rules know it by: the command name above is the process's own
  // choice.  (An older trail's is what the policy's table says of its path.)
  auto parts = judged_events(*e, sp.policy ? &sp.policy->identities : nullptr, Identity::Recorded);
  if (ev.proc)
    t += "  identity: " + db::escape_for_terminal(identity_text(*parts[0].proc, e->identity_recorded)) + "\n";
  if (ev.proc && !ev.proc->ancestors.empty()) {
    std::string chain;
    for (const auto& a : ev.proc->ancestors)
      chain += " <- " + (a.empty() ? "(no identity)" : db::escape_for_terminal(a));
    t += "  parents:  " + chain.substr(4) + "\n";
  }
  std::string outcome = row.allowed ? "allowed" : "DENIED";
  if (!row.enforced) outcome = row.allowed ? "would be allowed (--observe)" : "would be DENIED (--observe)";
  t += "  recorded: " + verdict_text(row.verdict) + ", " + outcome + ", layer " + std::string(layer_name(row.layer));
  if (row.result_errno >= 0) t += ", " + errno_text(row.result_errno);
  t += "\n";
  if (e->approval)
    t += "  answered: " + db::escape_for_terminal(e->approval->answer) + " by " +
         db::escape_for_terminal(e->approval->answered_by) + "\n";

  json j = json::object();
  j["event"] = db::event_json(*e);
  if (!ev.proc) {
    j["identity"] = nullptr;
  } else {
    const ProcessInfo& judged = *parts[0].proc;
    j["identity"] = {{"names", judged.names},
                     {"recorded", e->identity_recorded},
                     {"check", e->identity_recorded ? json(identity_check_name(judged.identity.check)) : json(nullptr)},
                     {"why", judged.names.empty() ? json(db::to_valid_utf8(judged.identity.why)) : json(nullptr)}};
  }
  j["recorded"] = {{"verdict", decision_name(row.verdict.decision)},
                   {"rule", row.verdict.rule_id.empty() ? json(nullptr) : json(db::to_valid_utf8(row.verdict.rule_id))},
                   {"decision", row.allowed ? "allow" : "deny"},
                   {"layer", layer_name(row.layer)},
                   {"builtin", row.verdict.builtin}};
  json notes = json::array();
  for (const auto& n : sp.notes) notes.push_back(db::to_valid_utf8(n));

  if (!sp.policy) {
    for (const auto& n : sp.notes) t += "note: " + n + "\n";
    j["policy"] = nullptr;
    j["explanation"] = nullptr;
    j["notes"] = notes;
    r.json = std::move(j);
    return r;
  }
  const Policy& p = *sp.policy;
  t += "  judged against " + sp.label + "\n";
  j["policy"] = {{"recorded", sp.recorded}, {"hash", p.hash}, {"files", p.files}};

  std::vector<std::string> uncertain;
  if (decided_by_filter_alone(*e)) {
    t += "\ndecided by the seccomp filter itself: " + db::escape_for_terminal(row.verdict.message) +
         "\nenforced by: filter (" + std::string(layer_words("filter")) + ")\n";
    j["explanation"] = {
        {"verdict", "deny"}, {"rule", {{"id", row.verdict.rule_id}, {"builtin", true}}}, {"layer", "filter"}};
    j["reproduced"] = true;
    j["notes"] = notes;
    r.json = std::move(j);
    return r;
  }
  Rejudged again = rejudge(p, *e, Identity::Recorded);
  Explanation x = explain(p, parts[again.facet]);
  std::string layer = row.verdict.builtin ? "builtin" : std::string(layer_name(row.layer));
  if (row.layer == Layer::None && !row.verdict.builtin) layer = "none";
  Sources sources;
  if (sp.snapshot)
    for (const auto& [n, body] : sp.snapshot->files) sources[n] = body;
  else
    sources = sources_of(p);

  if (parts.size() > 1) {
    t += "  the call had " + std::to_string(parts.size()) + " parts, each judged; the most severe decides:\n";
    json pj = json::array();
    for (size_t i = 0; i < parts.size(); ++i) {
      Verdict v = decide(p, parts[i]);
      t += std::string(i == again.facet ? "  > " : "    ") + std::string(action_name(parts[i].action)) + " " +
           db::escape_for_terminal(parts[i].path) + ": " + verdict_text(v) + "\n";
      pj.push_back({{"action", action_name(parts[i].action)},
                    {"path", db::to_valid_utf8(parts[i].path)},
                    {"verdict", decision_name(v.decision)},
                    {"rule", v.rule_id.empty() ? json(nullptr) : json(db::to_valid_utf8(v.rule_id))},
                    {"decided", i == again.facet}});
    }
    j["parts"] = pj;
  }
  t += "\n" + explanation_text(x, sources, layer);
  j["explanation"] = explanation_json(x, sources, layer);

  bool reproduced = again.verdict.decision == row.verdict.decision && again.verdict.rule_id == row.verdict.rule_id;
  j["reproduced"] = reproduced;
  if (!reproduced) {
    std::string why = "judged again, the policy says " + verdict_text(again.verdict) + " where the trail records " +
                      verdict_text(row.verdict);
    if (row.layer == Layer::Mount)
      why += ": a read-only mount refused the call under a name the rules did not see, in rule " + row.verdict.rule_id +
             "'s tree";
    uncertain.push_back(why);
  }
  PolicyReads reads = policy_reads(p);
  for (auto& m : missing_fields(*e, reads)) uncertain.push_back(std::move(m));
  std::vector<std::string> doubts = identity_doubts(*e, reads);
  if (!doubts.empty() && identity_matters(p, *e)) uncertain.insert(uncertain.end(), doubts.begin(), doubts.end());
  json uj = json::array();
  for (const auto& u : uncertain) {
    t += "note: " + db::to_valid_utf8(u) + "\n";
    uj.push_back(db::to_valid_utf8(u));
  }
  for (const auto& n : sp.notes) t += "note: " + db::to_valid_utf8(n) + "\n";
  j["uncertain"] = uj;
  j["notes"] = notes;
  r.json = std::move(j);
  return r;
}

Result<Report> why_query(const std::vector<std::pair<std::string, std::string>>& texts,
                         const std::map<std::string, std::string>& vars, const std::string& db_path,
                         const WhyQuery& q) {
  auto action = parse_action(q.action);
  if (!action) {
    std::string known;
    for (int i = 0; i < static_cast<int>(Action::Count); ++i)
      known += (known.empty() ? "" : ", ") + std::string(action_name(static_cast<Action>(i)));
    return Error{EINVAL, "unknown action '" + q.action + "' (known: " + known + ")"};
  }
  auto p = compile_texts(texts, vars, db_path);
  if (!p) return p.error();
  Event ev;
  ev.action = *action;
  ev.path = q.path;
  if (!ev.path.empty() && ev.path[0] != '/' && ev.path.find(':') == std::string::npos) ev.path = absolute(ev.path);
  ev.target = q.target;
  ev.is_dir = q.is_dir;
  ev.proc_deletes = q.deletes;
  auto info = std::make_shared<ProcessInfo>();
  info->comm = q.process;
  // The question names the process: it is asked as that program's identity.
  if (!q.process.empty()) info->names = {q.process};
  info->exe = q.exe;
  info->argv = q.argv;
  info->ancestors = q.ancestors;
  info->cwd = q.cwd.empty() ? default_vars().at("CWD") : q.cwd;
  info->uid = q.uid.value_or(getuid());
  ev.proc = std::move(info);

  Explanation x = explain(*p, ev);
  std::string layer = predicted_layer(*p, ev, x.verdict);
  Sources sources = sources_of(*p);
  Report r;
  r.text = std::string(action_name(ev.action)) + " " + db::escape_for_terminal(ev.path) +
           (q.process.empty() ? "" : " by " + db::escape_for_terminal(q.process)) + ": " +
           std::string(decision_name(x.verdict.decision)) + "\n\n" + explanation_text(x, sources, layer);
  json j = json::object();
  j["event"] = {{"action", action_name(ev.action)},
                {"path", db::to_valid_utf8(ev.path)},
                {"target", db::to_valid_utf8(ev.target)},
                {"process", db::to_valid_utf8(q.process)},
                {"ancestors", q.ancestors},
                {"deletes", q.deletes},
                {"is_dir", q.is_dir}};
  j["policy"] = {{"hash", p->hash}, {"files", p->files}};
  j["explanation"] = explanation_json(x, sources, layer);
  r.json = std::move(j);
  return r;
}

Result<Report> replay_sessions(db::Reader& reader, const std::vector<int64_t>& ids,
                               const std::vector<std::pair<std::string, std::string>>& texts,
                               const std::map<std::string, std::string>& vars) {
  if (ids.empty()) return Error{EINVAL, "no session to replay (give --session ID)"};
  std::vector<ReplaySession> sessions;
  std::string label;
  for (const auto& [n, t] : texts) label += (label.empty() ? "" : ", ") + db::to_valid_utf8(n);
  std::string hash;
  for (int64_t id : ids) {
    auto s = reader.session(id);
    if (!s) return s.error();
    auto events = session_events(reader, id);
    if (!events) return events.error();
    ReplaySession rs;
    rs.summary = std::move(*s);
    rs.events = std::move(*events);
    SessionPolicy sp = policy_of(reader, rs.summary);
    if (sp.recorded) {
      rs.original = std::move(sp.policy);
    } else {
      rs.original_problem = sp.notes.empty() ? "" : sp.notes.front();
    }
    auto next = compile_texts(texts, vars, reader.path(), sp.snapshot ? &*sp.snapshot : nullptr);
    if (!next) return next.error();
    hash = next->hash;
    rs.next = std::move(*next);
    sessions.push_back(std::move(rs));
  }
  ReplayReport rep = replay(sessions);
  Report r;
  r.text = replay_text(rep, sessions, label + " (sha256 " + short_hash(hash) + ")");
  r.json = replay_json(rep, sessions);
  r.json["policy"] = {{"hash", hash}, {"files", json::array()}};
  for (const auto& [n, t] : texts) r.json["policy"]["files"].push_back(db::to_valid_utf8(n));
  r.json["sessions"] = ids;
  return r;
}

Result<Report> suggest_for_session(db::Reader& reader, int64_t session, int64_t now_ns) {
  auto s = reader.session(session);
  if (!s) return s.error();
  auto events = session_events(reader, session);
  if (!events) return events.error();
  SessionPolicy sp = policy_of(reader, *s);
  const Policy* original = sp.recorded ? &*sp.policy : nullptr;
  // A process the session's policy did not trust is named by its file's
  // system name when that name finds this very file.
  Suggestion sug = suggest(*s, *events, original, now_ns,
                           [](const ProcessInfo& p) { return system_name_of(p.exe, p.identity.exe); });

  // Loaded as `cottonbox check` and `run` would load it: before the
  // session's own policy, or alone for an observed session.
  std::vector<std::pair<std::string, std::string>> texts{{"suggested.yaml", sug.yaml}};
  std::map<std::string, std::string> vars = default_vars();
  if (!sug.observe) {
    if (sp.snapshot) {
      for (const auto& f : sp.snapshot->files) texts.push_back(f);
      vars = sp.snapshot->vars;
    } else {
      auto files = read_policy_files(s->start.policy_files);
      if (files) texts.insert(texts.end(), files->begin(), files->end());
    }
  }
  auto next = compile_texts(texts, vars, reader.path(), sp.snapshot ? &*sp.snapshot : nullptr);
  if (!next)
    return Error{0, "the suggested policy does not load (a bug in cottonbox suggest):\n" + next.error().message};

  ReplaySession rs;
  rs.summary = *s;
  rs.events = std::move(*events);
  if (original) rs.original = std::move(sp.policy);
  rs.next = std::move(*next);
  std::vector<ReplaySession> one;
  one.push_back(std::move(rs));
  ReplayReport rep = replay(one);
  const auto& evs = one.front().events;

  std::set<int64_t> changed, target;
  for (const auto& c : rep.changes) changed.insert(evs[c.event].id);
  for (size_t i : sug.target) target.insert(evs[i].id);
  bool exact = changed == target;
  std::vector<int64_t> extra, missing;
  std::set_difference(changed.begin(), changed.end(), target.begin(), target.end(), std::back_inserter(extra));
  std::set_difference(target.begin(), target.end(), changed.begin(), changed.end(), std::back_inserter(missing));

  auto ids = [](const auto& v) {
    std::string out;
    for (auto id : v) out += (out.empty() ? "#" : ", #") + std::to_string(id);
    return out;
  };
  Report r;
  r.text = sug.yaml;
  r.text += "# checked: loads as a policy; replayed against session " + std::to_string(session) + ": " +
            replay_summary(rep) + "\n";
  if (exact)
    r.text += "#   it changes exactly the " + std::to_string(target.size()) + " events it is for" +
              (target.empty() ? "" : " (" + ids(target) + ")") + " and nothing else\n";
  if (!extra.empty()) r.text += "# WARNING: it would also change " + ids(extra) + "\n";
  if (!missing.empty()) r.text += "# WARNING: it does not change " + ids(missing) + ", which it is for\n";

  json j = json::object();
  j["session"] = session;
  j["observe"] = sug.observe;
  j["yaml"] = sug.yaml;
  json rules = json::array();
  for (const auto& rule : sug.rules) {
    json ev = json::array();
    for (size_t i : rule.events) ev.push_back(evs[i].id);
    rules.push_back({{"id", rule.id},
                     {"action", action_name(rule.action)},
                     {"paths", rule.paths},
                     {"processes", rule.processes},
                     {"events", ev}});
  }
  j["rules"] = rules;
  j["target"] = std::vector<int64_t>(target.begin(), target.end());
  j["left_out"] = sug.left_out;
  j["replay"] = replay_json(rep, one);
  j["exact"] = exact;
  r.json = std::move(j);
  return r;
}

int run_why_event(const std::string& db_path, int64_t event_id, bool as_json, std::ostream& out) {
  auto reader = db::Reader::open(db_path);
  if (!reader) return fail(reader.error());
  auto r = why_event(**reader, event_id);
  if (!r) return fail(r.error());
  print(*r, as_json, out);
  return 0;
}

int run_why_query(const std::vector<std::string>& policy_files, const std::map<std::string, std::string>& vars,
                  const std::string& db_path, const WhyQuery& q, bool as_json, std::ostream& out) {
  auto texts = read_policy_files(policy_files);
  if (!texts) return fail(texts.error());
  auto r = why_query(*texts, default_vars(vars), db_path, q);
  if (!r) return fail(r.error());
  print(*r, as_json, out);
  return 0;
}

int run_replay(const std::string& db_path, const std::vector<int64_t>& sessions,
               const std::vector<std::string>& policy_files, const std::map<std::string, std::string>& vars,
               bool as_json, std::ostream& out) {
  auto texts = read_policy_files(policy_files);
  if (!texts) return fail(texts.error());
  auto reader = db::Reader::open(db_path);
  if (!reader) return fail(reader.error());
  auto r = replay_sessions(**reader, sessions, *texts, default_vars(vars));
  if (!r) return fail(r.error());
  print(*r, as_json, out);
  return 0;
}

int run_suggest(const std::string& db_path, int64_t session, bool as_json, std::ostream& out) {
  auto reader = db::Reader::open(db_path);
  if (!reader) return fail(reader.error());
  int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto r = suggest_for_session(**reader, session, now);
  if (!r) return fail(r.error());
  print(*r, as_json, out);
  return 0;
}

}  // namespace cb::audit
