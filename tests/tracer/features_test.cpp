// The feature probe: sanity on this machine, and the test-only
// COTTONBOX_FAKE_MISSING switch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "host/features.h"
#include "tests/support/host_features.h"
#include "trace/ebpf.h"

namespace cb {
namespace {

// Sets an environment variable for one test.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~EnvGuard() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(Features, ProbeIsSane) {
  EnvGuard clean("COTTONBOX_FAKE_MISSING", "");
  Features f = probe_features();
  EXPECT_FALSE(f.kernel.empty());
  EXPECT_EQ(f.root, geteuid() == 0);
  // seccomp user-notify needs no privilege (no_new_privs is enough): every
  // kernel cottonbox supports has it.
  EXPECT_TRUE(f.seccomp_notify);
  if (f.seccomp_sync_wakeup || f.seccomp_killable_recv) {
    EXPECT_TRUE(f.seccomp_notify);
  }
  EXPECT_EQ(f.btf, access("/sys/kernel/btf/vmlinux", R_OK) == 0);
  EXPECT_EQ(f.cgroup2, find_mount("cgroup2"));
  EXPECT_EQ(f.tracefs, find_mount("tracefs"));
  EXPECT_TRUE(f.faked.empty());
  EXPECT_EQ(f.ebpf, f.bpf_privileged && f.bpf_tracepoint && f.bpf_raw_tracepoint && f.bpf_ringbuf && f.btf &&
                        f.tracefs_usable && f.syscall_tracepoints);
  EXPECT_EQ(f.ebpf, f.ebpf_detail.empty()) << f.ebpf_detail;
  if (!f.root && !has_bpf_privileges()) {
    EXPECT_FALSE(f.ebpf);
    EXPECT_EQ(f.ebpf_detail, "needs root or CAP_BPF+CAP_PERFMON in the initial user namespace");
  }
  if (f.landlock_abi == 0) {
    EXPECT_FALSE(f.landlock_detail.empty());
  }
  EXPECT_FALSE(f.userns_detail.empty());
  // Outside any sandbox a listener can be had, and root can make the
  // session's namespaces.
  if (f.seccomp_filters == 0) {
    EXPECT_EQ(f.listener_err, 0);
  }
  if (f.root && f.seccomp_filters == 0) {
    EXPECT_EQ(f.mountns_err, 0) << strerror(f.mountns_err);
    EXPECT_EQ(f.pidns_err, 0) << strerror(f.pidns_err);
  }
  EXPECT_GE(f.io_uring_disabled, -1);
  EXPECT_LE(f.io_uring_disabled, 2);
}

TEST(Features, FindMount) {
  EXPECT_EQ(find_mount("proc"), "/proc");
  EXPECT_EQ(find_mount("no-such-fs"), "");
}

TEST(Features, FakeMissingParsesAList) {
  {
    EnvGuard g("COTTONBOX_FAKE_MISSING", "landlock, ebpf ,userns");
    EXPECT_TRUE(fake_missing("ebpf"));
    EXPECT_TRUE(fake_missing("landlock"));
    EXPECT_TRUE(fake_missing("userns"));
    EXPECT_FALSE(fake_missing("btf"));
    EXPECT_FALSE(fake_missing("ebp"));
  }
  {
    EnvGuard g("COTTONBOX_FAKE_MISSING", "ebpfx");
    EXPECT_FALSE(fake_missing("ebpf"));
  }
  {
    EnvGuard g("COTTONBOX_FAKE_MISSING", "");
    EXPECT_FALSE(fake_missing("ebpf"));
  }
}

TEST(Features, FakeMissingTurnsFeaturesOff) {
  EnvGuard g("COTTONBOX_FAKE_MISSING", "ebpf,landlock,userns,sync_wakeup,pidfd_exit_info,cgroup2");
  Features f = probe_features();
  EXPECT_FALSE(f.ebpf);
  EXPECT_NE(f.ebpf_detail.find("COTTONBOX_FAKE_MISSING"), std::string::npos) << f.ebpf_detail;
  EXPECT_EQ(f.landlock_abi, 0);
  EXPECT_NE(f.landlock_detail.find("test only"), std::string::npos);
  EXPECT_FALSE(f.userns_unprivileged);
  EXPECT_FALSE(f.seccomp_sync_wakeup);
  EXPECT_FALSE(f.pidfd_exit_info);
  EXPECT_EQ(f.cgroup2, "");
  EXPECT_TRUE(f.seccomp_notify);  // not named: untouched
  EXPECT_EQ(f.faked,
            (std::vector<std::string>{"sync_wakeup", "ebpf", "cgroup2", "landlock", "userns", "pidfd_exit_info"}));
  // The loader honours it too, so a session falls back to seccomp-only.
  auto t = EbpfTracer::open();
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("COTTONBOX_FAKE_MISSING"), std::string::npos) << t.error().message;
}

TEST(Features, FakeMissingSeccompTurnsOffItsFlags) {
  EnvGuard g("COTTONBOX_FAKE_MISSING", "seccomp");
  Features f = probe_features();
  EXPECT_FALSE(f.seccomp_notify);
  EXPECT_FALSE(f.seccomp_sync_wakeup);
  EXPECT_FALSE(f.seccomp_killable_recv);
}

TEST(Features, EbpfOpenWithoutPrivilegesSaysWhy) {
  if (has_bpf_privileges()) GTEST_SKIP() << "has BPF privileges: the unprivileged message cannot be seen";
  auto t = EbpfTracer::open();
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "BPF needs root or CAP_BPF+CAP_PERFMON");
}

TEST(FeaturesPrivileged, TracefsOpens) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: mounts a private tracefs when none is mounted";
  std::string where;
  auto fd = open_tracefs(&where);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  EXPECT_FALSE(where.empty());
  EXPECT_EQ(faccessat(fd->get(), "events", F_OK, 0), 0);
  // No trace left in the mount table when it was a private instance.
  if (where == "(private instance)") {
    EXPECT_EQ(find_mount("tracefs"), "");
  }
}

TEST(FeaturesPrivileged, RootHasTheEbpfTracer) {
  CB_REQUIRE_HOST(cb::test::bpf_programs());
  if (!EbpfTracer::built_in()) GTEST_SKIP() << "built without eBPF (COTTONBOX_WITH_EBPF=OFF)";
  EnvGuard clean("COTTONBOX_FAKE_MISSING", "");
  Features f = probe_features();
  EXPECT_TRUE(f.bpf_privileged);
  EXPECT_TRUE(f.ebpf) << f.ebpf_detail;
  EXPECT_TRUE(f.syscall_tracepoints);
}

}  // namespace
}  // namespace cb
