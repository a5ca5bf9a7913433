// A file made with mkstemp and removed when its owner goes, on every way
// out of a function, or earlier by remove().
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>

namespace cb {

class TempFile {
 public:
  TempFile() = default;
  // `pattern` ends in XXXXXX; the file is made empty with `mode`.  An empty
  // owner (path() == "") when it cannot be made.
  static TempFile make(std::string pattern, mode_t mode) {
    TempFile t;
    int fd = ::mkstemp(pattern.data());
    if (fd < 0) return t;
    ::fchmod(fd, mode);
    ::close(fd);
    t.path_ = std::move(pattern);
    t.owned_ = true;
    return t;
  }
  TempFile(TempFile&& o) noexcept : path_(std::move(o.path_)), owned_(std::exchange(o.owned_, false)) {}
  TempFile& operator=(TempFile&& o) noexcept {
    if (this != &o) {
      remove();
      path_ = std::move(o.path_);
      owned_ = std::exchange(o.owned_, false);
    }
    return *this;
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { remove(); }

  // The name stays (for what was planned with it); the file goes.
  void remove() {
    if (owned_) ::unlink(path_.c_str());
    owned_ = false;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool owned_ = false;
};

}  // namespace cb
