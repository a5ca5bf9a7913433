// `cottonbox mcp`: a Model Context Protocol server (revision 2025-11-25) on
// standard input and output, one JSON-RPC message a line.
//
// Read-only: its tools (tools.h) query the audit database and judge
// policies; none of them answers an ask, changes a rule or writes a byte.
// Protocol errors follow JSON-RPC (-32700 not JSON, -32600 not a request,
// -32601 no such method, -32602 bad parameters or no such tool); a tool
// that fails on good parameters (no such session, a policy with errors)
// returns a result with isError and the reason, for the model to act on.
#pragma once

#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "mcp/tools.h"

namespace cb::mcp {

constexpr std::string_view kLatestProtocol = "2025-11-25";

class Server {
 public:
  explicit Server(Tools tools) : tools_(std::move(tools)) {}
  // One line in; the line to write back, if any (notifications get none).
  std::optional<std::string> handle(std::string_view line);

 private:
  Tools tools_;
  bool initialized_ = false;
};

// Serves until standard input ends.  Returns the exit status.
int run_mcp(const std::string& db_path, std::istream& in, std::ostream& out);

}  // namespace cb::mcp
