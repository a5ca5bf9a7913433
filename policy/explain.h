// decide() with its reasons: which rule decided, which of its conditions
// held and with what values, and why each earlier rule was passed over.
//
// explain() is the slow twin of decide(): it tests each rule with the same
// functions (policy/match.h, eval_expr) and only then looks closer to say
// why, so its verdict is decide()'s by construction (and a test checks it on
// generated events).  It allocates freely; it is for `cottonbox why`, prompts
// and reports, never for the hot path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/expr.h"
#include "policy/policy.h"

namespace cb {

// One test of a rule: its action, path, process or `when:`.
struct RuleCheck {
  enum class Kind : uint8_t { Action, Path, Process, When };
  Kind kind = Kind::Action;
  bool held = false;
  // "file.delete is one of file.delete, file.rename",
  // "/p/keep.txt matches /p/** (through the alias /q/keep.txt)"
  std::string detail;
  std::vector<ExprStep> steps;  // When: each comparison evaluated, with its values
};
std::string_view rule_check_name(RuleCheck::Kind k);  // "action", "path", "process", "when"

struct RuleTrace {
  size_t index = 0;  // in Policy::rules
  const Rule* rule = nullptr;
  bool matched = false;
  // The tests made, in decide()'s order, up to the first that failed (a
  // rule passed over for its action has just that one).
  std::vector<RuleCheck> checks;
};

struct Explanation {
  Verdict verdict;                   // decide(p, ev), always
  std::optional<RuleTrace> decided;  // none: the policy's default decided
  std::vector<RuleTrace> passed;     // earlier rules whose action matched but something else did not
  size_t other_actions = 0;          // earlier rules passed over for their action alone
};

Explanation explain(const Policy& p, const Event& ev);

// Who enforces a verdict in a session under `p`, as far as the policy alone
// tells: "builtin" for cottonbox's own rules; "mount" for a deny a read-only
// mount carries out (static_denials); "filter" for an allow of an action no
// rule can deny or ask about (it never leaves the kernel); else "notify"
// (the supervisor decides as the call happens).  A recorded event says what
// really did (EventRow::layer); this is for an event that has not happened.
std::string predicted_layer(const Policy& p, const Event& ev, const Verdict& v);

// The rule as its file shows it: the lines from its `- id:` entry to the
// next entry, given the file's text.  Empty when the rule is not from a file.
std::string rule_source_text(const Rule& r, std::string_view file_text);

}  // namespace cb
