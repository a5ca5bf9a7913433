// The pure decision and what can be derived from a compiled Policy.
#include <algorithm>
#include <optional>

#include "policy/match.h"
#include "policy/policy.h"

namespace cb {
namespace {

using match_detail::at_or_below;
using match_detail::path_matches;
using match_detail::process_matches;

constexpr std::string_view kSelfProtectFiles = "cottonbox:self-protect-files";
constexpr std::string_view kSelfProtectControl = "cottonbox:self-protect-control";
constexpr std::string_view kSelfProtectConfig = "cottonbox:self-protect-config";
constexpr std::string_view kSelfProtectTrail = "cottonbox:self-protect-trail";
constexpr std::string_view kLayers = "cottonbox:layers";

using match_detail::host_matches;
using match_detail::port_matches;

bool unconditional(const Rule& r) { return r.processes.empty() && !r.when && r.hosts.empty() && r.ports.empty(); }

// The deepest directory at or below which every match of `globs` lies; ""
// when there is none but "/".
std::string common_anchor(const std::vector<Glob>& globs) {
  std::string common;
  bool first = true;
  for (const auto& g : globs) {
    const std::string& base = g.literal_base();
    // "unix:/run/x", a relative pattern or one that starts with a wildcard.
    if (base.empty() || base[0] != '/') return "";
    if (first) {
      common = base;
      first = false;
      continue;
    }
    // The deepest directory both lie at or below.
    while (!at_or_below(base, common)) {
      size_t slash = common.rfind('/');
      common.resize(slash == 0 ? 1 : slash);
    }
  }
  return common == "/" ? "" : common;
}

// Could `r` match some event whose path is `root` or below it?  Judged by
// literal bases only, so the answer errs towards yes.
bool may_match_below(const Rule& r, std::string_view root) {
  if (r.paths.empty()) return true;
  for (const auto& g : r.paths) {
    const std::string& base = g.literal_base();
    if (base.empty() || at_or_below(base, root) || at_or_below(root, base)) return true;
  }
  return false;
}

// Does `r` deny `actions` for every event at or below `root`, whoever causes it?
bool denies_whole_tree(const Rule& r, std::string_view root) {
  if (r.decision != Decision::Deny || !unconditional(r)) return false;
  for (const auto& g : r.paths)
    if (g.is_whole_tree() && at_or_below(root, g.literal_base())) return true;
  return false;
}

std::string action_names(ActionMask m) {
  if (m == kAllActions) return "* (every action)";
  std::string out;
  for (int i = 0; i < static_cast<int>(Action::Count); ++i) {
    if (!(m & (ActionMask{1} << i))) continue;
    if (!out.empty()) out += ", ";
    out += action_name(static_cast<Action>(i));
  }
  return out;
}

}  // namespace

bool in_keep_scope(const KeepScope& k, std::string_view path) {
  bool in = false;
  for (const auto& g : k.paths)
    if (g.match(path)) {
      in = true;
      break;
    }
  if (!in) return false;
  for (const auto& g : k.except)
    if (g.match(path)) return false;
  return true;
}

Verdict decide(const Policy& p, const Event& ev) {
  if (!ev.breaks_layer.empty())
    return Verdict{Decision::Deny, std::string(kLayers), ev.breaks_layer + " (no rule can allow that)", true};
  const ActionMask a = bit(ev.action);
  // An event whose producer gave no network object still names its address
  // in its path (the text made from the very sockaddr that is checked and
  // carried out): read on the first rule that needs it, at most once.
  std::optional<NetObject> from_path;
  auto net = [&]() -> const NetObject& {
    if (ev.net.proto != NetProto::None) return ev.net;
    if (!from_path) from_path = net_object_from_path(ev.path);
    return *from_path;
  };
  bool destroys = a & kDestroys;
  // Other names of the same file (hard links) are in scope as the file is:
  // truncating a kept file through a link elsewhere destroys the kept one.
  auto in_scope = [&] {
    if (in_keep_scope(p.keep, ev.path)) return true;
    return std::any_of(ev.aliases.begin(), ev.aliases.end(),
                       [&](const std::string& alias) { return in_keep_scope(p.keep, alias); });
  };
  for (const auto& r : p.rules) {
    if (!(r.actions & a)) continue;
    if (!r.paths.empty() && !path_matches(r, ev)) continue;
    if (!r.hosts.empty() && !host_matches(r, net())) continue;
    if (!r.ports.empty() && !port_matches(r, net())) continue;
    if (!r.processes.empty() && !process_matches(r, ev)) continue;
    if (r.when && !eval_expr(*r.when, ev)) continue;
    Verdict v{r.decision, r.id, r.message, r.builtin()};
    v.keep = destroys && (r.keep ? *r.keep : in_scope());
    return v;
  }
  Verdict v{p.default_decision, {}, {}, false};
  v.keep = destroys && in_scope();
  return v;
}

void index_rules(Policy& p) {
  for (auto& r : p.rules) r.anchor = common_anchor(r.paths);
  for (auto& t : p.taints) t.anchor = common_anchor(t.paths);
}

uint64_t taint_bits(const Policy& p, std::string_view path) {
  uint64_t bits = 0;
  for (size_t i = 0; i < p.taints.size(); ++i) {
    const TaintList& t = p.taints[i];
    if (!t.anchor.empty() && !at_or_below(path, t.anchor)) continue;
    for (const auto& g : t.paths) {
      if (g.match(path)) {
        bits |= uint64_t{1} << i;
        break;
      }
    }
  }
  return bits;
}

ActionMask actions_needing_decision(const Policy& p) {
  ActionMask m = 0;
  if (p.default_decision == Decision::Deny || p.default_decision == Decision::Ask) m = kAllActions;
  for (const auto& r : p.rules)
    if (r.decision == Decision::Deny || r.decision == Decision::Ask) m |= r.actions;
  return m;
}

ActionMask actions_logged(const Policy& p) {
  ActionMask m = 0;
  for (const auto& r : p.rules)
    if (r.decision == Decision::Log) m |= r.actions;
  return m;
}

void add_self_protection(Policy& p, const SelfProtection& sp) {
  // Idempotent: a second call replaces the first call's rules.
  std::erase_if(p.rules, [](const Rule& r) {
    return r.kind == Builtin::SelfProtectFiles || r.kind == Builtin::SelfProtectTrail ||
           r.kind == Builtin::SelfProtectControl || r.kind == Builtin::SelfProtectConfig;
  });
  std::vector<Rule> front;
  auto add_glob = [](Rule& r, const std::string& pattern) {
    auto g = Glob::compile(pattern);
    if (g) r.paths.push_back(std::move(g.value()));
  };
  if (!sp.protected_files.empty()) {
    Rule r;
    r.id = kSelfProtectFiles;
    r.actions = kFileMutate;
    for (const auto& f : sp.protected_files)
      if (!f.empty()) add_glob(r, Glob::escape(f));
    r.decision = Decision::Deny;
    r.message = "the audit trail and the policy of this session cannot be modified";
    r.kind = Builtin::SelfProtectFiles;
    // Never a rule without paths: that would deny every file mutation.
    if (!r.paths.empty()) front.push_back(std::move(r));
  }
  if (!sp.trail_files.empty()) {
    Rule r;
    r.id = kSelfProtectTrail;
    r.actions = bit(Action::FileRead);
    for (const auto& f : sp.trail_files)
      if (!f.empty()) add_glob(r, Glob::escape(f));
    r.decision = Decision::Deny;
    r.message = "this session's own audit trail cannot be read from it";
    r.kind = Builtin::SelfProtectTrail;
    if (!r.paths.empty()) front.push_back(std::move(r));
  }
  if (!sp.protected_dirs.empty()) {
    Rule r;
    r.id = kSelfProtectControl;
    // net.send too: a datagram sent to a socket path there is a connection to it.
    r.actions = kFileMutate | bit(Action::NetConnect) | bit(Action::NetBind) | bit(Action::NetSend);
    for (const auto& d : sp.protected_dirs) {
      if (d.empty()) continue;
      std::string dir = d;
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      std::string escaped = dir == "/" ? "" : Glob::escape(dir);
      add_glob(r, escaped + "/**");
      add_glob(r, "unix:" + escaped + "/**");
    }
    r.decision = Decision::Deny;
    r.message = "cottonbox's runtime files (the control socket, the tracer's cache) cannot be touched";
    r.kind = Builtin::SelfProtectControl;
    if (!r.paths.empty()) front.push_back(std::move(r));
  }
  if (!sp.config_paths.empty()) {
    Rule r;
    r.id = kSelfProtectConfig;
    r.actions = kFileMutate;
    for (const auto& c : sp.config_paths) {
      if (c.empty() || c[0] != '/') continue;
      std::string path = c;
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      if (path == "/") continue;
      // The name itself (created, replaced, moved) and everything below
      // it: a trailing /** matches the directory itself too, and one glob
      // per tree lets the planner enforce it with a read-only mount.
      add_glob(r, Glob::escape(path) + "/**");
    }
    r.decision = Decision::Deny;
    r.message = "cottonbox's own configuration (what it loads next time) cannot be changed from a session";
    r.kind = Builtin::SelfProtectConfig;
    if (!r.paths.empty()) front.push_back(std::move(r));
  }
  p.rules.insert(p.rules.begin(), std::make_move_iterator(front.begin()), std::make_move_iterator(front.end()));
  index_rules(p);
}

void add_resolver_rule(Policy& p, const IpAddr& addr, uint16_t port) {
  std::erase_if(p.rules, [](const Rule& r) { return r.kind == Builtin::Resolver; });
  Rule r;
  r.id = "cottonbox:resolver";
  r.actions = bit(Action::NetConnect) | bit(Action::NetSend);
  HostPattern h;
  h.kind = HostPattern::Kind::Address;
  h.cidr = Cidr{addr, static_cast<uint8_t>(addr.family == 4 ? 32 : 128)};
  h.text = h.cidr.text();
  r.hosts.push_back(std::move(h));
  r.ports.push_back(PortRange{port, port});
  r.decision = Decision::Allow;
  r.message = "the session's own resolver: each lookup is judged there, by the name asked";
  r.kind = Builtin::Resolver;
  p.rules.insert(p.rules.begin(), std::move(r));
  index_rules(p);
}

std::vector<StaticDenial> static_denials(const Policy& p) {
  std::vector<StaticDenial> out;
  auto emit = [&out](const std::string& root, ActionMask actions, const Rule& by) {
    if (actions == 0) return;
    // Already implied by an entry of the same rule on a containing tree.
    for (const auto& d : out)
      if (d.rule_id == by.id && at_or_below(root, d.root) && (actions & ~d.actions) == 0) return;
    out.push_back(StaticDenial{root, actions, by.id, by.message});
  };
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const Rule& r = p.rules[i];
    if (r.decision != Decision::Deny || !unconditional(r)) continue;
    for (const auto& g : r.paths) {
      if (!g.is_whole_tree()) continue;
      const std::string& root = g.literal_base();
      if (!root.starts_with("/")) continue;  // "unix:/run/**" is no directory
      ActionMask remaining = r.actions & kFileMutate;
      // Actions an earlier rule already denies everywhere below root: the
      // kernel may enforce them too, but in the earlier rule's name.
      std::vector<std::pair<const Rule*, ActionMask>> claimed;
      for (size_t j = 0; j < i && remaining; ++j) {
        const Rule& e = p.rules[j];
        ActionMask both = e.actions & remaining;
        if (!both || !may_match_below(e, root)) continue;
        if (denies_whole_tree(e, root)) claimed.emplace_back(&e, both);
        // Anything else that could match might decide otherwise: leave it to
        // the supervisor.
        remaining &= ~both;
      }
      for (const auto& [by, actions] : claimed) emit(root, actions, *by);
      emit(root, remaining, r);
    }
  }
  return out;
}

std::string describe_rule(const Rule& r) {
  std::string out = "rule " + r.id + (r.builtin() ? " (built-in)" : "") + "\n";
  out += "  decision: " + std::string(decision_name(r.decision)) + "\n";
  out += "  actions:  " + action_names(r.actions) + "\n";
  if (r.paths.empty()) {
    out += "  paths:    any\n";
  } else {
    out += "  paths:    ";
    for (size_t i = 0; i < r.paths.size(); ++i) {
      if (i > 0) out += "\n            ";
      out += r.paths[i].text();
    }
    out += "\n";
  }
  if (!r.hosts.empty()) {
    out += "  hosts:    ";
    for (size_t i = 0; i < r.hosts.size(); ++i) out += (i > 0 ? ", " : "") + r.hosts[i].text;
    out += "\n";
  }
  if (!r.ports.empty()) {
    out += "  ports:    ";
    for (size_t i = 0; i < r.ports.size(); ++i) out += (i > 0 ? ", " : "") + r.ports[i].text();
    out += "\n";
  }
  if (!r.processes.empty()) {
    out += "  process:  ";
    for (size_t i = 0; i < r.processes.size(); ++i) out += (i > 0 ? ", " : "") + r.processes[i];
    out += "\n";
  }
  if (r.when) out += "  when:     " + expr_to_string(*r.when) + "\n";
  if (!r.message.empty()) out += "  message:  " + r.message + "\n";
  if (r.loc.line > 0)
    out += "  defined:  " + r.loc.file + ":" + std::to_string(r.loc.line) + ":" + std::to_string(r.loc.col) + "\n";
  return out;
}

}  // namespace cb
