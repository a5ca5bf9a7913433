// `cottonbox gc`: settles what dead keepers left staged, then removes whole
// sessions, oldest first, past an age or while the store is over a size, and
// the objects no remaining journal refers to.  A session whose keeper is
// alive (its journal is locked) is never removed, and neither are its staged
// objects (a keep in flight may not have its record yet).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "keep/store.h"

namespace cb::keep {

struct GcOptions {
  int64_t max_age_ns = 0;  // remove sessions whose last record is older; 0: no age limit
  uint64_t max_bytes = 0;  // remove the oldest sessions while more is referenced; 0: no size limit
  int64_t now_ns = 0;      // 0: now
};

struct GcReport {
  std::vector<std::string> removed;  // sessions, oldest first
  std::vector<std::string> live;     // sessions skipped because their keeper runs
  size_t objects_removed = 0;        // unreferenced objects and staged files
  size_t settled = 0;                // staged objects of dead keepers settled
  size_t damaged_records = 0;        // journal lines skipped (torn or corrupt)
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
};

Result<GcReport> gc(const Store& store, const GcOptions& options);

}  // namespace cb::keep
