// What a session could acquire: exceptions a policy grants on grounds a
// process controls, for `cottonbox check` to warn about.  Pure.
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace cb {

// One line each: an allow (or log) rule that trusts proc.comm, proc.exe or
// proc.argv (which a process chooses: prctl, a copy at a matching path,
// exec -a); an identity whose file someone other than root can change or
// replace (a session as that user could have planted it before the policy
// loaded); a name no file was found for.
std::vector<std::string> trust_warnings(const Policy& p);

}  // namespace cb
