// Settling: staged objects are hashed and moved into objects/ (content-
// addressed, identical contents once), off the hot path: at the session's
// end, or by gc for a session whose keeper died.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "keep/store.h"

namespace cb::keep {

struct SettleStats {
  size_t moved = 0;         // the staged inode itself became the object
  size_t deduplicated = 0;  // an object with the same content was there: the staged one is gone
  size_t copied = 0;        // the staged inode had another name again (the unlink did not happen): copied
  size_t missing = 0;       // a record's staged object is gone (removed by hand)
  uint64_t bytes = 0;       // hashed
};

// Settles the staged objects that `journal_fd` (the session's journal, open
// for appending and locked by the caller) refers to, appending one H record
// each.  The caller holds the store's exclusive lock.
Result<SettleStats> settle(const Store& store, int journal_fd);

}  // namespace cb::keep
