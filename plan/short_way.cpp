#include "plan/short_way.h"

namespace cb {

bool short_way_allowed(ActionMask kernel_carried, const CarryShape& s) {
  constexpr ActionMask kOpenExisting = bit(Action::FileWrite) | bit(Action::FileTruncate);
  switch (s.kind) {
    case CarryShape::None: return false;
    case CarryShape::Link: return kernel_carried & bit(Action::FileLink);
    case CarryShape::Create:
      return (kernel_carried & bit(Action::FileCreate)) &&
             (!s.check_final || (kernel_carried & kOpenExisting) == kOpenExisting);
  }
  return false;
}

}  // namespace cb
