// /proc/PID/mountinfo as plain data, and the pure arithmetic that turns a
// name in one mount namespace into the host's name of the same object: a
// name is only meaningful with its mount, and a mount is a (device, root
// below which it shows) pair that every namespace agrees on.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct MountEntry {
  int id = 0;
  int parent = 0;
  dev_t dev = 0;
  std::string root;   // the directory of its file system the mount shows
  std::string point;  // where, in its namespace (relative to the reader's root)
  std::string fstype;
  std::string source;
  bool read_only = false;  // the mount's own flag (not the superblock's)
};

std::vector<MountEntry> parse_mountinfo(std::string_view text);

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_mountinfo(std::string_view field);

// `p` is `dir` or below it (component-wise; "/" holds everything).
bool fs_within(std::string_view p, std::string_view dir);

// Where an object lies in its file system, from its name in the namespace
// of mount `m` (which must lie at or below m's mount point).
std::optional<std::string> fs_path_of(const MountEntry& m, std::string_view ns_path);

// The host's name of (dev, fs_path): through the mount of that device whose
// root holds it most closely (the deepest root; of several, the shortest
// mount point).  None when no mount shows that part of the file system.
std::optional<std::string> host_name_of(const std::vector<MountEntry>& host, dev_t dev, std::string_view fs_path);

}  // namespace cb
