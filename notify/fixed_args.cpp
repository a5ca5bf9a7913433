#include "notify/fixed_args.h"

#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "procs/creds.h"
#include "procs/procs.h"

namespace cb {
namespace {

// A number field of a status text ("\nThreads:"), or -1.
long status_number(const std::string& status, const char* key) {
  size_t at = status.find(key);
  return at == std::string::npos ? -1 : atol(status.c_str() + at + strlen(key));
}

}  // namespace

std::string unfixed_args(pid_t tid, const std::vector<ArgRange>& ranges,
                         const std::function<std::vector<pid_t>()>& session_pids, int dirfd) {
  Privileged priv;
  std::string status = read_proc_file(tid, "status", 8192);
  if (status_number(status, "\nThreads:") != 1) return "the caller has other threads that could change its arguments";
  auto self = static_cast<pid_t>(status_number(status, "\nTgid:"));
  if (session_pids)
    for (pid_t p : session_pids()) {
      if (p == self) continue;
      if (syscall(SYS_kcmp, self, p, KCMP_VM, 0, 0) == 0)
        return "another process shares the caller's memory and could change its arguments";
      if (dirfd != -1 &&
          (syscall(SYS_kcmp, self, p, KCMP_FILES, 0, 0) == 0 || syscall(SYS_kcmp, self, p, KCMP_FS, 0, 0) == 0))
        return "another process shares the caller's descriptors or directory and could change what its path names";
    }
  struct stat exe {};
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/exe", tid);
  bool have_exe = stat(link, &exe) == 0;
  std::istringstream maps(read_proc_file(tid, "maps", 1 << 22));
  struct Map {
    uint64_t lo, hi;
    bool ok;
  };
  std::vector<Map> regions;
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long lo = 0, hi = 0, off = 0, ino = 0;
    char perms[8] = {};
    unsigned ma = 0, mi = 0;
    if (sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu", &lo, &hi, perms, &off, &ma, &mi, &ino) != 7) continue;
    bool priv_map = perms[3] == 'p';
    bool anon = ino == 0;
    bool own_exe = have_exe && ino == exe.st_ino && makedev(ma, mi) == exe.st_dev;
    regions.push_back({lo, hi, priv_map && (anon || own_exe)});
  }
  for (const ArgRange& r : ranges) {
    if (!r.addr) continue;
    uint64_t end = r.addr + (r.len ? r.len : 1);
    uint64_t at = r.addr;
    while (at < end) {
      const Map* m = nullptr;
      for (const auto& g : regions)
        if (g.lo <= at && at < g.hi) m = &g;
      if (!m) return "an argument lies outside the caller's memory";
      if (!m->ok) return "an argument lies in shared or file-backed memory another process could change";
      at = m->hi;
    }
  }
  return {};
}

bool descriptors_fixed(pid_t tid, const std::function<std::vector<pid_t>()>& session_pids) {
  Privileged priv;
  std::string status = read_proc_file(tid, "status", 8192);
  if (status_number(status, "\nThreads:") != 1 || status_number(status, "\nTgid:") != tid) return false;
  if (session_pids)
    for (pid_t p : session_pids()) {
      if (p == tid) continue;
      long same = syscall(SYS_kcmp, tid, p, KCMP_FILES, 0, 0);
      if (same == 0 || (same < 0 && errno != ESRCH)) return false;  // sharing, or unknown: not fixed
    }
  return true;
}

}  // namespace cb
