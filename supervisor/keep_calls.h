// Keeping before destroying, at the decision point: after the policy
// allowed a notified call and before the supervisor carries it out, what
// the call is about to destroy is handed to the keeper (keep/keeper.h), on
// the very objects the supervisor will act on (the resolved directory and
// final name, or the target's own open file).
//
// Which parts of a call are kept is the policy's (Verdict::keep, per facet,
// in Classified::keep); what the session itself created (born after the
// session started) has nothing to give back and is passed over.  Every
// keep the keeper could not make comes back as a reason, which the caller
// records with the call's row.
#pragma once

#include <cstdint>
#include <string>

#include "notify/ops.h"

namespace cb {

namespace keep {
class Keeper;
}

class KeepCalls {
 public:
  KeepCalls(keep::Keeper* keeper, int64_t session_started_ns) : keeper_(keeper), started_ns_(session_started_ns) {}

  bool on() const { return keeper_ != nullptr; }
  // Keeps what `c` is about to destroy, with the target's credentials.
  // Returns why some of it was not kept ("" when all was, or nothing
  // needed keeping).
  std::string before(const Classified& c, uint64_t proc_id, uint64_t event_seq, int64_t ts_ns, const Creds& creds);

 private:
  keep::Keeper* keeper_;
  int64_t started_ns_;
};

}  // namespace cb
