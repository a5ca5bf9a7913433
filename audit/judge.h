// Judging a recorded event again, as the supervisor judged it: the row's
// event and the call's other parts, each with the proc.deletes it saw, the
// most severe verdict winning.
#pragma once

#include <string>
#include <vector>

#include "db/store.h"
#include "policy/policy.h"

namespace cb::audit {

// The events decide() was given for one recorded row (facet 0 is the row's
// own event).  proc.deletes per part as the supervisor counted it: the
// row keeps the count after the call's deletions, each part saw the count
// before them plus one if it is a deletion.  Identities are not recorded:
// the recorded command name stands in for the process's identity.
std::vector<Event> judged_events(const db::StoredEvent& e);

struct Rejudged {
  Verdict verdict;
  size_t facet = 0;  // which part decided
};
// The most severe verdict over judged_events(), the first part on a tie.
Rejudged rejudge(const Policy& p, const db::StoredEvent& e);

// Rows that no policy decides: the seccomp filter's own kills (a syscall
// through another ABI).  They stay as they were under any policy.
bool decided_by_filter_alone(const db::StoredEvent& e);

// What a policy reads of an event beyond action and path.
struct PolicyReads {
  bool process = false;  // process: lists, proc.* or uid in when:
  bool deletes = false;  // proc.deletes
};
PolicyReads policy_reads(const Policy& p);

// Why judging `e` again under a policy that reads `reads` may not be exact:
// fields that were not recorded (an older session).  Empty when exact.
std::vector<std::string> missing_fields(const db::StoredEvent& e, const PolicyReads& reads);

// A verdict as one word with its rule: "deny (protect)", "allow (default)".
std::string verdict_text(const Verdict& v);
// "allowed", "denied", "asked", "logged".
std::string_view decision_past(Decision d);

}  // namespace cb::audit
