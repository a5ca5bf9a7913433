// The host's mounts and disks as they bear on protected trees: other names
// of a tree through bind mounts made before the session, and the block
// devices whose raw writes would reach it.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace cb {

// A block device whose writes would bypass every path rule: the file
// systems on it hold these protected trees.
struct ProtectedDevice {
  dev_t rdev = 0;
  std::vector<std::string> roots;
};

// Other paths at which each of `dirs` already shows through bind mounts of
// its file system, as (other path, dir) (from /proc/self/mountinfo, read
// once; each checked to be the very same directory by device and inode).
std::vector<std::pair<std::string, std::string>> mount_aliases(const std::vector<std::string>& dirs);

// The block devices (with partitions' disks and device-mapper/md members)
// that hold the file systems of `paths`, as device nodes found under /dev:
// for each path, the nodes that reach it.  /dev is read once.
std::vector<std::vector<std::pair<dev_t, std::string>>> block_devices_of(const std::vector<std::string>& paths);

}  // namespace cb
