#include "net/policy_judge.h"

#include <algorithm>

namespace cb::net {
namespace {

// Can `r` match a connection whose object is an IP address?  A path
// pattern that names unix sockets cannot; any other may.
bool paths_may_match_ip(const Rule& r) {
  if (r.paths.empty()) return true;
  return std::any_of(r.paths.begin(), r.paths.end(), [](const Glob& g) { return !g.text().starts_with("unix:"); });
}

enum class Match { No, Maybe, Yes };

// Does `r` match a connect to this lookup's name (asked, chain) or its
// addresses, as far as the name and addresses tell?
Match host_match(const Rule& r, const Lookup& l) {
  if (r.hosts.empty()) return Match::Yes;
  bool by_address_only_unknown = false;
  for (const auto& h : r.hosts) {
    if (h.kind == HostPattern::Kind::Address) {
      if (!l.answer) {
        by_address_only_unknown = true;
        continue;
      }
      for (const auto& a : l.answer->addresses)
        if (h.match_addr(a.addr)) return Match::Yes;
      continue;
    }
    if (h.match_name(l.name)) return Match::Yes;
    // A protecting rule also sees the names on the chain (decide() does).
    if (r.decision != Decision::Allow && l.answer)
      for (const auto& c : l.answer->chain)
        if (h.match_name(c)) return Match::Yes;
  }
  return by_address_only_unknown ? Match::Maybe : Match::No;
}

}  // namespace

LookupVerdict judge_lookup(const Policy& p, const Lookup& l) {
  for (const auto& r : p.rules) {
    if (!(r.actions & bit(Action::NetConnect))) continue;
    if (!paths_may_match_ip(r)) continue;
    Match m = host_match(r, l);
    if (m == Match::No) continue;
    if (r.decision == Decision::Deny) {
      bool everyone_every_port = r.processes.empty() && !r.when && r.ports.empty() && r.paths.empty();
      if (m == Match::Yes && everyone_every_port && !r.hosts.empty()) return LookupVerdict::Refuse;
      // A denial that may not hold for every connection allows none:
      // whatever it leaves is for the rules after it.
      continue;
    }
    // A rule that may allow, ask or log some connection to the name: the
    // connection is judged when it happens.
    return LookupVerdict::Allow;
  }
  return LookupVerdict::Allow;
}

std::function<LookupVerdict(const Lookup&)> policy_judge(const Policy& p) {
  return [&p](const Lookup& l) { return judge_lookup(p, l); };
}

}  // namespace cb::net
