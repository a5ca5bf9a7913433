// Replay: every recorded event of past sessions judged against another
// policy, and what would be decided differently.  Pure: sessions and
// policies in, a report out.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "policy/policy.h"

namespace cb::audit {

struct ReplaySession {
  db::SessionSummary summary;
  std::vector<db::StoredEvent> events;
  // The policy the session ran with (its snapshot), to check that judging
  // again reproduces what was recorded; nullopt for a session from before
  // schema 3 (then the recorded verdicts are taken as they are).
  std::optional<Policy> original;
  std::string original_problem;  // why there is no original, when known
  Policy next;                   // the policy to judge against, with this session's built-ins
};

struct ReplayChange {
  size_t session = 0;  // index into the input
  size_t event = 0;    // index into that session's events
  Verdict before;      // as recorded
  Verdict after;
};

struct ReplayUncertain {
  size_t session = 0, event = 0;
  std::vector<std::string> reasons;
};

struct ReplayReport {
  size_t judged = 0;
  size_t unchanged = 0;
  std::vector<ReplayChange> changes;
  std::vector<ReplayUncertain> uncertain;  // changed or not: the result may be wrong for these
  std::vector<std::string> notes;          // about whole sessions
  // before -> after -> count
  std::map<std::pair<Decision, Decision>, size_t> counts;
};

ReplayReport replay(const std::vector<ReplaySession>& sessions);

// "would deny 3 that were allowed, ask about 1 that was allowed, allow 12
// that were denied"; "no event would be decided differently".
std::string replay_summary(const ReplayReport& r);

// Changes grouped by the rule of the new policy that decides them (the
// default last), each with its events, then the uncertain events and the
// notes.  `policy_label` names the new policy.
std::string replay_text(const ReplayReport& r, const std::vector<ReplaySession>& sessions,
                        const std::string& policy_label);
nlohmann::json replay_json(const ReplayReport& r, const std::vector<ReplaySession>& sessions);

}  // namespace cb::audit
