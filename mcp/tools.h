// The MCP server's tools: list_sessions, session_summary, query_events,
// process_tree, who_touched, who_contacted, why, replay and check_policy.
// Each returns a tools/call result: a text summary, the same data as JSON
// text, and as structuredContent.  Results that can be huge come in pages: the result's
// next_cursor, passed back as the cursor argument, continues where the page
// ended (events by id, so pages neither skip nor repeat while sessions
// keep recording).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cb::mcp {

class Tools {
 public:
  explicit Tools(std::string db_path) : db_(std::move(db_path)) {}
  nlohmann::json list() const;  // the tools/list "tools" array
  bool has(const std::string& name) const;
  // A CallToolResult; failures are results with isError.
  nlohmann::json call(const std::string& name, const nlohmann::json& args) const;

 private:
  std::string db_;
};

}  // namespace cb::mcp
