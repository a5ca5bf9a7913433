#include "supervisor/recorder.h"

#include <algorithm>

namespace cb {

void Recorder::degraded(const std::string& why) {
  if (std::find(degraded_.begin(), degraded_.end(), why) != degraded_.end()) return;
  degraded_.push_back(why);
  for (auto* s : sinks_) s->degraded(why);
}

}  // namespace cb
