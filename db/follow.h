// `cottonbox events --follow`: every session's events as they are committed.
//
// Event ids grow in commit order (one writer transaction at a time appends
// them, and events are never deleted), so "every event with an id above the
// last one seen" loses nothing and repeats nothing, whatever runs between
// two reads, including a restart of the follower with --after.
#pragma once

#include <atomic>
#include <chrono>
#include <ostream>
#include <string>

#include "db/store.h"

namespace cb::db {

struct FollowOptions {
  EventQuery query;  // filters; query.after_id: where to start (0: from the first event)
  bool json = false;
  std::chrono::milliseconds poll{200};
  // Set from elsewhere (a signal handler) to stop after the current page.
  const std::atomic<bool>* stop = nullptr;
  int64_t stop_after = 0;  // stop once this many events were printed (0: never); for tests
};

// Runs until *stop, stop_after, or the output fails (a closed pipe).  A
// database that does not exist yet is waited for.  Returns the exit status.
int follow_events(const std::string& path, const FollowOptions& o, std::ostream& out);

}  // namespace cb::db
