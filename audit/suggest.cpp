#include "audit/suggest.h"

#include <algorithm>
#include <map>
#include <set>

#include "audit/judge.h"
#include "audit/rule_text.h"
#include "db/bytes.h"
#include "db/json.h"
#include "db/report.h"
#include "policy/glob.h"

namespace cb::audit {
namespace {

constexpr size_t kEventsInComment = 3;

bool allows(Decision d) { return d == Decision::Allow || d == Decision::Log; }

std::string dirname_of(const std::string& p) {
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : p.substr(0, slash);
}

bool is_address(Action a) { return a == Action::NetConnect || a == Action::NetBind; }
bool is_file_action(Action a) { return (bit(a) & parse_action_or_group("file.*")) != 0; }

// "tcp:10.0.0.1" of "tcp:10.0.0.1:443"; "" when there is no port.
std::string host_of(const std::string& addr) {
  if (addr.starts_with("unix:")) return "";
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0) return "";
  return addr.substr(0, colon);
}

// One part of a call: as the session judged it, and with its process
// named as the suggested rules will know it (`named`: the same but for a
// process that had no identity and that the namer found a name for).
struct Need {
  size_t event = 0;
  Event ev;
  Event named;
};

struct Group {
  Action action;
  std::string where;  // the directory, or the host
  std::set<std::string> processes;
  std::set<std::string> nameless;  // processes without an identity: "'comm' (why)"
  std::set<std::string> paths;
  std::vector<size_t> events;
  std::vector<Need> needs;
};

// The rule `paths`/`processes` would be, compiled, for testing events.
Policy trial_policy(Action a, const std::vector<std::string>& paths, const std::vector<std::string>& processes) {
  Policy p;
  p.default_decision = Decision::Log;  // a sentinel: "the rule did not match"
  Rule r;
  r.id = "trial";
  r.actions = bit(a);
  r.decision = Decision::Allow;
  for (const auto& t : paths)
    if (auto g = Glob::compile(t)) r.paths.push_back(std::move(*g));
  r.processes = processes;
  p.rules.push_back(std::move(r));
  index_rules(p);
  return p;
}

std::string comm_of(const Event& ev) { return ev.proc ? ev.proc->comm : ""; }

std::string command_of(const db::StoredEvent& e) {
  const Event& ev = e.row.ev;
  if (ev.proc && !ev.proc->argv.empty()) {
    std::string cmd = db::shell_join(ev.proc->argv);
    return cmd.size() > 100 ? cmd.substr(0, 97) + "..." : cmd;
  }
  return db::escape_for_terminal(comm_of(ev));
}

std::string answer_of(const db::StoredEvent& e) {
  if (e.approval) return e.approval->answer + " by " + e.approval->answered_by;
  return "an earlier answer for its process tree";
}

}  // namespace

bool asked_and_allowed(const db::StoredEvent& e) {
  return e.row.verdict.decision == Decision::Ask && e.row.allowed && e.row.enforced;
}

Suggestion suggest(const db::SessionSummary& s, const std::vector<db::StoredEvent>& events, const Policy* original,
                   int64_t now_ns, const ProgramNamer& namer) {
  Suggestion out;
  out.observe = s.start.observe;

  // The name a rule knows a process by: its identity, or a name found for a
  // file the session's policy did not trust (never for a process that ran
  // code other than its file's).  Once per process image: the namer looks.
  // (Each entry holds its image, so that no other can take its address.)
  std::map<const ProcessInfo*, std::pair<std::shared_ptr<const ProcessInfo>, std::string>> program_cache;
  auto program_of = [&](const Event& ev) -> std::string {
    if (!ev.proc) return "";
    if (!ev.proc->names.empty()) return ev.proc->names.front();
    if (!namer || ev.proc->identity.check != IdentityCheck::NotTrusted) return "";
    auto [it, fresh] = program_cache.try_emplace(ev.proc.get());
    if (fresh) it->second = {ev.proc, namer(*ev.proc)};
    return it->second.second;
  };
  auto need = [&](size_t i, Event ev) {
    Need n{i, ev, std::move(ev)};
    if (n.named.proc && n.named.proc->names.empty()) {
      if (std::string name = program_of(n.ev); !name.empty()) {
        auto p = std::make_shared<ProcessInfo>(*n.named.proc);
        p->names = {name};
        n.named.proc = std::move(p);
      }
    }
    return n;
  };

  // The parts of calls that must become allowed, and the events they are for.
  std::vector<bool> wanted(events.size(), false);
  std::vector<Need> needs;
  for (size_t i = 0; i < events.size(); ++i) {
    const db::StoredEvent& e = events[i];
    if (e.row.verdict.builtin || decided_by_filter_alone(e)) continue;
    if (out.observe ? false : !asked_and_allowed(e)) continue;
    auto parts = judged_events(e, original ? &original->identities : nullptr);
    bool any = false;
    for (size_t f = 0; f < parts.size(); ++f) {
      bool refused;
      if (out.observe)
        refused = true;  // a standalone policy: everything seen needs its rule
      else if (original)
        refused = !allows(decide(*original, parts[f]).decision);
      else
        refused = f == 0;
      if (!refused) continue;
      needs.push_back(need(i, parts[f]));
      any = true;
    }
    if (any) wanted[i] = true;
  }

  // What must not change: every part of every other event that was not
  // allowed.  (Observe: nothing; a standalone policy allows all it saw.)
  std::vector<Need> keep;
  if (!out.observe) {
    for (size_t i = 0; i < events.size(); ++i) {
      if (wanted[i]) continue;
      const db::StoredEvent& e = events[i];
      if (allows(e.row.verdict.decision)) continue;
      for (auto& ev : judged_events(e, original ? &original->identities : nullptr))
        keep.push_back(need(i, std::move(ev)));
    }
  }
  auto conflicts = [&](Action a, const std::vector<std::string>& paths, const std::vector<std::string>& procs,
                       std::string* with) {
    Policy trial = trial_policy(a, paths, procs);
    for (const auto& k : keep) {
      if (decide(trial, k.named).decision != Decision::Allow) continue;
      if (original && allows(decide(*original, k.ev).decision)) continue;
      if (with) *with = "#" + std::to_string(events[k.event].id) + " " + command_of(events[k.event]);
      return true;
    }
    return false;
  };

  // The files each name was seen running: a standalone (observe) policy
  // declares them, as the session's policy may have.
  std::map<std::string, std::set<std::string>> files_of;
  // Group: same action, same directory (or host), and for asks the same process.
  std::map<std::tuple<Action, std::string, std::string>, Group> groups;
  for (auto& n : needs) {
    // A path no glob can name (none, or not absolute for a file action):
    // the rule names no path, only the action and the process.
    bool unnamed = n.ev.path.empty() || (is_file_action(n.ev.action) && n.ev.path[0] != '/');
    if (unnamed) n.ev.path.clear();
    std::string where = unnamed ? "" : is_address(n.ev.action) ? host_of(n.ev.path) : dirname_of(n.ev.path);
    if (unnamed) n.named.path.clear();
    std::string program = program_of(n.ev);
    std::string proc = out.observe ? "" : program;
    auto key = std::make_tuple(n.ev.action, where, proc);
    Group& g = groups.try_emplace(key, Group{n.ev.action, where, {}, {}, {}, {}, {}}).first->second;
    if (!program.empty())
      g.processes.insert(program);
    else if (n.ev.proc)
      g.nameless.insert("'" + comm_of(n.ev) + "' (" +
                        (!events[n.event].identity_recorded ? std::string("its identity was not recorded")
                         : n.ev.proc->identity.why.empty()  ? std::string("nothing is known of its file")
                                                            : n.ev.proc->identity.why) +
                        ")");
    if (!program.empty() && !n.ev.proc->exe.empty()) files_of[program].insert(n.ev.proc->exe);
    g.paths.insert(n.ev.path);
    if (g.events.empty() || g.events.back() != n.event) g.events.push_back(n.event);
    g.needs.push_back(std::move(n));
  }

  std::set<size_t> unsatisfied;
  std::map<std::string, int> serial;
  auto add_rule = [&](const Group& g, std::vector<std::string> globs, std::vector<std::string> procs,
                      const std::vector<size_t>& for_events) {
    SuggestedRule r;
    std::string base = "suggest-" + std::string(action_name(g.action));
    std::replace(base.begin(), base.end(), '.', '-');
    r.id = base + "-" + std::to_string(++serial[base]);
    r.action = g.action;
    r.paths = std::move(globs);
    r.processes = std::move(procs);
    r.events = for_events;
    if (out.observe) {
      r.comments.push_back("seen " + std::to_string(for_events.size()) + " time" + (for_events.size() == 1 ? "" : "s") +
                           " in the session");
    } else {
      std::set<std::string> rules, answers;
      for (size_t i : for_events) {
        rules.insert(events[i].row.verdict.rule_id.empty() ? "(the default)" : events[i].row.verdict.rule_id);
        answers.insert(answer_of(events[i]));
      }
      std::string rl, an;
      for (const auto& x : rules) rl += (rl.empty() ? "" : ", ") + x;
      for (const auto& x : answers) an += (an.empty() ? "" : "; ") + x;
      r.comments.push_back("asked by rule " + rl + ", allowed (" + an + ")");
    }
    if (r.processes.empty() && !g.nameless.empty())
      r.comments.push_back("for any process: " + *g.nameless.begin() +
                           (g.nameless.size() > 1 ? " and " + std::to_string(g.nameless.size() - 1) + " more" : "") +
                           " has no identity a rule could name");
    for (size_t k = 0; k < for_events.size() && k < kEventsInComment; ++k)
      r.comments.push_back("  event #" + std::to_string(events[for_events[k]].id) + ": " +
                           command_of(events[for_events[k]]));
    if (for_events.size() > kEventsInComment)
      r.comments.push_back("  ... and " + std::to_string(for_events.size() - kEventsInComment) + " more");
    out.rules.push_back(std::move(r));
  };

  for (auto& [key, g] : groups) {
    std::vector<std::string> procs;
    if (!out.observe && !std::get<2>(key).empty()) procs.push_back(std::get<2>(key));
    // Observed: named when one program did it all.
    if (out.observe && g.processes.size() == 1 && g.nameless.empty())
      procs.assign(g.processes.begin(), g.processes.end());
    // The wide form first: the directory's files, or the host's ports.
    if (g.paths.size() > 1 && !g.where.empty()) {
      std::string wide = is_address(g.action) ? exact_glob(g.where) + ":*"
                         : g.where == "/"     ? "/*"
                                              : exact_glob(g.where) + "/*";
      std::vector<std::string> globs{wide};
      // What `dir/*` does not reach ("/" itself) is named as it is.
      if (auto w = Glob::compile(wide))
        for (const auto& p : g.paths)
          if (!w->match(p)) globs.push_back(exact_glob(p));
      if (!conflicts(g.action, globs, procs, nullptr)) {
        add_rule(g, globs, procs, g.events);
        continue;
      }
    }
    if (g.paths.size() == 1 && g.paths.begin()->empty()) {
      if (!conflicts(g.action, {}, procs, nullptr)) add_rule(g, {}, procs, g.events);
      continue;
    }
    // Exact paths, each checked.
    std::vector<std::string> ok;
    for (const auto& p : g.paths) {
      std::string glob = exact_glob(p);
      std::string with;
      if (conflicts(g.action, {glob}, procs, &with)) {
        out.left_out.push_back(std::string(action_name(g.action)) + " " + db::to_valid_utf8(p) +
                               (procs.empty() ? "" : " by " + procs[0]) +
                               ": allowing it would also allow what the session refused (" + with + ")");
        for (const auto& n : g.needs)
          if (n.ev.path == p) unsatisfied.insert(n.event);
        continue;
      }
      ok.push_back(glob);
    }
    if (ok.empty()) continue;
    std::vector<size_t> covered;
    for (size_t i : g.events)
      if (!unsatisfied.count(i)) covered.push_back(i);
    add_rule(g, ok, procs, covered);
  }
  for (size_t i = 0; i < events.size(); ++i) {
    if (!wanted[i] || unsatisfied.count(i)) continue;
    if (out.observe && allows(events[i].row.verdict.decision) && events[i].row.verdict.decision != Decision::Log)
      continue;  // allowed before and after: unchanged
    out.target.push_back(i);
  }

  // The YAML.
  std::string y;
  std::string cmd = db::shell_join(s.start.argv);
  if (cmd.size() > 100) cmd = cmd.substr(0, 97) + "...";
  y += "# cottonbox suggest: learned from session " + std::to_string(s.id) + " (" + db::to_valid_utf8(cmd) + "), " +
       db::iso8601_utc(now_ns).substr(0, 16) + " UTC\n";
  if (out.observe) {
    y += "# An --observe session: this policy allows what the session did and asks about\n"
         "# everything else.  Use it on its own: cottonbox run --policy THIS.yaml -- ...\n";
  } else {
    y += "# Allows what the user allowed when asked.  Load it before the session's policy\n"
         "# (the first rule that matches decides):\n#   cottonbox run --policy THIS.yaml";
    for (const auto& f : s.start.policy_files) y += " --policy " + db::to_valid_utf8(f);
    y += " -- ...\n";
  }
  for (const auto& l : out.left_out) y += "# not suggested: " + l + "\n";
  y += "version: 1\n";
  if (out.observe) y += "default: ask\n";
  if (out.observe) {
    // Loaded alone, the policy trusts the very files the session ran under
    // each name (loaded with the session's, its declarations would clash).
    std::set<std::string> used;
    for (const auto& r : out.rules) used.insert(r.processes.begin(), r.processes.end());
    std::string decl;
    for (const auto& name : used) {
      std::string list;
      for (const auto& f : files_of[name])
        if (f.front() == '/' && f.find_first_of("*?[") == std::string::npos)
          list += (list.empty() ? "" : ", ") + yaml_quote(f);
      if (!list.empty()) decl += "  " + name + ": [" + list + "]\n";
    }
    if (!decl.empty()) y += "identities:\n" + decl;
  }
  if (out.rules.empty()) {
    y += "rules: []\n";
  } else {
    y += "rules:\n";
    for (const auto& r : out.rules) {
      y += "  - id: " + r.id + "\n";
      for (const auto& c : r.comments) y += "    # " + db::to_valid_utf8(c) + "\n";
      y += "    action: " + std::string(action_name(r.action)) + "\n";
      if (!r.paths.empty()) {
        y += "    path: [";
        for (size_t i = 0; i < r.paths.size(); ++i) y += (i ? ", " : "") + yaml_quote(r.paths[i]);
        y += "]\n";
      }
      if (!r.processes.empty()) {
        y += "    process: [";
        for (size_t i = 0; i < r.processes.size(); ++i) y += (i ? ", " : "") + yaml_quote(r.processes[i]);
        y += "]\n";
      }
      y += "    decision: allow\n";
    }
  }
  out.yaml = std::move(y);
  return out;
}

}  // namespace cb::audit
