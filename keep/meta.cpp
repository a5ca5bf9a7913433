#include "keep/meta.h"

#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/fd.h"
#include "policy/sha256.h"

namespace cb::keep {
namespace {

bool no_xattr_support(int e) { return e == ENOTSUP || e == ENOSYS; }

// The list of names, as the kernel returns it: NUL-separated.
template <typename List>
Result<std::vector<std::string>> list_names(List list) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    ssize_t n = list(nullptr, 0);
    if (n < 0) {
      if (no_xattr_support(errno)) return std::vector<std::string>{};
      return Error::from_errno("listxattr");
    }
    if (n == 0) return std::vector<std::string>{};
    std::string buf(static_cast<size_t>(n), '\0');
    n = list(buf.data(), buf.size());
    if (n < 0) {
      if (errno == ERANGE) continue;  // grew in between
      return Error::from_errno("listxattr");
    }
    std::vector<std::string> names;
    for (size_t i = 0; i < static_cast<size_t>(n);) {
      size_t len = strnlen(buf.data() + i, static_cast<size_t>(n) - i);
      if (len > 0) names.emplace_back(buf.data() + i, len);
      i += len + 1;
    }
    return names;
  }
  return Error{ERANGE, "listxattr: the list kept changing"};
}

template <typename Get>
Result<std::vector<Xattr>> values(const std::vector<std::string>& names, Get get) {
  std::vector<Xattr> out;
  for (const std::string& name : names) {
    Xattr x{name, {}};
    bool done = false;
    for (int attempt = 0; attempt < 4 && !done; ++attempt) {
      ssize_t n = get(name.c_str(), nullptr, 0);
      if (n < 0) {
        if (errno == ENODATA) break;  // removed in between
        return Error::from_errno("getxattr " + name);
      }
      x.value.resize(static_cast<size_t>(n));
      n = get(name.c_str(), x.value.data(), x.value.size());
      if (n < 0) {
        if (errno == ERANGE) continue;
        if (errno == ENODATA) break;
        return Error::from_errno("getxattr " + name);
      }
      x.value.resize(static_cast<size_t>(n));
      done = true;
    }
    if (done) out.push_back(std::move(x));
  }
  std::sort(out.begin(), out.end(), [](const Xattr& a, const Xattr& b) { return a.name < b.name; });
  return out;
}

}  // namespace

std::string proc_fd_path(int fd, const char* name) {
  std::string p = "/proc/self/fd/" + std::to_string(fd);
  if (name) {
    p += '/';
    p += name;
  }
  return p;
}

Timespec to_timespec(const struct timespec& t) { return Timespec{t.tv_sec, t.tv_nsec}; }

void fill_from_stat(Snapshot& s, const struct stat& st) {
  s.type = file_type_of_mode(st.st_mode);
  s.mode = st.st_mode & 07777;
  s.uid = st.st_uid;
  s.gid = st.st_gid;
  s.size = static_cast<uint64_t>(st.st_size);
  s.atime = to_timespec(st.st_atim);
  s.mtime = to_timespec(st.st_mtim);
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.nlink = st.st_nlink;
}

Result<std::vector<Xattr>> read_xattrs_at(int dirfd, const char* name) {
  std::string p = proc_fd_path(dirfd, name);
  auto names = list_names([&](char* b, size_t n) { return llistxattr(p.c_str(), b, n); });
  if (!names) return names.error();
  return values(*names, [&](const char* k, void* b, size_t n) { return lgetxattr(p.c_str(), k, b, n); });
}

Result<std::vector<Xattr>> read_xattrs_fd(int fd) {
  auto names = list_names([&](char* b, size_t n) { return flistxattr(fd, b, n); });
  if (!names && names.error().err == EBADF) {
    // An O_PATH fd: following its /proc magic link lands on the very inode
    // (a symlink's included) and goes no further.
    std::string p = proc_fd_path(fd);
    names = list_names([&](char* b, size_t n) { return listxattr(p.c_str(), b, n); });
    if (!names) return names.error();
    return values(*names, [&](const char* k, void* b, size_t n) { return getxattr(p.c_str(), k, b, n); });
  }
  if (!names) return names.error();
  return values(*names, [&](const char* k, void* b, size_t n) { return fgetxattr(fd, k, b, n); });
}

Result<std::string> read_link_at(int dirfd, const char* name) {
  std::string buf(256, '\0');
  for (;;) {
    ssize_t n = readlinkat(dirfd, name, buf.data(), buf.size());
    if (n < 0) return Error::from_errno("readlink");
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    buf.resize(buf.size() * 2);
  }
}

Result<std::string> sha256_of_fd(int fd) {
  Sha256 h;
  std::string buf(1 << 17, '\0');
  off_t off = 0;
  for (;;) {
    ssize_t n = pread(fd, buf.data(), buf.size(), off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("read");
    }
    if (n == 0) break;
    h.update(std::string_view(buf.data(), static_cast<size_t>(n)));
    off += n;
  }
  return h.finish_hex();
}

Result<Fingerprint> fingerprint_at(int dirfd, const char* name, uint64_t hash_limit) {
  Fingerprint f;
  f.known = true;
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return f;  // Absent
    return Error::from_errno(std::string("stat ") + name);
  }
  Snapshot s;
  fill_from_stat(s, st);
  f = fingerprint_of(s);
  if (f.type == FileType::Symlink) {
    auto t = read_link_at(dirfd, name);
    if (!t) return t.error();
    f.target = std::move(*t);
  } else if (f.type == FileType::Regular && f.size <= hash_limit) {
    // Hashing must not move the atime that undo compares and restores
    // (O_NOATIME needs ownership or CAP_FOWNER; others read without it).
    constexpr int kFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
    UniqueFd fd(openat(dirfd, name, kFlags | O_NOATIME));
    if (!fd && errno == EPERM) fd.reset(openat(dirfd, name, kFlags));
    if (!fd) return Error::from_errno(std::string("open ") + name);
    struct stat st2;
    if (fstat(fd.get(), &st2) != 0) return Error::from_errno("fstat");
    if (st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) return Error{EAGAIN, std::string(name) + " changed"};
    auto sha = sha256_of_fd(fd.get());
    if (!sha) return sha.error();
    f.sha256 = std::move(*sha);
  }
  return f;
}

std::vector<std::string> write_xattrs_at(int dirfd, const char* name, const std::vector<Xattr>& xattrs) {
  std::vector<std::string> failed;
  std::string p = proc_fd_path(dirfd, name);
  for (const Xattr& x : xattrs) {
    if (lsetxattr(p.c_str(), x.name.c_str(), x.value.data(), x.value.size(), 0) != 0)
      failed.push_back("xattr " + x.name + " not set: " + std::strerror(errno));
  }
  auto have = list_names([&](char* b, size_t n) { return llistxattr(p.c_str(), b, n); });
  if (!have) {
    if (!xattrs.empty()) failed.push_back("xattrs not listed after setting: " + have.error().message);
    return failed;
  }
  for (const std::string& n : *have) {
    bool wanted = std::any_of(xattrs.begin(), xattrs.end(), [&](const Xattr& x) { return x.name == n; });
    if (wanted) continue;
    // An inherited label or default ACL the file did not have before.
    if (lremovexattr(p.c_str(), n.c_str()) != 0 && errno != ENODATA)
      failed.push_back("xattr " + n + " not removed: " + std::strerror(errno));
  }
  return failed;
}

}  // namespace cb::keep
