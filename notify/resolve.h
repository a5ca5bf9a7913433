// Resolving a target thread's path argument the way the kernel would for it,
// into objects the supervisor then acts on.
//
// The walk starts from the target's own root, cwd or dirfd (opened through
// /proc/TID/{root,cwd,fd/N}, so it runs inside the target's mount namespace
// and sees its read-only mounts), follows symlinks and ".." as the kernel
// does (never above the target's root), maps /proc/self and
// /proc/thread-self in the target's procfs to the target, and follows procfs
// magic links (/proc/PID/fd/N, /cwd, /root) to the objects they stand for.
//
// The result is a directory fd plus one final name: the decision is made on
// the path of that directory, and an allowed operation is then carried out on
// exactly that directory and name.  Nothing is looked up again by path, so a
// thread rewriting the path buffer or a symlink swapped under a directory
// cannot change what the decision was about.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/fd.h"
#include "base/paths.h"
#include "base/result.h"
#include "procs/fs_cache.h"
#include "procs/mount_map.h"

namespace cb {

// Facts about one target thread that resolution needs.
class PathContext {
 public:
  PathContext(pid_t tid, pid_t tgid) : tid_(tid), tgid_(tgid) {}
  // With caches (owned by the process table) and the current generation.
  PathContext(pid_t tid, pid_t tgid, FsCache* fs, std::unordered_map<int, DirfdName>* dirfds, uint64_t gen, int pidfd)
      : tid_(tid), tgid_(tgid), fs_(fs), dirfds_(dirfds), gen_(gen), pidfd_(pidfd) {}
  // Names objects on mounts of other namespaces by the host's names.
  void set_mounts(MountMap* m) { mounts_ = m; }
  MountMap* mounts() const { return mounts_; }

  pid_t tid() const { return tid_; }
  pid_t tgid() const { return tgid_; }
  // The target's root and cwd (O_PATH directory fds), opened on first use.
  Result<int> root();
  Result<int> cwd();
  // Their names as the supervisor sees them.
  Result<std::string> root_path();
  Result<std::string> cwd_path();
  // A new fd for the target's dirfd (AT_FDCWD: its cwd), and its name.
  Result<UniqueFd> dirfd(int fd);
  Result<std::pair<UniqueFd, std::string>> dirfd_named(int fd);
  // The name of what `fd` (opened for this target) refers to, as the host
  // names it: the name in the session's namespace, or through its mount
  // for another namespace's (procs/mount_map.h).  Fails for an object on a
  // mount no process of the session shows.
  Result<std::string> name_of(int fd);
  // Whether `fd` lies on a mount of another namespace than the session's.
  bool foreign(int fd);
  // Whether the base a fast lookup started from (-1: the root, AT_FDCWD:
  // the cwd, else that dirfd, open as `fd`) is such a mount, as the names
  // above were read.
  bool base_foreign(int dirfd, int fd);
  // The target's ids in the pid namespace the procfs at `procfs_root` shows
  // (for /proc/self there).
  std::pair<pid_t, pid_t> ids_in_procfs(int procfs_root);
  // The target's ids in the innermost pid namespace.
  std::pair<pid_t, pid_t> ns_ids();

 private:
  pid_t tid_, tgid_;
  FsCache own_;
  FsCache* fs_ = nullptr;
  std::unordered_map<int, DirfdName>* dirfds_ = nullptr;
  uint64_t gen_ = 0;
  int pidfd_ = -1;
  MountMap* mounts_ = nullptr;
  std::optional<std::pair<pid_t, pid_t>> ns_ids_;
  FsCache& fs() { return fs_ ? *fs_ : own_; }
};

enum class Follow : uint8_t { Final, NoFinal };

struct Resolved {
  // The directory holding the final component, and that component (never
  // empty, never containing '/'; "." or ".." only when the path ended so,
  // with `object` then set).
  UniqueFd parent;
  std::string name;
  // Set when the final object was reached without a name in a directory: a
  // procfs magic link, a path ending in "." or "..", or "/".
  UniqueFd object;
  bool exists = false;
  struct stat st {};  // of the final object (a symlink itself with Follow::NoFinal)
  bool trailing_slash = false;
  std::string path;  // absolute path as the supervisor sees it (the host's names)
};

// `dirfd` is the syscall's dirfd argument (AT_FDCWD allowed).  Errors carry
// the errno the kernel would have returned (ENOENT for a missing directory,
// ENOTDIR, ELOOP, ENAMETOOLONG, EACCES...).
Result<Resolved> resolve_path(PathContext& ctx, int dirfd, std::string_view path, Follow follow);

}  // namespace cb
