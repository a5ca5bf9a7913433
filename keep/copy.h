// Copying a file's bytes the cheapest exact way the filesystems allow.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/result.h"

namespace cb::keep {

enum class CopyMethod {
  Reflink,        // FICLONE: the destination shares the extents (btrfs, XFS with reflink, bcachefs...)
  CopyFileRange,  // copy_file_range(2): in the kernel, without a trip through user space
  ReadWrite,      // pread/pwrite, when the kernel offers neither
};
std::string_view copy_method_name(CopyMethod m);

// Copies all of `src` (from offset 0 to its end, however long it is by then)
// into the empty `dst`.  `try_reflink` false skips the clone (a test of the
// copy path on a filesystem that has one).
Result<CopyMethod> copy_contents(int src, int dst, bool try_reflink = true);

}  // namespace cb::keep
