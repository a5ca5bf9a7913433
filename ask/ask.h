// Asking a human (or an orchestrator) about one parked request.
//
// The supervisor parks the notification (the target thread waits in the
// kernel), hands an AskRequest to the backend and goes on serving every
// other syscall; the backend answers later from any thread through
// `answer`.  No answer before the deadline means deny.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "record/record.h"

namespace cb {

enum class AskAnswer : uint8_t { AllowOnce, DenyOnce, AllowTree, DenyTree, AllowAlways, DenyAlways, Timeout };
std::string_view ask_answer_name(AskAnswer a);  // "allow-once", ...
bool ask_answer_allows(AskAnswer a);

struct ChainLink {
  int32_t pid = 0;
  std::string comm;
  std::vector<std::string> argv;
};

struct AskRequest {
  uint64_t ask_id = 0;
  int64_t session = 0;
  std::string session_name;
  EventRow row;                  // the event and the rule that asked
  std::vector<ChainLink> chain;  // the asking process first, then its parent, ... up to the command
  std::string summary;           // "delete 1 file", "rename directory src/ to /tmp/x"
  uint32_t count = 1;            // requests folded into this one ("delete 240 files under build/")
  int64_t asked_ns = 0;
  int64_t deadline_ns = 0;
  // Why a rule asks: audit/explain_json.h's explanation, as JSON and as
  // text lines (what `cottonbox why` says).
  nlohmann::json why;
  std::string why_text;
};

class AskBackend {
 public:
  virtual ~AskBackend() = default;
  virtual std::string name() const = 0;
  // Non-blocking: show the request (queue it if another is on screen).
  virtual void ask(const AskRequest& req) = 0;
  // More requests were folded into `ask_id` (the count grew).
  virtual void update(uint64_t ask_id, uint32_t count) { (void)ask_id, (void)count; }
  // The request ended without this backend (timeout, target gone).
  virtual void cancel(uint64_t ask_id) { (void)ask_id; }

  // Set by the supervisor before the first ask; thread-safe.  `rule_written`:
  // the text of a rule saved for "always" answers (recorded with the approval).
  std::function<void(uint64_t ask_id, AskAnswer answer, const std::string& by, const std::string& rule_written)> answer;
};

}  // namespace cb
