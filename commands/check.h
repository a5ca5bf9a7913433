// `cottonbox check`: validates policies and shows each compiled rule with the
// layer that will enforce it on this machine, and what reaches the supervisor.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "plan/layers.h"

namespace cb {

// Returns the exit status: 0, or 125 when a policy has errors (printed with
// file:line:col on stderr).
// `keep` plans as `run` does by default (false: as `run --no-keep`);
// `layers` as `run --layers` does.
int run_check(const std::vector<std::string>& policy_files, const std::map<std::string, std::string>& vars,
              const std::string& db_path, bool json, std::ostream& out, bool keep = true, const Layers& layers = {});

}  // namespace cb
