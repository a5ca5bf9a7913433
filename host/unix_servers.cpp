#include "host/unix_servers.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "base/fd.h"

namespace cb {
namespace {

constexpr uint32_t kListenState = 10;  // TCP_LISTEN, which unix sockets share
constexpr size_t kCacheLimit = 4096;

// sock_diag reports the superblock's device in the kernel's own encoding.
dev_t user_dev(uint32_t kdev) { return makedev(kdev >> 20, kdev & 0xfffff); }

bool holds(int fd_dir, uint64_t sock_ino) {
  int d = dup(fd_dir);
  if (d < 0) return false;
  DIR* dir = fdopendir(d);
  if (!dir) {
    close(d);
    return false;
  }
  char want[40];
  int wn = snprintf(want, sizeof want, "socket:[%llu]", static_cast<unsigned long long>(sock_ino));
  bool found = false;
  char buf[64];
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    ssize_t n = readlinkat(fd_dir, e->d_name, buf, sizeof buf);
    if (n == wn && memcmp(buf, want, static_cast<size_t>(n)) == 0) {
      found = true;
      break;
    }
  }
  closedir(dir);
  return found;
}

bool pid_holds(pid_t pid, uint64_t sock_ino) {
  char p[48];
  snprintf(p, sizeof p, "/proc/%d/fd", pid);
  UniqueFd d{open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  return d && holds(d.get(), sock_ino);
}

pid_t parent_of(pid_t pid) {
  char p[48], buf[512];
  snprintf(p, sizeof p, "/proc/%d/stat", pid);
  UniqueFd fd{open(p, O_RDONLY | O_CLOEXEC)};
  if (!fd) return -1;
  ssize_t n = read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return -1;
  buf[n] = 0;
  // The command name may hold spaces and parentheses: fields resume after
  // the last ')'.
  const char* close = strrchr(buf, ')');
  int ppid = -1;
  char state = 0;
  if (!close || sscanf(close + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

}  // namespace

Result<std::vector<UnixListener>> unix_listeners() {
  UniqueFd nl{socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)};
  if (!nl) return Error::from_errno("sock_diag");
  struct {
    nlmsghdr nlh;
    unix_diag_req r;
  } req{};
  req.nlh.nlmsg_len = sizeof req;
  req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.r.sdiag_family = AF_UNIX;
  req.r.udiag_states = 1u << kListenState;
  req.r.udiag_show = UDIAG_SHOW_VFS | UDIAG_SHOW_NAME;
  if (send(nl.get(), &req, sizeof req, 0) != static_cast<ssize_t>(sizeof req)) return Error::from_errno("sock_diag");
  std::vector<UnixListener> out;
  alignas(nlmsghdr) char buf[32768];
  for (;;) {
    ssize_t n = recv(nl.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::from_errno("sock_diag");
    int left = static_cast<int>(n);
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
      if (h->nlmsg_type == NLMSG_DONE) return out;
      if (h->nlmsg_type == NLMSG_ERROR) {
        auto* e = static_cast<nlmsgerr*>(NLMSG_DATA(h));
        return Error::from_errno("sock_diag", e->error ? -e->error : EIO);
      }
      if (h->nlmsg_len < NLMSG_LENGTH(sizeof(unix_diag_msg))) continue;
      auto* m = static_cast<unix_diag_msg*>(NLMSG_DATA(h));
      UnixListener l;
      l.sock_ino = m->udiag_ino;
      int alen = static_cast<int>(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
      for (auto* a = reinterpret_cast<rtattr*>(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
        size_t plen = RTA_PAYLOAD(a);
        const char* data = static_cast<const char*>(RTA_DATA(a));
        if (a->rta_type == UNIX_DIAG_VFS && plen >= sizeof(unix_diag_vfs)) {
          unix_diag_vfs v;
          memcpy(&v, data, sizeof v);
          l.vfs_dev = user_dev(v.udiag_vfs_dev);
          l.vfs_ino = v.udiag_vfs_ino;
        } else if (a->rta_type == UNIX_DIAG_NAME && plen > 1 && data[0] == 0) {
          l.abstract.assign(data + 1, plen - 1);
        }
      }
      out.push_back(std::move(l));
    }
  }
}

std::vector<pid_t> socket_holders(uint64_t sock_ino, const std::function<bool(pid_t)>& skip) {
  std::vector<pid_t> out;
  UniqueFd proc{open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (!proc) return out;
  DIR* dir = fdopendir(dup(proc.get()));
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    long pid = strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    if (skip && skip(static_cast<pid_t>(pid))) continue;
    char p[48];
    snprintf(p, sizeof p, "%ld/fd", pid);
    UniqueFd d{openat(proc.get(), p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (d && holds(d.get(), sock_ino)) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(dir);
  return out;
}

bool descends_from(pid_t pid, pid_t ancestor) {
  for (int depth = 0; pid > 0 && depth < 4096; ++depth) {
    if (pid == ancestor) return true;
    if (pid == 1) return false;
    pid = parent_of(pid);
  }
  return false;
}

std::string exe_path_of(pid_t pid) {
  char p[48], buf[PATH_MAX];
  snprintf(p, sizeof p, "/proc/%d/exe", pid);
  ssize_t n = readlink(p, buf, sizeof buf);
  if (n <= 0) return {};
  std::string s(buf, static_cast<size_t>(n));
  // An upgraded package leaves running servers on the unlinked file.
  constexpr std::string_view kDeleted = " (deleted)";
  if (s.ends_with(kDeleted)) s.resize(s.size() - kDeleted.size());
  return s;
}

std::vector<std::string> UnixServers::outside_servers(int sockfile) {
  struct stat st;
  if (fstat(sockfile, &st) != 0 || !S_ISSOCK(st.st_mode)) return {};
  // bind() makes a new file every time: the file stands for one socket for
  // its life, so what was found for it holds without asking the kernel
  // again (the change time tells an inode number used again apart).
  FileKey key{st.st_dev, st.st_ino, st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
  {
    std::lock_guard lk(mu_);
    if (auto it = by_file_.find(key); it != by_file_.end()) return it->second;
  }
  std::vector<std::string> servers;
  if (auto ls = unix_listeners())
    for (const auto& l : *ls)
      if (l.vfs_ino && l.vfs_dev == st.st_dev && l.vfs_ino == static_cast<uint32_t>(st.st_ino)) {
        servers = servers_of(l);
        break;
      }
  std::lock_guard lk(mu_);
  if (by_file_.size() >= kCacheLimit) by_file_.clear();
  by_file_.emplace(key, servers);
  return servers;
}

std::vector<std::string> UnixServers::outside_servers(std::string_view abstract) {
  auto ls = unix_listeners();
  if (!ls) return {};
  for (const auto& l : *ls)
    if (!l.vfs_ino && l.abstract == abstract) return servers_of(l);
  return {};
}

std::vector<std::string> UnixServers::servers_of(const UnixListener& l) {
  std::lock_guard lk(mu_);
  if (auto it = by_socket_.find(l.sock_ino); it != by_socket_.end()) return it->second;
  if (by_socket_.size() >= kCacheLimit) by_socket_.clear();
  std::vector<std::string> exes;
  // The session's own servers are the common case (a test suite's): found
  // among the processes the supervisor knows, without reading all of /proc.
  std::vector<pid_t> mine = session_pids_ ? session_pids_() : std::vector<pid_t>{};
  bool in_session = std::any_of(mine.begin(), mine.end(), [&](pid_t p) { return pid_holds(p, l.sock_ino); });
  if (!in_session) {
    std::unordered_set<pid_t> skip(mine.begin(), mine.end());
    for (pid_t h : socket_holders(l.sock_ino, [&](pid_t p) { return skip.count(p) > 0; })) {
      if (descends_from(h, init_)) {
        exes.clear();
        break;
      }
      std::string exe = exe_path_of(h);
      if (!exe.empty() && std::find(exes.begin(), exes.end(), exe) == exes.end()) exes.push_back(exe);
    }
  }
  by_socket_.emplace(l.sock_ino, exes);
  return exes;
}

}  // namespace cb
