// The bodies of `cottonbox why`, `replay` and `suggest`, and what the MCP
// server's tools of the same names return: each computes a Report (text for
// people, JSON for programs) from the audit database; the run_* functions
// print one and return the exit status (0, or 125 after "cottonbox: why"
// on stderr).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "base/result.h"
#include "db/store.h"

namespace cb::audit {

struct Report {
  std::string text;
  nlohmann::json json;
};

// Which rule decided a recorded event, against the policy its session ran
// with (or, for a session from before that was recorded, its files as they
// are now, which the report says).
Result<Report> why_event(db::Reader& reader, int64_t event_id);

// Which rule would decide an event that has not happened.
struct WhyQuery {
  std::string action;  // file.delete, ...
  std::string path;
  std::string target;
  std::string process;  // comm
  std::string exe;
  std::vector<std::string> argv;
  std::vector<std::string> ancestors;  // nearest first
  std::string cwd;
  uint32_t deletes = 0;
  std::optional<uint32_t> uid;
  bool is_dir = false;
};
// `texts`: policies as (name, text) pairs, e.g. the files' contents.
Result<Report> why_query(const std::vector<std::pair<std::string, std::string>>& texts,
                         const std::map<std::string, std::string>& vars, const std::string& db_path, const WhyQuery& q);

// Replays the sessions against the policy texts.
Result<Report> replay_sessions(db::Reader& reader, const std::vector<int64_t>& sessions,
                               const std::vector<std::pair<std::string, std::string>>& texts,
                               const std::map<std::string, std::string>& vars);

// A policy learned from a session, loaded and replayed against it.
// Report::text is the YAML (with the replay's result as closing comments).
Result<Report> suggest_for_session(db::Reader& reader, int64_t session, int64_t now_ns);

// The files' contents, for the functions above; errors name the file.
Result<std::vector<std::pair<std::string, std::string>>> read_policy_files(const std::vector<std::string>& files);

int run_why_event(const std::string& db_path, int64_t event_id, bool json, std::ostream& out);
int run_why_query(const std::vector<std::string>& policy_files, const std::map<std::string, std::string>& vars,
                  const std::string& db_path, const WhyQuery& q, bool json, std::ostream& out);
int run_replay(const std::string& db_path, const std::vector<int64_t>& sessions,
               const std::vector<std::string>& policy_files, const std::map<std::string, std::string>& vars, bool json,
               std::ostream& out);
int run_suggest(const std::string& db_path, int64_t session, bool json, std::ostream& out);

}  // namespace cb::audit
