#include "host/nesting.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "host/in_child.h"

namespace cb {
namespace {

// A field of /proc/self/status ("Seccomp_filters"), or -1.
int status_field(const char* name) {
  std::ifstream in("/proc/self/status");
  std::string line;
  std::string key = std::string(name) + ":";
  while (std::getline(in, line))
    if (line.compare(0, key.size(), key) == 0) return std::atoi(line.c_str() + key.size());
  return -1;
}

}  // namespace

ListenerProbe probe_listener() {
  ListenerProbe p;
  int mode = status_field("Seccomp");
  p.filters_above = std::max(0, status_field("Seccomp_filters"));
  if (mode == 0) {
    // No filter above: nothing can hold a listener already.
    p.available = true;
    return p;
  }
  static sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  int rc = in_child([]() -> int {
    sock_fprog prog{1, allow};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno & 0x7f;
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    return fd < 0 ? (errno & 0x7f) : 0;
  });
  if (rc == 0) {
    p.available = true;
    return p;
  }
  p.err = rc > 0 ? rc : EIO;
  if (p.err == EBUSY)
    p.why = "a seccomp filter above this process already has a listener (" + std::to_string(p.filters_above) +
            (p.filters_above == 1 ? " filter" : " filters") +
            " installed: an outer supervisor, such as the cottonbox session this runs in), and the kernel "
            "allows one listener per filter chain";
  else if (mode == 1)
    p.why = "this process runs in seccomp strict mode";
  else
    p.why = std::string("seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER) failed: ") + std::strerror(p.err);
  return p;
}

NamespaceProbe probe_namespaces(bool root) {
  NamespaceProbe p;
  int user = root ? 0 : CLONE_NEWUSER;
  p.mount_err = in_child([user]() -> int {
    if (syscall(SYS_unshare, user | CLONE_NEWNS) != 0) return errno & 0x7f;
    // The first mount call the session's init makes: an enclosing sandbox
    // may allow the namespace but not mounting in it.
    return mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) == 0 ? 0 : (errno & 0x7f);
  });
  p.pid_err = in_child([user]() -> int { return syscall(SYS_unshare, user | CLONE_NEWPID) == 0 ? 0 : (errno & 0x7f); });
  if (p.mount_err < 0) p.mount_err = EIO;
  if (p.pid_err < 0) p.pid_err = EIO;
  return p;
}

bool in_initial_user_namespace() {
  std::ifstream in("/proc/self/uid_map");
  unsigned long inside = 1, outside = 1, count = 0;
  if (!(in >> inside >> outside >> count)) return true;  // no user namespaces in this kernel
  return inside == 0 && outside == 0 && count == 4294967295UL;
}

}  // namespace cb
