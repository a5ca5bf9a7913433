// How much the keep store may hold, and the pure check made before each keep.
//
// Defaults (bytes are the kept files' sizes, st_size, whatever the means:
// a hard link allocates nothing new but pins blocks the delete would have
// freed, so it counts the same as a copy):
//   per session  2 GiB   a coding session's destroyed sources and edits are
//                        far below this; build outputs and caches are not kept
//                        (the policy's lists), so one `rm -rf node_modules`
//                        does not reach it
//   in total    10 GiB   the sum over all sessions in the store; `cottonbox gc`
//                        brings it back under by removing the oldest sessions
//   free space   5 % of the filesystem and at least 1 GiB stay free after a
//                copy or reflink; a hard link allocates nothing and is not
//                held to it
// What goes over is recorded as not kept, with the limit it hit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cb::keep {

constexpr uint64_t kGiB = 1ull << 30;

struct Limits {
  uint64_t session_bytes = 2 * kGiB;
  uint64_t total_bytes = 10 * kGiB;
  uint64_t min_free_bytes = 1 * kGiB;
  uint32_t min_free_percent = 5;
};

struct Usage {
  uint64_t session = 0;  // kept by this session so far
  uint64_t total = 0;    // in the whole store (as of the last settle or gc, plus this session)
};

struct FreeSpace {
  uint64_t available = 0;  // for this process (statvfs f_bavail)
  uint64_t size = 0;       // the filesystem's size
};

// Why `size` more bytes may not be kept, in words; empty when they may.
// `free` is the store's filesystem, asked only for keeps that allocate.
std::string over_budget(uint64_t size, const Usage& used, const Limits& limits,
                        const std::optional<FreeSpace>& free = std::nullopt);

std::string human_bytes(uint64_t n);

}  // namespace cb::keep
