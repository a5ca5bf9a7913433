// Which lookups the policy lets the session's resolver refuse: a name is
// refused at resolution only when a rule denies every connection to it
// (net.connect, by its name or, once answered, by an address it resolved
// to; whoever connects, on whatever port) and no rule before it may allow,
// ask about or log such a connection.  Then refusing the lookup changes no
// outcome, it only comes earlier (and a program hears "no such host"
// rather than "permission denied").  Every other name resolves, and each
// connection is judged as it happens.
#pragma once

#include <functional>

#include "net/resolver.h"
#include "policy/policy.h"

namespace cb::net {

// For a lookup of `l.name` (and, once answered, its chain and addresses).
// The policy must outlive the returned judge.
LookupVerdict judge_lookup(const Policy& p, const Lookup& l);

// ResolverOptions::judge for `p`.
std::function<LookupVerdict(const Lookup&)> policy_judge(const Policy& p);

}  // namespace cb::net
