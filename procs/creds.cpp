#include "procs/creds.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>

namespace cb {
namespace {
thread_local CredScope* t_scope = nullptr;
}

CredScope::CredScope(const Creds& c) {
  if (!c.valid) return;
  // Outside a switched scope a thread runs as the supervisor, whose ids
  // never change: read once per thread, not twice per notification.
  thread_local uid_t base_e = uid_t(-1);
  thread_local gid_t base_ge = gid_t(-1);
  uid_t e;
  gid_t ge;
  if (!t_scope && base_e != uid_t(-1)) {
    e = base_e;
    ge = base_ge;
  } else {
    uid_t r, s;
    gid_t gr, gs;
    syscall(SYS_getresuid, &r, &e, &s);
    syscall(SYS_getresgid, &gr, &ge, &gs);
    if (!t_scope) {
      base_e = e;
      base_ge = ge;
    }
  }
  if (c.fsuid == e && c.fsgid == ge) return;
  // Only a privileged supervisor can act as someone else; an unprivileged
  // one runs as the target already (same user, possibly another umask).
  if (e != 0) return;
  my_uid_ = e;
  my_gid_ = ge;
  int n = getgroups(0, nullptr);
  if (n > 0) {
    my_groups_.resize(static_cast<size_t>(n));
    getgroups(n, my_groups_.data());
  }
  target_uid_ = c.fsuid;
  target_gid_ = c.fsgid;
  target_groups_ = c.groups;
  apply(target_uid_, target_gid_, target_groups_, my_uid_);
  switched_ = true;
  t_scope = this;
}

void CredScope::apply(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, uid_t saved) {
  // Back to euid 0 first (the saved uid is 0), so that groups and gids can
  // change; the uid last, which drops the capabilities again.
  syscall(SYS_setresuid, -1, 0, -1);
  syscall(SYS_setgroups, groups.size(), groups.data());
  syscall(SYS_setresgid, gid, gid, -1);
  syscall(SYS_setresuid, uid, uid, saved);
}

CredScope::~CredScope() {
  if (!switched_) return;
  apply(my_uid_, my_gid_, my_groups_, my_uid_);
  t_scope = nullptr;
}

Privileged::Privileged() : scope_(t_scope) {
  if (scope_) scope_->apply(scope_->my_uid_, scope_->my_gid_, scope_->my_groups_, scope_->my_uid_);
}

Privileged::~Privileged() {
  if (scope_) scope_->apply(scope_->target_uid_, scope_->target_gid_, scope_->target_groups_, scope_->my_uid_);
}

std::optional<uint32_t> host_id(pid_t tid, uint32_t id, bool gid) {
  if (id == static_cast<uint32_t>(-1)) return id;
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/ns/user", tid);
  struct stat mine {
  }, theirs{};
  // In the supervisor's own namespace the map would be shown relative to
  // its parent: the id is already the supervisor's.
  if (stat("/proc/self/ns/user", &mine) != 0 || stat(p, &theirs) != 0) return std::nullopt;
  if (mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev) return id;
  snprintf(p, sizeof p, "/proc/%d/%s", tid, gid ? "gid_map" : "uid_map");
  FILE* f = fopen(p, "re");
  if (!f) return std::nullopt;
  std::optional<uint32_t> out;
  unsigned long inside = 0, outside = 0, count = 0;
  while (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
    if (id >= inside && id - inside < count) {
      out = static_cast<uint32_t>(outside + (id - inside));
      break;
    }
  fclose(f);
  return out;
}

}  // namespace cb
