// Where a session started inside another session is recorded (store.h).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "db/store.h"

namespace cb::db {

namespace {
// Deeper than any nesting anyone runs; a bound on the walk, not a limit
// anyone should meet.
constexpr int kMaxNesting = 8;
}  // namespace

std::string nested_db_path(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return dir + "/nested/audit.db";
}

bool db_hidden(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0) {
    ::close(fd);
    return false;
  }
  return errno == EPERM || errno == EACCES || errno == EROFS;
}

std::string usable_default_db_path() {
  std::string p = default_db_path();
  for (int level = 0; level < kMaxNesting && db_hidden(p); ++level) p = nested_db_path(p);
  return p;
}

}  // namespace cb::db
