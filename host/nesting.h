// What an enclosing sandbox leaves this process: whether it may have a
// seccomp listener of its own, and whether it may make the private
// namespaces the mount layer and the session's pid namespace need.
//
// Asked natively, in forked children that only make system calls (as in
// host/features.h), never from an environment variable: inside another
// cottonbox session, or any sandbox whose supervisor uses seccomp
// user-notify, the kernel refuses a second listener in the same filter
// chain (kernel/seccomp.c, has_duplicate_listener: EBUSY), and the outer
// sandbox's policy decides which namespaces may be made.
#pragma once

#include <string>

namespace cb {

struct ListenerProbe {
  bool available = false;  // seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER) succeeds here
  int err = 0;             // its errno when not: EBUSY when a filter above has a listener
  int filters_above = 0;   // seccomp filters already installed on this process (Seccomp_filters)
  std::string why;         // when !available: the reason, in words
};
// Cheap when this process has no seccomp filter at all (no fork then).
ListenerProbe probe_listener();

// Whether `unshare(flags)` succeeds in a child; 0, or the errno.  As the
// session would make them: a user namespace first for non-root (mapped
// like the launcher maps it, so the mount namespace is its own).
struct NamespaceProbe {
  int mount_err = 0;  // a private mount namespace (the mount layer)
  int pid_err = 0;    // a pid namespace
};
NamespaceProbe probe_namespaces(bool root);

// True when this process runs in the initial user namespace (its
// capabilities count for the whole machine: BPF, for one, needs that).
bool in_initial_user_namespace();

}  // namespace cb
