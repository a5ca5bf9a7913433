// What this host can do, probed natively (no cottonbox involved) before a
// test relies on it.  A test whose assertion depends on a host feature
// checks it here first and skips with the reason when the host lacks it:
// hosts differ (on some, `int $0x80` faults before any syscall is made;
// some kernels are built without x32 or io_uring, or forbid user
// namespaces), and a failure there would blame cottonbox for the host.
#pragma once

#include <string>

namespace cb::test {

struct HostFeature {
  bool available = false;
  std::string reason;  // why not, in words; empty when available
  explicit operator bool() const { return available; }
};

// A 64-bit process entering the kernel through the i386 gate (`int $0x80`)
// reaches a syscall: a native getpid through it returns the pid.
const HostFeature& int80_syscalls();
// The x32 ABI (syscall numbers with bit 30 set) reaches a syscall natively.
const HostFeature& x32_syscalls();
// io_uring_setup succeeds natively (kernel.io_uring_disabled, seccomp
// policies of a container, or a kernel without it say no).
const HostFeature& io_uring();
// Landlock at `min_abi` or later is enabled.
HostFeature landlock(int min_abi);
// An unprivileged process may make a user namespace (and in it a mount
// namespace): what cottonbox's mount layer needs without root.
const HostFeature& user_namespaces();
// This process can load BPF programs (root, and neither lockdown nor a
// container's filter forbid it).
const HostFeature& bpf_programs();
// The effective uid is 0.
const HostFeature& root();

}  // namespace cb::test

// Skips the running GoogleTest test unless the feature is available.
#define CB_REQUIRE_HOST(feature)                                               \
  do {                                                                         \
    const ::cb::test::HostFeature& cb_feature_ = (feature);                    \
    if (!cb_feature_) GTEST_SKIP() << "host lacks it: " << cb_feature_.reason; \
  } while (0)
