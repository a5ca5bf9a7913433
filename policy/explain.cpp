#include "policy/explain.h"

#include "policy/match.h"

namespace cb {
namespace {

using match_detail::at_or_below;

constexpr size_t kMaxListed = 6;

std::string mask_names(ActionMask m) {
  if (m == kAllActions) return "* (every action)";
  std::string out;
  for (int i = 0; i < static_cast<int>(Action::Count); ++i) {
    if (!(m & (ActionMask{1} << i))) continue;
    if (!out.empty()) out += ", ";
    out += action_name(static_cast<Action>(i));
  }
  return out;
}

std::string glob_list(const Rule& r) {
  std::string out;
  for (size_t i = 0; i < r.paths.size(); ++i) {
    if (i == kMaxListed) return out + ", ... (" + std::to_string(r.paths.size() - i) + " more)";
    out += (i ? ", " : "") + r.paths[i].text();
  }
  return out;
}

std::string name_list(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i == kMaxListed) return out + ", ... (" + std::to_string(v.size() - i) + " more)";
    out += (i ? ", " : "") + v[i];
  }
  return out;
}

// Why path_matches() said what it said (it decided; this only finds words).
std::string path_detail(const Rule& r, const Event& ev, bool held) {
  if (!held) {
    std::string s = ev.path + " matches none of " + glob_list(r);
    if (!ev.aliases.empty()) s += " (nor do its other names)";
    return s;
  }
  bool whole_dir = ev.is_dir && (ev.action == Action::FileDelete || ev.action == Action::FileRename) &&
                   (r.decision == Decision::Deny || r.decision == Decision::Ask);
  for (const auto& g : r.paths) {
    if (g.match(ev.path)) return ev.path + " matches " + g.text();
    for (const auto& alias : ev.aliases)
      if (g.match(alias)) return ev.path + " is also " + alias + ", which matches " + g.text();
    if (whole_dir && g.covers_below(ev.path))
      return "the directory " + ev.path + " holds what " + g.text() + " protects";
  }
  return ev.path + " matches " + glob_list(r);
}

std::string process_detail(const Rule& r, const Event& ev, bool held) {
  if (!ev.proc) return "no process is known for the event; the rule names " + name_list(r.processes);
  // The identity decides; the command name is shown to say who it was.
  std::string who = "'" + ev.proc->comm + "'";
  if (ev.proc->names.empty()) {
    const std::string& why = ev.proc->identity.why;
    who += " (no identity: " +
           (!why.empty()           ? why
            : ev.proc->exe.empty() ? std::string("executable unknown")
                                   : ev.proc->exe) +
           ")";
    return who + " is none of " + name_list(r.processes);
  }
  std::string ids;
  for (const auto& n : ev.proc->names) ids += (ids.empty() ? "" : ", ") + n;
  if (ids != ev.proc->comm) who += " (" + ids + ")";
  return who + (held ? " is one of " : " is none of ") + name_list(r.processes);
}

RuleTrace trace_rule(const Rule& r, size_t index, const Event& ev) {
  RuleTrace t;
  t.index = index;
  t.rule = &r;
  const ActionMask a = bit(ev.action);
  bool action = (r.actions & a) != 0;
  t.checks.push_back(
      {RuleCheck::Kind::Action,
       action,
       std::string(action_name(ev.action)) + (action ? " is one of " : " is not one of ") + mask_names(r.actions),
       {}});
  if (!action) return t;
  if (!r.paths.empty()) {
    bool held = match_detail::path_matches(r, ev);
    t.checks.push_back({RuleCheck::Kind::Path, held, path_detail(r, ev, held), {}});
    if (!held) return t;
  }
  if (!r.processes.empty()) {
    bool held = match_detail::process_matches(r, ev);
    t.checks.push_back({RuleCheck::Kind::Process, held, process_detail(r, ev, held), {}});
    if (!held) return t;
  }
  if (r.when) {
    RuleCheck c{RuleCheck::Kind::When, false, r.when_text, {}};
    c.held = eval_expr_traced(*r.when, ev, c.steps);
    t.checks.push_back(std::move(c));
    if (!t.checks.back().held) return t;
  }
  t.matched = true;
  return t;
}

}  // namespace

std::string_view rule_check_name(RuleCheck::Kind k) {
  switch (k) {
    case RuleCheck::Kind::Action: return "action";
    case RuleCheck::Kind::Path: return "path";
    case RuleCheck::Kind::Process: return "process";
    case RuleCheck::Kind::When: return "when";
  }
  return "?";
}

Explanation explain(const Policy& p, const Event& ev) {
  Explanation x;
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const Rule& r = p.rules[i];
    RuleTrace t = trace_rule(r, i, ev);
    if (t.matched) {
      x.verdict = Verdict{r.decision, r.id, r.message, r.builtin()};
      x.decided = std::move(t);
      return x;
    }
    if (t.checks.size() == 1)
      ++x.other_actions;
    else
      x.passed.push_back(std::move(t));
  }
  x.verdict = Verdict{p.default_decision, {}, {}, false};
  return x;
}

std::string predicted_layer(const Policy& p, const Event& ev, const Verdict& v) {
  if (v.builtin) return "builtin";
  const ActionMask a = bit(ev.action);
  if (v.decision == Decision::Deny && !v.rule_id.empty()) {
    for (const auto& sd : static_denials(p))
      if (sd.rule_id == v.rule_id && (sd.actions & a) && at_or_below(ev.path, sd.root)) return "mount";
  }
  if (v.decision == Decision::Allow && !(actions_needing_decision(p) & a) && !(actions_logged(p) & a)) return "filter";
  return "notify";
}

std::string rule_source_text(const Rule& r, std::string_view text) {
  if (r.loc.line <= 0) return "";
  // The line the rule's mapping starts on, then every line indented at
  // least as far as its keys (blank lines and comments included), up to
  // the next entry.
  size_t pos = 0;
  for (int line = 1; line < r.loc.line && pos != std::string_view::npos; ++line) {
    pos = text.find('\n', pos);
    if (pos != std::string_view::npos) ++pos;
  }
  if (pos == std::string_view::npos || pos >= text.size()) return "";
  size_t key_indent = r.loc.col > 0 ? static_cast<size_t>(r.loc.col - 1) : 0;
  std::vector<std::string_view> lines;
  size_t keep = 0;  // lines up to the last one with content
  for (int n = 0; pos < text.size() && n < 60; ++n) {
    size_t end = text.find('\n', pos);
    std::string_view l = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    size_t indent = l.find_first_not_of(' ');
    bool blank = indent == std::string_view::npos;
    if (n > 0 && !blank && indent < key_indent) break;
    lines.push_back(l);
    if (!blank && l[indent] != '#') keep = lines.size();
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  std::string out;
  for (size_t i = 0; i < keep; ++i) out += std::string(lines[i]) + "\n";
  return out;
}

}  // namespace cb
