// Helpers of test_keep: temporary trees of real files and the full state of
// a file as a user would compare it (content, type, mode, owner, times to the
// nanosecond, xattrs, symlink target).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "base/fd.h"
#include "keep/budget.h"
#include "tests/support/host_features.h"

namespace cb::keep::test {

// The default budgets without the free-space floor: the tests run on
// whatever filesystem $TMPDIR is (a small tmpfs too); the floor has its own
// test.
inline Limits test_limits() {
  Limits l;
  l.min_free_bytes = 0;
  l.min_free_percent = 0;
  return l;
}

// mkdtemp under `base` (default $TMPDIR or /tmp), removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& base = "");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

void write_file(const std::string& path, std::string_view data, mode_t mode = 0644);
std::string read_file(const std::string& path);  // O_NOATIME where allowed: reading moves no atime
std::string random_bytes(size_t n, uint32_t seed);
void set_times(const std::string& path, int64_t atime_s, long atime_ns, int64_t mtime_s, long mtime_ns);
UniqueFd open_dir(const std::string& path);  // O_PATH | O_DIRECTORY
void remove_tree(const std::string& path);

struct FullState {
  bool exists = false;
  mode_t mode = 0;  // with the type bits
  uid_t uid = 0;
  gid_t gid = 0;
  int64_t atime_ns = 0, mtime_ns = 0;
  std::string content;  // a file's bytes, a symlink's target
  std::map<std::string, std::string> xattrs;
  bool operator==(const FullState&) const = default;
};
// A file's content, read without moving its access time (a plain read
// does under relatime while the atime is not after the mtime): looking must
// not change what the tests compare.
std::string read_untouched(const std::string& path);
FullState state_of(const std::string& path);  // lstat: a symlink is itself
std::ostream& operator<<(std::ostream& os, const FullState& s);

// The states of a whole tree, keyed by path relative to `root`.
std::map<std::string, FullState> tree_state(const std::string& root);

// Whether files under `dir` take user.* xattrs (tmpfs before 6.6, some
// overlay setups and NFS do not).
cb::test::HostFeature user_xattrs(const std::string& dir);
// Whether the filesystem of `dir` clones files (FICLONE).
cb::test::HostFeature reflink(const std::string& dir);

}  // namespace cb::keep::test
