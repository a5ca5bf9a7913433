#include "keep/fsutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

namespace cb::keep {

int64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

Result<std::string> read_all(int fd) {
  std::string out;
  char buf[1 << 16];
  off_t off = 0;
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("read");
    }
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    off += n;
  }
}

Result<std::string> read_file_at(int dirfd, const char* name) {
  UniqueFd fd(openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Error::from_errno(name);
  return read_all(fd.get());
}

Result<Ok> write_file_atomically(int dirfd, const char* name, std::string_view data) {
  std::string tmp = std::string(".") + name + ".tmp." + std::to_string(getpid());
  UniqueFd fd(openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Error::from_errno(tmp);
  for (size_t done = 0; done < data.size();) {
    ssize_t n = write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      unlinkat(dirfd, tmp.c_str(), 0);
      return Error::from_errno(tmp, e);
    }
    done += static_cast<size_t>(n);
  }
  if (renameat(dirfd, tmp.c_str(), dirfd, name) != 0) {
    int e = errno;
    unlinkat(dirfd, tmp.c_str(), 0);
    return Error::from_errno(name, e);
  }
  return Ok{};
}

Result<std::vector<std::string>> list_dir(int dirfd) {
  int dup = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dup < 0) return Error::from_errno("opendir");
  DIR* d = fdopendir(dup);
  if (!d) {
    int e = errno;
    close(dup);
    return Error::from_errno("opendir", e);
  }
  std::vector<std::string> out;
  errno = 0;
  while (dirent* e = readdir(d)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") out.emplace_back(n);
  }
  int e = errno;
  closedir(d);
  if (e != 0) return Error::from_errno("readdir", e);
  return out;
}

Result<Parent> open_parent(std::string_view path, bool create_missing, uint32_t mode) {
  if (path.empty() || path[0] != '/') return Error{EINVAL, "not an absolute path: " + std::string(path)};
  Parent p;
  p.fd.reset(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!p.fd) return Error::from_errno("open /");
  std::vector<std::string> parts;
  for (size_t i = 0; i < path.size();) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view c = path.substr(i, j - i);
    if (c == "..") return Error{EINVAL, "a path with \"..\": " + std::string(path)};
    if (!c.empty() && c != ".") parts.emplace_back(c);
    i = j + 1;
  }
  if (parts.empty()) return Error{EINVAL, "no last component in " + std::string(path)};
  std::string sofar;
  for (size_t k = 0; k + 1 < parts.size(); ++k) {
    const std::string& c = parts[k];
    sofar += "/" + c;
    int fd = openat(p.fd.get(), c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create_missing) {
      if (mkdirat(p.fd.get(), c.c_str(), mode) != 0 && errno != EEXIST) return Error::from_errno("mkdir " + sofar);
      p.created.push_back(sofar);
      fd = openat(p.fd.get(), c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      int e = errno;
      if (e == ENOTDIR || e == ELOOP) return Error{e, sofar + " is not a directory (or is a symlink) now"};
      return Error::from_errno(sofar, e);
    }
    p.fd.reset(fd);
  }
  p.leaf = parts.back();
  return p;
}

}  // namespace cb::keep
