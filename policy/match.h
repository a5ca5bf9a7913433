// The tests decide() makes of one rule, shared with explain() so that the
// explained decision can never drift from the fast one.  Inline: decide() is
// on the hot path and must keep them inlined.  Private to cb_policy.
#pragma once

#include <string_view>

#include "policy/policy.h"

namespace cb::match_detail {

inline std::string_view basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `a` is `b` or lies below it.
inline bool at_or_below(std::string_view a, std::string_view b) {
  if (b == "/") return a.starts_with("/");
  return a == b || (a.size() > b.size() && a.starts_with(b) && a[b.size()] == '/');
}

inline bool path_matches(const Rule& r, const Event& ev) {
  // Removing or renaming a directory removes or moves everything below it,
  // so a rule protecting something below applies.  Only a protecting rule
  // (deny, ask): an allow for ~/.cache/x must not allow moving all of ~.
  const bool protective = r.decision == Decision::Deny || r.decision == Decision::Ask;
  bool whole_dir = ev.is_dir && (ev.action == Action::FileDelete || ev.action == Action::FileRename) && protective;
  // A rename is judged by both ends: a directory moved to a protected name,
  // or above one, creates everything below it.  So does a symbolic link
  // made there (it shows its target's tree under the protected name).
  std::string_view placed;
  if (protective && ev.action == Action::FileRename && ev.is_dir && !ev.target.empty()) placed = ev.target;
  if (protective && ev.action == Action::FileLink && ev.syscall.starts_with("symlink")) placed = ev.path;
  if (!placed.empty()) {
    for (const auto& g : r.paths)
      if (g.match(placed) || g.covers_below(placed)) return true;
  }
  if (!r.anchor.empty()) {
    // Every match lies at or below the anchor; a directory above it may
    // hold a base (covers_below).  Nothing else can match.
    auto near = [&](std::string_view p) {
      if (at_or_below(p, r.anchor)) return true;
      if (!whole_dir) return false;
      while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);  // as covers_below() reads it
      return at_or_below(r.anchor, p);
    };
    bool any = near(ev.path);
    for (size_t i = 0; !any && i < ev.aliases.size(); ++i) any = near(ev.aliases[i]);
    if (!any) return false;
  }
  for (const auto& g : r.paths) {
    if (g.match(ev.path)) return true;
    for (const auto& alias : ev.aliases)
      if (g.match(alias)) return true;
    if (whole_dir && g.covers_below(ev.path)) return true;
  }
  return false;
}

// By identity (policy/identity.h), never by a name the process chose.
inline bool process_matches(const Rule& r, const Event& ev) {
  if (!ev.proc) return false;
  for (const auto& name : r.processes)
    for (const auto& id : ev.proc->names)
      if (name == id) return true;
  return false;
}

// `host:` and `port:` test the IP address of a network event.  An allow
// rule trusts only names a process asked for; a protecting rule also the
// names on the CNAME chains, so that a chain cannot lead around it.
inline bool host_matches(const Rule& r, const NetObject& n) {
  if (!n.ip()) return false;
  const auto& names = r.decision == Decision::Allow ? n.hosts : n.names;
  for (const auto& h : r.hosts) {
    if (h.kind == HostPattern::Kind::Address) {
      if (h.cidr.contains(n.addr)) return true;
      continue;
    }
    for (const auto& name : names)
      if (h.match_name(name)) return true;
  }
  return false;
}

inline bool port_matches(const Rule& r, const NetObject& n) {
  if (!n.ip()) return false;
  for (const auto& p : r.ports)
    if (p.contains(n.port)) return true;
  return false;
}

}  // namespace cb::match_detail
