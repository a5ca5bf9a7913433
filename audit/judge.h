// Judging a recorded event again, as the supervisor judged it: the row's
// event and the call's other parts, each with the proc.deletes it saw, the
// most severe verdict winning.
#pragma once

#include <string>
#include <vector>

#include "db/store.h"
#include "policy/policy.h"

namespace cb::audit {

// Whose identities a recorded process is judged with (policy/identity.h).
// The command name never stands in for one: the process chose it.
enum class Identity {
  Recorded,  // as the supervisor found them under the policy the session ran with
  Afresh,    // looked up again in the judging policy's table, by the file the process ran
};

// The events decide() was given for one recorded row (facet 0 is the row's
// own event), every part with the process's identities as `identity` says;
// `table` is the judging policy's (Afresh looks the process's file up
// there).  A process whose identity was not recorded (a trail from before
// schema 6) gets the names `table` gives the path of its executable, which
// the supervisor read from the kernel: a copy elsewhere is not the program,
// though a file changed since, or code injected into it, goes unseen.
// proc.deletes per part as the supervisor counted it: the row keeps the
// count after the call's deletions, each part saw the count before them
// plus one if it is a deletion.
std::vector<Event> judged_events(const db::StoredEvent& e, const Identities* table = nullptr,
                                 Identity identity = Identity::Recorded);

struct Rejudged {
  Verdict verdict;
  size_t facet = 0;  // which part decided
};
// The most severe verdict over judged_events(), the first part on a tie.
// Recorded for the policy the session ran with (it reproduces the live
// decision); Afresh for any other.
Rejudged rejudge(const Policy& p, const db::StoredEvent& e, Identity identity);

// Whether the identity `e`'s process is judged with can change `p`'s
// verdict: judged with none and with each name `p` trusts.
bool identity_matters(const Policy& p, const db::StoredEvent& e);

// Rows that no policy decides: the seccomp filter's own kills (a syscall
// through another ABI).  They stay as they were under any policy.
bool decided_by_filter_alone(const db::StoredEvent& e);

// What a policy reads of an event beyond action and path.
struct PolicyReads {
  bool process = false;    // process: lists, proc.* or uid in when:
  bool deletes = false;    // proc.deletes
  bool ancestors = false;  // proc.ancestors
};
PolicyReads policy_reads(const Policy& p);

// Why judging `e` again under a policy that reads `reads` may not be exact:
// fields that were not recorded (an older session), and with `fresh` (the
// judging policy's table, Identity::Afresh) parents' identities that table
// did not give.  Empty when exact.
std::vector<std::string> missing_fields(const db::StoredEvent& e, const PolicyReads& reads,
                                        const Identities* fresh = nullptr);

// Why the identity `e`'s process is judged with may not be the one it
// should have: not recorded (an older trail: by the path of its
// executable), or with `fresh` one that table may give it wrongly.  Worth
// saying only where identity_matters().  Empty when exact.
std::vector<std::string> identity_doubts(const db::StoredEvent& e, const PolicyReads& reads,
                                         const Identities* fresh = nullptr);

// The identity a process was judged with, in words: "git", "none: /tmp/x/git
// is no file the policy trusts", "git (not recorded, ...: by the path of its
// executable)" (`recorded` false: a trail from before schema 6).
std::string identity_text(const ProcessInfo& p, bool recorded);

// A verdict as one word with its rule: "deny (protect)", "allow (default)".
std::string verdict_text(const Verdict& v);
// "allowed", "denied", "asked", "logged".
std::string_view decision_past(Decision d);

}  // namespace cb::audit
