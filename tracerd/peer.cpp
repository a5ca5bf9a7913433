#include "tracerd/peer.h"

#include <poll.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>

namespace cb::tracerd {

namespace {

// The value of "Key:" in a /proc status-like file, or "" (and `found` false).
std::string field(const std::string& path, const std::string& key, bool* found) {
  std::ifstream f(path);
  std::string line;
  *found = false;
  while (std::getline(f, line)) {
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() && line[key.size()] == ':') {
      *found = true;
      return line.substr(key.size() + 1);
    }
  }
  return {};
}

long first_number(const std::string& s) {
  std::istringstream in(s);
  long v = -1;
  in >> v;
  return v;
}

size_t count_numbers(const std::string& s) {
  std::istringstream in(s);
  size_t n = 0;
  long v;
  while (in >> v) ++n;
  return n;
}

}  // namespace

Result<Admitted> admit(const ucred& peer, int peer_pidfd, int pidfd, uint32_t own_level, const EbpfPrograms& progs) {
  bool found = false;
  // A pidfd's fdinfo names its process in the pid namespace of our /proc
  // (-1 once it has exited); any other fd has no such line.
  std::string pid_s = field("/proc/self/fdinfo/" + std::to_string(pidfd), "Pid", &found);
  if (!found) return Error{EINVAL, "what was sent is not a pidfd"};
  long pid = first_number(pid_s);
  if (pid <= 0) return Error{ESRCH, "the process has exited or is not visible to the tracer service"};
  std::string status = "/proc/" + std::to_string(pid) + "/status";
  long ppid = first_number(field(status, "PPid", &found));
  if (!found) return Error{ESRCH, "the process has exited"};
  long uid = first_number(field(status, "Uid", &found));
  if (ppid != peer.pid)
    return Error{EPERM, "process " + std::to_string(pid) + " is not a child of the caller (pid " +
                            std::to_string(peer.pid) + ")"};
  if (peer.uid != 0 && uid != static_cast<long>(peer.uid))
    return Error{EPERM, "process " + std::to_string(pid) + " is not run by the caller's uid"};
  // Read while the pidfd's process was alive: the numbers were its own.
  pollfd pf{pidfd, POLLIN, 0};
  if (poll(&pf, 1, 0) != 0) return Error{ESRCH, "the process has exited"};
  if (progs.is_tracked(static_cast<pid_t>(pid)))
    return Error{EALREADY, "process " + std::to_string(pid) + " is recorded already"};
  if (progs.is_tracked(peer.pid)) return Error{EPERM, "the caller is itself inside a recorded session"};

  Admitted a;
  a.pid = static_cast<pid_t>(pid);
  std::string peer_dir = "/proc/" + std::to_string(peer.pid);
  struct stat st {};
  if (stat((peer_dir + "/ns/pid").c_str(), &st) != 0) return Error{ESRCH, "the caller has exited"};
  // NSpid lists the caller's numbers from our namespace down to its own.
  size_t levels = count_numbers(field(peer_dir + "/status", "NSpid", &found));
  if (!found || levels == 0) return Error{ESRCH, "the caller's pid namespace cannot be told"};
  a.reader_ns = PidNamespace{st.st_dev, st.st_ino, own_level + static_cast<uint32_t>(levels - 1)};
  // The caller still alive after everything above was read: its pid was
  // not reused meanwhile, so what was read of it was its own.  Without
  // SO_PEERPIDFD (before Linux 6.5) the caller is known by pid alone.
  if (peer_pidfd >= 0) {
    pollfd pp{peer_pidfd, POLLIN, 0};
    if (poll(&pp, 1, 0) != 0) return Error{ESRCH, "the caller has exited"};
  }
  return a;
}

}  // namespace cb::tracerd
