// Small file helpers of the keep library: whole-file reads and writes,
// directory listings, and walking an absolute path without following
// symlinks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace cb::keep {

int64_t now_ns();

Result<std::string> read_all(int fd);
Result<std::string> read_file_at(int dirfd, const char* name);
// Writes a temporary file beside `name` and renames it over.
Result<Ok> write_file_atomically(int dirfd, const char* name, std::string_view data);
// The names in a directory (not "." and ".."); `dirfd` must be readable (not O_PATH).
Result<std::vector<std::string>> list_dir(int dirfd);

// The directory that holds an absolute path's last component, reached one
// component at a time without following symlinks: a path the session turned
// into a symlink after the fact does not lead an undo elsewhere.
struct Parent {
  UniqueFd fd;                       // O_PATH
  std::string leaf;                  // the last component
  std::vector<std::string> created;  // directories made on the way (create_missing)
};
// ENOENT when a directory on the way is missing and `create_missing` is
// false; ENOTDIR/ELOOP when one is not a directory (or is a symlink).
Result<Parent> open_parent(std::string_view abs_path, bool create_missing = false, uint32_t mode = 0755);

}  // namespace cb::keep
