// The supervisor's short way with calls the kernel may carry out itself.
//
// Under a plan where every refusal of an action is a read-only mount's
// (Plan::kernel_carried), a notified create (an O_CREAT open, mkdir,
// symlink) needs the supervisor only when it would land inside a read-only
// tree: there it is carried out in the supervisor's own view of the same
// directory.  Anywhere else the kernel may run it as it is, and the tracer's
// record of it, with the kernel's result, is its row (without the tracer,
// the supervisor writes the row the long way would, for opens and mkdir
// relative to the cwd or the root).  A hard link needs the supervisor
// nowhere: the mounts answer it (EXDEV, EROFS) exactly as the supervisor's
// own linkat would, and with the tracer recording it is not notified.
//
// "Not inside a read-only tree" is decided on the directory that is to hold
// the new name.  Reached from the target's cwd or root without a symlink,
// "..", a magic link or procfs, and found on a writable mount, it cannot be
// inside one.  Each directory is looked at once (openat2 and fstatfs) and
// remembered by name until something could make that name lead elsewhere:
// a rename, a new symlink or a mount, all of which reach the supervisor and
// call forget().  Were the answer stale after all, the kernel would refuse
// the call with EROFS, which fails closed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "plan/short_way.h"
#include "policy/policy.h"

namespace cb {

class PathContext;

CarryShape carry_shape(int nr, const uint64_t args[6]);

// Syscalls after which a cached directory name may lead elsewhere: they
// reach the supervisor, which forgets every name before answering them.
bool may_redirect_names(int nr);

// A path split into its directory part and final name, when it can be
// judged by name: not empty, no ".." component, a final name other than
// ".", and not inside /proc.  `dir` is "" for a bare name and starts with
// '/' for an absolute path ("/" itself for a name in the root).
struct PlainPath {
  std::string_view dir;
  std::string_view name;
};
std::optional<PlainPath> split_plain(std::string_view path);

class WritableDirs {
 public:
  // Whether `path` (absolute, or relative to the target's cwd) lands in a
  // directory on a writable mount, with no symlink on the way, and (with
  // `check_final`) no symlink at the final name either.  false: ask the
  // long way.
  // With `check_final`, *final_mode (if given) is the final name's st_mode
  // when looked at, 0 if it was not there.
  bool new_name_outside_read_only(PathContext& ctx, std::string_view path, bool check_final,
                                  mode_t* final_mode = nullptr);
  // The same for a path relative to a directory fd (the target's own,
  // duplicated here): exact by itself, so nothing is remembered.
  static bool new_name_outside_read_only_at(int dirfd, std::string_view path, bool check_final);
  void forget() { dirs_.clear(); }

 private:
  std::unordered_map<std::string, bool> dirs_;  // base path '\0' directory part -> writable
};

}  // namespace cb
