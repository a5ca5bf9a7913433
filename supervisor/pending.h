// A notified call between its decision and its answer: what the target
// asked (the call, read once), what it means (classified), and its row.
#pragma once

#include "notify/ops.h"
#include "record/record.h"

namespace cb {

struct Pending {
  Call call;
  Classified cls;
  EventRow row;
};

}  // namespace cb
