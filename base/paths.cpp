#include "base/paths.h"

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include <ctime>
#include <fstream>

namespace cb {

std::string canonical_path(std::string_view path) {
  if (!path.starts_with("/")) return std::string(path);
  std::string head(path), tail;
  for (;;) {
    char buf[PATH_MAX];
    if (realpath(head.c_str(), buf)) {
      std::string out = buf;
      if (!tail.empty()) out = join_path(out, tail);
      return out;
    }
    size_t slash = head.rfind('/');
    if (slash == std::string::npos || head == "/") return std::string(path);
    std::string last = head.substr(slash + 1);
    // ".." over a part that does not exist: nothing to resolve it against.
    if (last == "..") return std::string(path);
    tail = tail.empty() ? last : last + "/" + tail;
    head.resize(slash == 0 ? 1 : slash);
  }
}

std::string join_path(std::string_view base, std::string_view rel) {
  std::string out;
  auto add = [&out](std::string_view p) {
    size_t i = 0;
    while (i <= p.size()) {
      size_t j = p.find('/', i);
      if (j == std::string_view::npos) j = p.size();
      std::string_view c = p.substr(i, j - i);
      if (!c.empty() && c != ".") {
        out += '/';
        out.append(c);
      }
      i = j + 1;
    }
  };
  if (!rel.empty() && rel[0] == '/') {
    add(rel);
  } else {
    if (base.empty()) return std::string(rel);
    add(base);
    add(rel);
  }
  if (out.empty()) out.push_back('/');  // (assigning a literal trips a GCC 12 -Wrestrict false positive)
  return out;
}

int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(f, s);
  return s;
}

std::string fd_path(int fd) {
  char link[64], buf[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, buf, sizeof buf);
  if (n <= 0) return {};
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<long> fdinfo_field(pid_t pid, int fd, std::string_view key, int base) {
  char p[64];
  if (pid > 0)
    snprintf(p, sizeof p, "/proc/%d/fdinfo/%d", pid, fd);
  else
    snprintf(p, sizeof p, "/proc/self/fdinfo/%d", fd);
  int f = open(p, O_RDONLY | O_CLOEXEC);
  if (f < 0) return std::nullopt;
  // The fields that matter come first; a pidfd's or a file's fdinfo is a
  // few lines (what follows them, an inotify's marks or an epoll's set, can
  // be long and is not read).
  char buf[1024];
  ssize_t n = read(f, buf, sizeof buf - 1);
  close(f);
  if (n <= 0) return std::nullopt;
  buf[n] = 0;
  std::string_view text(buf, static_cast<size_t>(n));
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':')
      return std::strtol(buf + at + key.size() + 1, nullptr, base);
    if (end == std::string_view::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace cb
