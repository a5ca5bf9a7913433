// Where the policies of `why`, `replay` and `suggest` come from: the
// snapshot a session ran with (PolicySnapshot), or files named on the
// command line, compiled with the built-in rules a session would add.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "db/store.h"
#include "policy/policy.h"

namespace cb::audit {

// CWD, HOME and USER of this process, then `extra` (--var) over them: what
// `cottonbox run` gives a policy.
std::map<std::string, std::string> default_vars(const std::map<std::string, std::string>& extra = {});

// The policy a session ran with, exactly: its texts and vars loaded again,
// its self-protection added, and the hash checked against the session's.
Result<Policy> compile_snapshot(const PolicySnapshot& snap, const std::string& expected_hash = "");

// Policy files (or texts, as name/text pairs) with the built-in rules: the
// self-protection `protection` describes (a session's, from its snapshot,
// with these files in place of its own), or when null, the one a session
// on `db_path` would get.  Errors: every diagnostic, one a line.
Result<Policy> compile_files(const std::vector<std::string>& files, const std::map<std::string, std::string>& vars,
                             const std::string& db_path, const PolicySnapshot* protection = nullptr);
Result<Policy> compile_texts(const std::vector<std::pair<std::string, std::string>>& texts,
                             const std::map<std::string, std::string>& vars, const std::string& db_path,
                             const PolicySnapshot* protection = nullptr);

// The self-protection of a session on `db_path` guarding `policy_files`.
SelfProtection session_protection(const std::string& db_path, const std::vector<std::string>& policy_files);
// `snap`'s self-protection with its policy files replaced by `policy_files`.
SelfProtection snapshot_protection(const PolicySnapshot& snap, const std::vector<std::string>& policy_files);

}  // namespace cb::audit
