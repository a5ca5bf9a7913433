// Path strings: one way to join and normalise them, for the supervisor's
// resolution and the tracer's records alike.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cb {

// base + "/" + rel, with "." components and repeated slashes dropped ("..":
// kept, since only the kernel knows what it meant across a symlink).  An
// absolute `rel` is returned as is; an empty one names `base` itself.
std::string join_path(std::string_view base, std::string_view rel);

// `path` is `root` or lies below it ("/a/b" is within "/a", "/ab" is not).
inline bool path_within(std::string_view path, std::string_view root) {
  return path == root || (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/');
}

// The real path of an absolute `path`: its longest existing prefix with every
// symbolic link and ".." resolved (realpath), and the rest, which does not
// exist yet, appended as written.  Rules name real paths, and the supervisor
// resolves what a process names to real paths: ${HOME} given through a
// symbolic link must be resolved once, here.  A relative path is returned
// as is.
std::string canonical_path(std::string_view path);
// What /proc/self/fd/FD names: the fd's absolute path as this process sees
// it, or the kernel's name of a non-file ("pipe:[N]"); "" when unreadable.
std::string fd_path(int fd);
// A numeric field of /proc/PID/fdinfo/FD ("Pid", "flags"), read in `base`
// (flags are octal); `pid` 0: this process.  nullopt when the fd or the
// field is not there.
std::optional<long> fdinfo_field(pid_t pid, int fd, std::string_view key, int base = 10);

// CLOCK_REALTIME in nanoseconds: the time stamps of the audit trail.
int64_t realtime_ns();

// This boot's id (/proc/sys/kernel/random/boot_id), "" if unreadable.
std::string boot_id();

}  // namespace cb
