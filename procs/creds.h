// Acting with a target's credentials, one operation at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "procs/procs.h"

namespace cb {

// Switches this thread's uids, gids and groups to the target's for one
// scope, only when they differ (the common case costs two syscalls).
//
// Per-thread, through raw syscalls (glibc would broadcast the change to
// every thread).  The saved uid stays the supervisor's so the scope can
// switch back; while switched, an effective uid other than 0 has no
// capabilities, so a root supervisor acting for an unprivileged target gets
// exactly the target's permission checks, and files it opens carry the
// target's credentials (f_cred), which some kernel interfaces check later.
class CredScope {
 public:
  explicit CredScope(const Creds& c);
  ~CredScope();
  CredScope(const CredScope&) = delete;
  CredScope& operator=(const CredScope&) = delete;

  bool switched() const { return switched_; }

 private:
  friend class Privileged;
  void apply(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, uid_t saved);
  bool switched_ = false;
  uid_t my_uid_ = 0, target_uid_ = 0;
  gid_t my_gid_ = 0, target_gid_ = 0;
  std::vector<gid_t> my_groups_, target_groups_;
};

// Inside a CredScope: the supervisor's own credentials back for a moment,
// to open the target's /proc handles (its root, cwd, fds), which need
// ptrace-level access the target may not have over itself.
class Privileged {
 public:
  Privileged();
  ~Privileged();
  Privileged(const Privileged&) = delete;
  Privileged& operator=(const Privileged&) = delete;

 private:
  CredScope* scope_;
};

// An id as the caller's user namespace names it (chown's arguments), as
// the supervisor's names it, which is how a call the supervisor carries out
// passes it to the kernel: inside `unshare -Ur`, uid 0 is the user.  -1
// ("leave it") stays -1; nullopt when the caller's namespace maps no such
// id (the kernel fails the call with EINVAL then).
std::optional<uint32_t> host_id(pid_t tid, uint32_t id, bool gid);

}  // namespace cb
