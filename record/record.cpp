#include "record/record.h"

namespace cb {

std::string_view session_state_name(SessionState s) {
  switch (s) {
    case SessionState::Running: return "running";
    case SessionState::Ended: return "ended";
    case SessionState::Aborted: return "aborted";
  }
  return "unknown";
}

}  // namespace cb
