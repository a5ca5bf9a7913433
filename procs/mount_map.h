// The mounts a session's processes see, and the host's names of what lies
// on them.  A process that made a mount namespace names its objects by that
// namespace's mount points: a bind mount of ~/project at /tmp/p makes
// /tmp/p/.git/HEAD the very file ~/project/.git/HEAD is.  Rules are about
// the host's names, so every object is named through its mount: (device,
// the directory of its file system the mount shows, where it is mounted in
// its namespace) -> its place in the file system -> the session's own mount
// of that place.
//
// The session's own namespace (the one its first process runs in, with the
// mount layer's read-only trees) is the host's naming; any other mount
// (found by the mount id statx gives for an fd) is looked up in the
// mountinfo of the calling thread, then of every other process of the
// session.  Objects on mounts the session's namespace does not show (a
// tmpfs made inside a sandbox) have no host name: they are named
// "ns:" + their name inside, which no rule about a host path matches.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "host/mountinfo.h"

namespace cb {

class MountMap {
 public:
  using Pids = std::function<std::vector<pid_t>()>;
  // `init_pid`: a process in the session's own namespace; `others`: every
  // process of the session (for mounts in namespaces the caller is not in).
  MountMap(pid_t init_pid, Pids others);

  // The mount id the kernel gives for `fd`'s mount, or -1.
  static int mount_id(int fd);
  // Whether a mount (by id) is one of the session's own namespace.
  bool in_session_ns(int mnt_id);
  // The host's name of what `fd` refers to; `tid` is the thread it was
  // opened for.  Fails only when the mount is nowhere in the session (then
  // the caller refuses: nothing unnamed is let through).
  Result<std::string> host_name(int fd, pid_t tid);
  // The mount `fd` is on, as its namespace's mountinfo says.
  Result<MountEntry> mount_of(int fd, pid_t tid);
  // The mounts the session's namespace has that the supervisor's does not:
  // the mount layer (read-only trees, hidden files).  Unmounting, moving or
  // making writable a copy of one (same device and root) in a child
  // namespace would undo the layer there.
  bool is_layer(const MountEntry& m);
  // A layer mount lies strictly below (dev, fs_path): a non-recursive bind
  // of that place would show what the layer covers.
  bool layer_below(dev_t dev, std::string_view fs_path);
  // A mount, unmount or namespace change was let through: foreign mount ids
  // may now mean other mounts.
  void forget_foreign() {
    foreign_.clear();
    loaded_ = false;
  }

 private:
  void load_session();
  const MountEntry* find_foreign(int id, pid_t tid);

  pid_t init_pid_;
  Pids others_;
  bool loaded_ = false;
  std::vector<MountEntry> session_;
  std::unordered_map<int, size_t> session_ids_;
  std::unordered_map<int, MountEntry> host_;  // the supervisor's own namespace
  std::vector<MountEntry> layers_;
  std::unordered_map<int, MountEntry> foreign_;
};

}  // namespace cb
