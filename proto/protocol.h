// The GUI protocol (docs/protocol.md): JSON lines over a Unix stream socket
// between a supervisor (`cottonbox run`, the client) and a GUI or any other
// program that answers prompts (the server).
//
// This library only turns messages into lines and lines into messages; the
// sockets live with their owners (ask/gui_client.cpp, gui/).  Records
// reuse db/json.h's shapes, so an event on the wire looks exactly like a line
// of `cottonbox events --json` and of the GUI's export.
//
// Decoding is forgiving where forward compatibility needs it (unknown message
// types and unknown keys are ignored) and strict where a wrong value would be
// misread (a known key with the wrong JSON type makes the line malformed).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.h"
#include "db/store.h"
#include "record/summary.h"

namespace cb::proto {

// Raised only for incompatible changes; additions (keys, message types) keep it.
constexpr int kVersion = 1;
// Longer lines are skipped whole: a peer cannot make the other side buffer
// without bound.
constexpr size_t kMaxLine = 4u << 20;

// cottonbox's own version ("0.1.0"), for the hello and welcome lines.
std::string_view software_version();

// ------------------------------------------------------------ client -> server

// The first line a supervisor sends.  `session` has the shape of one line of
// `cottonbox sessions --json` (db::session_json): counts are zero, no end.
struct Hello {
  int version = kVersion;
  std::string client;  // "cottonbox 0.1.0"
  db::SessionSummary session;
};

struct EventMsg {
  int64_t session = 0;
  EventRow row;
};

struct ProcessMsg {
  int64_t session = 0;
  ProcessRow row;
};

struct ExecMsg {
  ProcessExec exec;
};

struct ExitMsg {
  ProcessExit exit;
};

struct ApprovalMsg {
  ApprovalRow approval;
};

struct DegradedMsg {
  std::string reason;
};

// Events the client dropped for this connection because the server read too
// slowly (a running total; the audit database has them all).
struct DroppedMsg {
  uint64_t events = 0;
};

struct ChainLink {
  int32_t pid = 0;
  std::string comm;
  std::vector<std::string> argv;
};

struct AskMsg {
  uint64_t ask_id = 0;  // unique within the connection
  int64_t session = 0;
  std::string session_name;
  EventRow row;                  // the event; row.verdict holds the rule id and message
  std::vector<ChainLink> chain;  // the asking process first, then its parent, ...
  std::string summary;           // "delete 1 file"
  uint32_t count = 1;            // requests folded into this ask
  int64_t asked_ns = 0;
  int64_t deadline_ns = 0;  // CLOCK_REALTIME; no answer by then means deny
  // Why the rule asks, as `cottonbox why --json` explains it (its
  // "explanation" object); null when the client did not send it.
  nlohmann::json why;
};

struct AskUpdate {
  uint64_t ask_id = 0;
  uint32_t count = 1;
  std::string summary;  // "delete 240 files under build/"
};

// The ask ended without an answer from this server.
struct AskCancel {
  uint64_t ask_id = 0;
  std::string reason;  // "timeout" | "ended" (the process is gone or the session ended)
};

struct EndMsg {
  int64_t session = 0;
  SessionEnd end;
};

// ------------------------------------------------------------ server -> client

struct Welcome {
  int version = kVersion;
  std::string server;  // "cottonbox-gui 0.1.0"
  std::string name;    // recorded as the approvals' answered_by ("gui", "ci-bot")
};

enum class Scope : uint8_t { Once, Tree, Always };
std::string_view scope_name(Scope s);
std::optional<Scope> parse_scope(std::string_view s);

struct Answer {
  uint64_t ask_id = 0;
  bool allow = false;
  Scope scope = Scope::Once;
  std::string rule;      // the YAML text of the rule written for scope always ("" if none)
  std::string by;        // overrides the welcome's name for this answer ("" = keep)
  bool timeout = false;  // the server gave up waiting (recorded as a timeout, a denial)
};

// A message of a type this build does not know: ignored by both sides.
struct Unknown {
  std::string type;
};

using Message = std::variant<Hello, EventMsg, ProcessMsg, ExecMsg, ExitMsg, ApprovalMsg, DegradedMsg, DroppedMsg,
                             AskMsg, AskUpdate, AskCancel, EndMsg, Welcome, Answer, Unknown>;

// The "type" of a message as it appears on the wire.
std::string_view type_name(const Message& m);

// One line without the trailing '\n'.  Valid UTF-8; never contains '\n'.
std::string encode(const Message& m);
// Error: not JSON, not an object, no "type", or a known type with a missing
// or mistyped field.  The error message says which.
Result<Message> decode(std::string_view line);

// Splits a byte stream into lines.  Lines longer than kMaxLine are skipped
// (counted in `oversized`), never buffered whole.
class LineReader {
 public:
  explicit LineReader(size_t max_line = kMaxLine) : max_(max_line) {}
  void feed(std::string_view bytes);
  // The next complete line without its '\n' (a trailing '\r' is kept).
  std::optional<std::string> next();
  uint64_t oversized() const { return oversized_; }
  size_t buffered() const { return buf_.size() - pos_; }  // bytes not yet returned

 private:
  std::string buf_;
  size_t pos_ = 0;   // start of the first unread line
  size_t tail_ = 0;  // start of the unfinished line (buf_ up to here is complete lines)
  size_t max_;
  bool skipping_ = false;
  uint64_t oversized_ = 0;
};

// $XDG_RUNTIME_DIR/cottonbox/gui.sock, or "" when XDG_RUNTIME_DIR is unset
// (then the session could not be kept away from the socket: no GUI mode).
std::string default_socket_path();

// The uid of the process at the other end of a connected Unix socket.
Result<uint32_t> peer_uid(int fd);
// Creates the socket's directory (mode 0700) if needed and checks that it
// belongs to this user and nobody else can enter it.
Result<Ok> prepare_socket_dir(const std::string& socket_path);

}  // namespace cb::proto
