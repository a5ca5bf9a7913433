// Who serves a unix socket: the processes that hold the listening socket a
// connect() would reach, found on the kernel's objects rather than the
// socket's name.  A tmux server started with `-S /any/where`, a D-Bus
// daemon on a custom address or a Docker daemon behind a renamed socket is
// still the same program: the rules on deputies (rules/default.yaml) test
// `net.server`, the executables of these processes outside the session.
//
// How: sock_diag (NETLINK_SOCK_DIAG, AF_UNIX) lists this network
// namespace's listening unix sockets with the file each is bound to (device
// and inode) or its abstract name; the socket's inode then names it in
// /proc/PID/fd of the processes holding it.  Only what /proc lets the
// caller read is found: a plain user sees their own processes, not root's
// (a root daemon's socket is still refused by its name).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"

namespace cb {

struct UnixListener {
  uint64_t sock_ino = 0;  // the socket's own inode (sockfs): "socket:[N]" in /proc/PID/fd
  // The file it is bound to: st_dev as stat() gives it, and the low 32 bits
  // of st_ino (all sock_diag reports).  0 for an abstract or unbound socket.
  dev_t vfs_dev = 0;
  uint32_t vfs_ino = 0;
  std::string abstract;  // the abstract name without its leading NUL; empty for others
};

// This network namespace's listening unix sockets (stream and seqpacket).
Result<std::vector<UnixListener>> unix_listeners();

// The processes (tgids) with `sock_ino` among their open descriptors.
// `skip` pids are not read.
std::vector<pid_t> socket_holders(uint64_t sock_ino, const std::function<bool(pid_t)>& skip);

// `pid`'s chain of parents (from /proc/PID/stat) reaches `ancestor`.
bool descends_from(pid_t pid, pid_t ancestor);

// The executable of `pid` as the kernel names it, without " (deleted)".
std::string exe_path_of(pid_t pid);

// Per session: which programs outside the session serve a socket, cached by
// the listening socket's inode (a server keeps its socket for its life) and
// by the file it is bound to.
class UnixServers {
 public:
  // `session_init`: every process of the session descends from it (the
  // session's init is its pid namespace's init or a subreaper).
  // `session_pids`: the processes the supervisor knows, searched first.
  UnixServers(pid_t session_init, std::function<std::vector<pid_t>()> session_pids)
      : init_(session_init), session_pids_(std::move(session_pids)) {}

  // The executables of the processes outside the session that hold the
  // listening socket bound to the file `sockfile` (an fd of the socket's
  // file, O_PATH is enough), or to the abstract name `abstract`.  Empty
  // when the session holds it itself, when nobody listens, or when the
  // holders cannot be read.
  std::vector<std::string> outside_servers(int sockfile);
  std::vector<std::string> outside_servers(std::string_view abstract);

 private:
  std::vector<std::string> servers_of(const UnixListener& l);

  struct FileKey {
    dev_t dev;
    ino_t ino;
    int64_t ctime_s, ctime_ns;
    bool operator==(const FileKey&) const = default;
  };
  struct FileKeyHash {
    size_t operator()(const FileKey& k) const {
      return std::hash<uint64_t>{}(k.ino * 1000003u ^ k.dev ^ static_cast<uint64_t>(k.ctime_ns));
    }
  };

  pid_t init_;
  std::function<std::vector<pid_t>()> session_pids_;
  std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<std::string>> by_socket_;
  std::unordered_map<FileKey, std::vector<std::string>, FileKeyHash> by_file_;
};

}  // namespace cb
