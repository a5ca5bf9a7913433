#include "supervisor/host_view.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "base/paths.h"
#include "notify/resolve.h"

namespace cb {
namespace {

bool reopen_here(UniqueFd& fd) {
  struct stat a, b;
  if (!fd || fstat(fd.get(), &a)) return false;
  std::string path = fd_path(fd.get());
  if (path.empty() || path[0] != '/') return false;
  open_how how{};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd here(static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
  if (!here || fstat(here.get(), &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) return false;
  fd = std::move(here);
  return true;
}

}  // namespace

bool HostView::under_mounted(const std::string& path) const {
  return std::any_of(mounts_.begin(), mounts_.end(), [&](const StaticDenial& m) { return path_within(path, m.root); });
}

void HostView::redirect(Classified& c) const {
  Operation& op = c.op;
  // Not for renames and links: across the mount's boundary the kernel
  // answers EXDEV, and that is right (mv then copies), because a
  // directory or file moved in keeps the handles opened on it outside,
  // which would write past the read-only mount.
  if (mounts_.empty() || op.obj || op.kind == OpKind::Rename || op.kind == OpKind::Link) return;
  // Only what makes a new name: anything else inside a read-only tree is
  // what the tree's rule refuses, and stays refused by the mount too.
  bool creates = op.kind == OpKind::Mkdir || op.kind == OpKind::Symlink || op.kind == OpKind::Mknod ||
                 (op.kind == OpKind::Open && !c.facets.empty() && c.facets[0].action == Action::FileCreate);
  if (!creates) return;
  // The checked names first (no system call): a call they place outside
  // every read-only tree is left as it is; were they wrong, the mount
  // would refuse it, which fails closed.
  if (std::none_of(c.facets.begin(), c.facets.end(), [&](const Facet& f) { return names_mounted(f); })) return;
  bool touches = (op.dir && under_mounted(fd_path(op.dir.get()))) || (op.dir2 && under_mounted(fd_path(op.dir2.get())));
  if (!touches) return;
  // Both ends move together, or a rename/link would cross mounts (EXDEV).
  UniqueFd d1(op.dir ? fcntl(op.dir.get(), F_DUPFD_CLOEXEC, 0) : -1);
  UniqueFd d2(op.dir2 ? fcntl(op.dir2.get(), F_DUPFD_CLOEXEC, 0) : -1);
  if ((d1 && !reopen_here(d1)) || (d2 && !reopen_here(d2))) return;
  if (d1) op.dir = std::move(d1);
  if (d2) op.dir2 = std::move(d2);
}

}  // namespace cb
