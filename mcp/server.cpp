#include "mcp/server.h"

#include <iostream>

#include "proto/protocol.h"

namespace cb::mcp {
namespace {

using nlohmann::json;

constexpr const char* kSupported[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
// A longer line is answered with an error without being parsed.
constexpr size_t kMaxLine = 16u << 20;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string error_line(const json& id, int code, const std::string& message) {
  return dump({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

std::string result_line(const json& id, json result) {
  return dump({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

}  // namespace

std::optional<std::string> Server::handle(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  if (line.empty()) return std::nullopt;
  if (line.size() > kMaxLine) return error_line(nullptr, -32600, "message too long");
  json msg = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) return error_line(nullptr, -32700, "parse error: not JSON");
  if (msg.is_array()) return error_line(nullptr, -32600, "invalid request: batches are not supported");
  if (!msg.is_object()) return error_line(nullptr, -32600, "invalid request: not an object");
  json id = msg.contains("id") ? msg["id"] : json(nullptr);
  bool is_request = msg.contains("id");
  if (is_request && !id.is_string() && !id.is_number_integer())
    return error_line(nullptr, -32600, "invalid request: id must be a string or an integer");
  if (!msg.contains("method")) {
    // A response to a request of ours: we send none, so there is nothing to match.
    if (msg.contains("result") || msg.contains("error")) return std::nullopt;
    return error_line(id, -32600, "invalid request: no method");
  }
  if (msg.value("jsonrpc", "") != "2.0" || !msg["method"].is_string())
    return error_line(id, -32600, "invalid request: needs \"jsonrpc\": \"2.0\" and a string method");
  std::string method = msg["method"];
  json params = msg.contains("params") ? msg["params"] : json::object();
  if (!params.is_object())
    return is_request ? std::optional(error_line(id, -32602, "params must be an object")) : std::nullopt;

  if (!is_request) {
    if (method == "notifications/initialized") initialized_ = true;
    return std::nullopt;  // notifications/cancelled and others: nothing to do
  }
  if (method == "initialize") {
    std::string wanted = params.contains("protocolVersion") && params["protocolVersion"].is_string()
                             ? params["protocolVersion"].get<std::string>()
                             : "";
    std::string version(kLatestProtocol);
    for (const char* v : kSupported)
      if (wanted == v) version = v;
    return result_line(
        id, {{"protocolVersion", version},
             {"capabilities", {{"tools", {{"listChanged", false}}}}},
             {"serverInfo",
              {{"name", "cottonbox"}, {"title", "cottonbox audit trail"}, {"version", proto::software_version()}}},
             {"instructions",
              "Read-only tools over cottonbox's audit database: the sessions of supervised agents, their events "
              "and process trees, why each decision was made, and what another policy would decide. Nothing here "
              "approves or changes anything. Large results come in pages: pass next_cursor back as cursor."}});
  }
  if (method == "ping") return result_line(id, json::object());
  if (method == "tools/list") {
    if (params.contains("cursor") && !params["cursor"].is_null())
      return error_line(id, -32602, "invalid cursor: the tool list has one page");
    return result_line(id, {{"tools", tools_.list()}});
  }
  if (method == "tools/call") {
    if (!params.contains("name") || !params["name"].is_string())
      return error_line(id, -32602, "tools/call needs a string \"name\"");
    json args = params.contains("arguments") ? params["arguments"] : json::object();
    if (args.is_null()) args = json::object();
    if (!args.is_object()) return error_line(id, -32602, "tools/call \"arguments\" must be an object");
    std::string name = params["name"];
    if (!tools_.has(name)) return error_line(id, -32602, "unknown tool: " + name);
    return result_line(id, tools_.call(name, args));
  }
  return error_line(id, -32601, "method not found: " + method);
}

int run_mcp(const std::string& db_path, std::istream& in, std::ostream& out) {
  Server server{Tools(db_path)};
  std::string line;
  while (std::getline(in, line)) {
    if (auto reply = server.handle(line)) {
      out << *reply << '\n';
      out.flush();
      if (!out) return 0;
    }
  }
  return 0;
}

}  // namespace cb::mcp
