// Descriptors cottonbox inherited and passes on to the command.
#pragma once

#include <sys/types.h>

#include <string>

namespace cb {

// The files, directories and block devices among the descriptors the
// command inherits (stdin/out/err included).  They were opened outside the
// session's mount namespace: writes through them (or through
// /proc/self/fd/N, and its "..") do not meet the read-only mounts.
struct InheritedFile {
  int fd = -1;
  std::string path;  // as /proc/self/fd/N names it
  bool dir = false;  // a directory, or a block device: reaches whole trees
  nlink_t nlink = 1;
};

}  // namespace cb
