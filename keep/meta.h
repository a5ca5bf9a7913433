// Reading and writing a file's metadata by (directory fd, name) without
// following a final symlink, and taking fingerprints.  The directory fd may
// be an O_PATH one: the *xattr calls reach the file through
// /proc/self/fd/N/NAME, which follows the magic link to the very directory.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "keep/types.h"

namespace cb::keep {

// Regular files larger than this are fingerprinted without their hash (by
// inode, size and mtime): hashing gigabytes at session end or at undo costs
// more than the conflict check is worth.
constexpr uint64_t kHashLimit = 64ull << 20;

std::string proc_fd_path(int fd, const char* name = nullptr);

// Fills the metadata fields of `s` (type, mode, owner, size, times, dev, ino, nlink).
void fill_from_stat(Snapshot& s, const struct stat& st);
Timespec to_timespec(const struct timespec& t);

// Extended attributes of every namespace this process may list.  A
// filesystem without xattrs gives an empty list, not an error.
Result<std::vector<Xattr>> read_xattrs_at(int dirfd, const char* name);
Result<std::vector<Xattr>> read_xattrs_fd(int fd);

Result<std::string> read_link_at(int dirfd, const char* name);

// SHA-256 of the whole file read through `fd` (positional reads: the fd's
// offset is left alone).
Result<std::string> sha256_of_fd(int fd);

// The state of (dirfd, name) now: type Absent when there is nothing there.
// Regular files up to `hash_limit` bytes carry their SHA-256.
Result<Fingerprint> fingerprint_at(int dirfd, const char* name, uint64_t hash_limit = kHashLimit);

// Sets `xattrs` on (dirfd, name) and removes those it has that are not in
// the list.  Returns the attributes it could not set or remove, as words for
// the user (a security.* label needs privileges the undo may not have).
std::vector<std::string> write_xattrs_at(int dirfd, const char* name, const std::vector<Xattr>& xattrs);

}  // namespace cb::keep
