// What the process table keeps per thread and per fd so that resolving a
// path needs no /proc read on the hot path.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "base/fd.h"

namespace cb {

// Kept per thread between notifications: its root and cwd, and their names.
// Valid until the thread changes directory or root (both are notified and
// clear this) or any directory is renamed (which bumps the generation the
// names were read in; the fds stay right, the names are read again).
struct FsCache {
  UniqueFd root, cwd;
  std::string root_path, cwd_path;
  uint64_t root_gen = ~0ull, cwd_gen = ~0ull;
  // On a mount of another namespace than the session's: names below them
  // are the host's only through their mounts (procs/mount_map.h).
  bool root_foreign = false, cwd_foreign = false;
};

// The name of a directory fd, kept per process and fd number, valid while
// the fd still refers to the same inode in the same generation.
struct DirfdName {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string path;
  uint64_t gen = ~0ull;
  bool foreign = false;
};

}  // namespace cb
