#include "keep/copy.h"

#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace cb::keep {
namespace {

// Errors that mean "this way is not available here", as opposed to a failure
// of the copy itself (EIO, ENOSPC, EDQUOT...).
bool unsupported(int e) {
  return e == EOPNOTSUPP || e == ENOTTY || e == EXDEV || e == EINVAL || e == ENOSYS || e == EBADF || e == EPERM;
}

Result<Ok> read_write(int src, int dst, off_t from) {
  std::string buf(1 << 17, '\0');
  off_t off = from;
  for (;;) {
    ssize_t n = pread(src, buf.data(), buf.size(), off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("read");
    }
    if (n == 0) return Ok{};
    for (ssize_t done = 0; done < n;) {
      ssize_t w = pwrite(dst, buf.data() + done, static_cast<size_t>(n - done), off + done);
      if (w < 0) {
        if (errno == EINTR) continue;
        return Error::from_errno("write");
      }
      done += w;
    }
    off += n;
  }
}

}  // namespace

std::string_view copy_method_name(CopyMethod m) {
  switch (m) {
    case CopyMethod::Reflink: return "reflink";
    case CopyMethod::CopyFileRange: return "copy_file_range";
    case CopyMethod::ReadWrite: return "read/write";
  }
  return "?";
}

Result<CopyMethod> copy_contents(int src, int dst, bool try_reflink) {
  if (try_reflink) {
    if (ioctl(dst, FICLONE, src) == 0) return CopyMethod::Reflink;
    if (!unsupported(errno)) return Error::from_errno("FICLONE");
  }
  loff_t in = 0, out = 0;
  for (;;) {
    ssize_t n = copy_file_range(src, &in, dst, &out, 1 << 30, 0);
    if (n > 0) continue;
    if (n == 0) return CopyMethod::CopyFileRange;
    if (errno == EINTR) continue;
    if (!unsupported(errno)) return Error::from_errno("copy_file_range");
    // Not here (or not between these two filesystems): go on by hand from
    // where the kernel stopped.
    auto r = read_write(src, dst, in);
    if (!r) return r.error();
    return CopyMethod::ReadWrite;
  }
}

}  // namespace cb::keep
