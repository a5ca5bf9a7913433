#include "tests/keep/test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <random>
#include <stdexcept>

namespace cb::keep::test {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

void walk(const std::string& root, const std::string& rel, std::map<std::string, FullState>& out) {
  std::string full = rel.empty() ? root : root + "/" + rel;
  FullState s = state_of(full);
  out[rel.empty() ? "." : rel] = s;
  if (!S_ISDIR(s.mode)) return;
  UniqueFd d(open(full.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d) fail("open " + full);
  DIR* dir = fdopendir(d.release());
  while (dirent* e = readdir(dir)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    walk(root, rel.empty() ? n : rel + "/" + n, out);
  }
  closedir(dir);
}

}  // namespace

TempDir::TempDir(const std::string& base) {
  std::string b = base;
  if (b.empty()) {
    const char* t = getenv("TMPDIR");
    b = t && *t ? t : "/tmp";
  }
  std::string tmpl = b + "/cb-keep-test.XXXXXX";
  if (!mkdtemp(tmpl.data())) fail("mkdtemp " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() { remove_tree(path_); }

void remove_tree(const std::string& path) {
  nftw(
      path.c_str(),
      [](const char* p, const struct stat*, int, FTW*) {
        remove(p);
        return 0;
      },
      64, FTW_DEPTH | FTW_PHYS);
}

void write_file(const std::string& path, std::string_view data, mode_t mode) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd) fail("create " + path);
  for (size_t done = 0; done < data.size();) {
    ssize_t n = write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0) fail("write " + path);
    done += static_cast<size_t>(n);
  }
  if (fchmod(fd.get(), mode) != 0) fail("chmod " + path);
}

std::string read_file(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open " + path);
  UniqueFd owner(fd);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) fail("read " + path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xFF);
  return s;
}

void set_times(const std::string& path, int64_t as, long ans, int64_t ms, long mns) {
  struct timespec ts[2] = {{as, ans}, {ms, mns}};
  if (utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW) != 0) fail("utimensat " + path);
}

UniqueFd open_dir(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) fail("open " + path);
  return fd;
}

std::string read_untouched(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NOATIME | O_CLOEXEC);
  if (fd < 0 && errno == EPERM) fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open " + path);
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

FullState state_of(const std::string& path) {
  FullState s;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return s;
    fail("lstat " + path);
  }
  s.exists = true;
  s.mode = st.st_mode;
  s.uid = st.st_uid;
  s.gid = st.st_gid;
  s.atime_ns = int64_t{st.st_atim.tv_sec} * 1000000000 + st.st_atim.tv_nsec;
  s.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  if (S_ISREG(st.st_mode)) {
    s.content = read_untouched(path);
  } else if (S_ISLNK(st.st_mode)) {
    char buf[4096];
    ssize_t n = readlink(path.c_str(), buf, sizeof buf);
    if (n < 0) fail("readlink " + path);
    s.content.assign(buf, static_cast<size_t>(n));
  }
  char names[4096];
  ssize_t n = llistxattr(path.c_str(), names, sizeof names);
  for (ssize_t i = 0; n > 0 && i < n; i += static_cast<ssize_t>(strlen(names + i)) + 1) {
    char v[4096];
    ssize_t vn = lgetxattr(path.c_str(), names + i, v, sizeof v);
    if (vn >= 0) s.xattrs[names + i] = std::string(v, static_cast<size_t>(vn));
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const FullState& s) {
  if (!s.exists) return os << "{absent}";
  os << "{mode " << std::oct << s.mode << std::dec << " owner " << s.uid << ":" << s.gid << " atime " << s.atime_ns
     << " mtime " << s.mtime_ns << " " << s.content.size() << " bytes";
  for (const auto& [k, v] : s.xattrs) os << " " << k << "=" << std::quoted(v);
  return os << "}";
}

std::map<std::string, FullState> tree_state(const std::string& root) {
  std::map<std::string, FullState> out;
  walk(root, "", out);
  return out;
}

cb::test::HostFeature user_xattrs(const std::string& dir) {
  std::string p = dir + "/.xattr-probe";
  write_file(p, "x");
  int rc = setxattr(p.c_str(), "user.cb-probe", "1", 1, 0);
  int e = errno;
  unlink(p.c_str());
  if (rc == 0) return {true, ""};
  return {false, std::string("user.* xattrs on ") + dir + ": " + std::strerror(e)};
}

cb::test::HostFeature reflink(const std::string& dir) {
  std::string a = dir + "/.reflink-a", b = dir + "/.reflink-b";
  write_file(a, "reflink probe");
  UniqueFd src(open(a.c_str(), O_RDONLY | O_CLOEXEC));
  UniqueFd dst(open(b.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  int rc = ioctl(dst.get(), FICLONE, src.get());
  int e = errno;
  unlink(a.c_str());
  unlink(b.c_str());
  if (rc == 0) return {true, ""};
  return {false, "FICLONE on the filesystem of " + dir + ": " + std::strerror(e) +
                     " (ext4 and tmpfs have no reflinks; btrfs and XFS do)"};
}

}  // namespace cb::keep::test
