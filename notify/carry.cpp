#include "notify/carry.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fd.h"
#include "base/paths.h"
#include "notify/kernel_files.h"
#include "notify/resolve.h"
#include "syscalls/table.h"

namespace cb {

namespace {
// Enough for every directory a build touches; past it, start again.
constexpr size_t kMaxDirs = 4096;
}  // namespace

CarryShape carry_shape(int nr, const uint64_t a[6]) {
  CarryShape s;
  const Syscall* row = find_syscall(nr);
  if (!row) return s;
  const SyscallArgs& r = row->args;
  auto dirfd = [&](int8_t role) { return role >= 0 ? static_cast<int>(a[role]) : AT_FDCWD; };
  switch (row->family) {
    case Family::Open: {
      if (r.how >= 0) return s;  // open_how is behind a pointer
      uint64_t flags = r.implied_flags | (r.flags >= 0 ? static_cast<uint32_t>(a[r.flags]) : 0);
      if (!(flags & O_CREAT) || (flags & O_PATH)) return s;
      // O_EXCL never follows a final symlink, and fails on any existing name.
      return {CarryShape::Create, dirfd(r.dirfd1), a[r.path1], !(flags & O_EXCL), flags};
    }
    case Family::Mkdir: return {CarryShape::Create, dirfd(r.dirfd1), a[r.path1], false, a[r.mode]};
    case Family::Symlink: return {CarryShape::Create, dirfd(r.dirfd1), a[r.path1], false};
    case Family::Link: s.kind = CarryShape::Link; return s;
    default: return s;
  }
}

bool may_redirect_names(int nr) {
  const Syscall* row = find_syscall(nr);
  return row && row->repoints_names;
}

std::optional<PlainPath> split_plain(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path.empty() || path == "/") return std::nullopt;
  if (path == "/proc" || path.starts_with("/proc/")) return std::nullopt;
  for (size_t i = 0; i < path.size();) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (path.substr(i, j - i) == "..") return std::nullopt;
    i = j + 1;
  }
  size_t slash = path.rfind('/');
  PlainPath p;
  if (slash == std::string_view::npos) {
    p.name = path;
  } else {
    p.dir = slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
    p.name = path.substr(slash + 1);
  }
  if (p.name == "." || p.name.empty()) return std::nullopt;
  return p;
}

namespace {
// Whether `dir_rel` below `base` lies on a writable mount; nothing when it
// cannot be reached without a symlink (or does not exist): the long way
// says what happens then.
std::optional<bool> writable_below(int base, std::string_view dir_rel) {
  while (!dir_rel.empty() && dir_rel.front() == '/') dir_rel.remove_prefix(1);
  UniqueFd opened;
  int dir = base;
  if (!dir_rel.empty()) {
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    std::string r(dir_rel);
    opened.reset(static_cast<int>(syscall(SYS_openat2, base, r.c_str(), &how, sizeof how)));
    if (!opened) return std::nullopt;
    dir = opened.get();
  }
  struct statfs sf;
  if (fstatfs(dir, &sf) != 0) return std::nullopt;
  // A file there is a setting of the kernel's (notify/kernel_files.h),
  // judged the long way whatever the mount says.
  return !(sf.f_flags & ST_RDONLY) && !kernel_fs(sf.f_type);
}

// The final name is not a symlink the kernel would follow (out of the
// directory just checked); a missing name is made in that directory, an
// existing file is opened where it is.  A mount point there (a file bound
// read-only onto itself) is refused by its mount.
bool final_name_stays(int base, std::string_view path, mode_t* final_mode = nullptr) {
  std::string rel(path);
  size_t skip = rel.find_first_not_of('/');
  struct stat st;
  if (fstatat(base, skip == std::string::npos ? "." : rel.c_str() + skip, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (final_mode) *final_mode = 0;
    return errno == ENOENT;
  }
  if (final_mode) *final_mode = st.st_mode;
  return !S_ISLNK(st.st_mode);
}
}  // namespace

bool WritableDirs::new_name_outside_read_only_at(int dirfd, std::string_view path, bool check_final) {
  auto plain = split_plain(path);
  if (!plain || path[0] == '/') return false;
  return writable_below(dirfd, plain->dir).value_or(false) && (!check_final || final_name_stays(dirfd, path));
}

bool WritableDirs::new_name_outside_read_only(PathContext& ctx, std::string_view path, bool check_final,
                                              mode_t* final_mode) {
  auto plain = split_plain(path);
  if (!plain) return false;
  bool absolute = path[0] == '/';
  auto base = absolute ? ctx.root() : ctx.cwd();
  if (!base) return false;
  auto base_path = absolute ? ctx.root_path() : ctx.cwd_path();
  if (!base_path || base_path->empty()) return false;
  // Inside procfs a name may stand for another process's objects.
  if (!absolute && path_within(*base_path, "/proc")) return false;

  std::string key = *base_path;
  key += '\0';
  key += plain->dir;
  auto it = dirs_.find(key);
  bool writable;
  if (it != dirs_.end()) {
    writable = it->second;
  } else {
    // Not remembered when the walk fails: a missing directory may be made.
    auto w = writable_below(*base, plain->dir);
    if (!w) return false;
    writable = *w;
    if (dirs_.size() >= kMaxDirs) dirs_.clear();
    dirs_.emplace(std::move(key), writable);
  }
  return writable && (!check_final || final_name_stays(*base, path, final_mode));
}

}  // namespace cb
