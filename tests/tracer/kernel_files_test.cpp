// Which writes change the machine rather than a file (notify/kernel_files.h).
#include "notify/kernel_files.h"

#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/statfs.h>

#include <string>

namespace cb {
namespace {

KernelFile::Kind on_proc(const char* fs_path) { return kernel_file(PROC_SUPER_MAGIC, fs_path).kind; }
std::string ns_of(const char* fs_path) {
  KernelFile k = kernel_file(PROC_SUPER_MAGIC, fs_path);
  return k.ns ? k.ns : "";
}

TEST(KernelFiles, TheMachinesSettingsAreSettingsWhateverTheirMount) {
  EXPECT_EQ(on_proc("/sys/kernel/core_pattern"), KernelFile::Setting);
  EXPECT_EQ(on_proc("/sys/kernel/modprobe"), KernelFile::Setting);
  EXPECT_EQ(on_proc("/sys/fs/binfmt_misc/register"), KernelFile::Setting);
  EXPECT_EQ(on_proc("/sys/vm/drop_caches"), KernelFile::Setting);
  EXPECT_EQ(on_proc("/sysrq-trigger"), KernelFile::Setting);
  EXPECT_EQ(on_proc("/irq/1/smp_affinity"), KernelFile::Setting);
  // /proc/sysvipc is not /proc/sys, and the machine's too.
  EXPECT_EQ(on_proc("/sysvipc/shm"), KernelFile::Setting);
  EXPECT_EQ(kernel_file(SYSFS_MAGIC, "").kind, KernelFile::Setting);
  EXPECT_EQ(kernel_file(CGROUP2_SUPER_MAGIC, "").kind, KernelFile::Setting);
  EXPECT_EQ(kernel_file(CGROUP_SUPER_MAGIC, "").kind, KernelFile::Setting);
  EXPECT_EQ(kernel_file(DEBUGFS_MAGIC, "").kind, KernelFile::Setting);
}

TEST(KernelFiles, AProcesssOwnDirectoryIsNoSetting) {
  EXPECT_EQ(on_proc("/self/comm"), KernelFile::None);
  EXPECT_EQ(on_proc("/thread-self/attr/current"), KernelFile::None);
  EXPECT_EQ(on_proc("/1234/uid_map"), KernelFile::None);
  EXPECT_EQ(on_proc("1234/oom_score_adj"), KernelFile::None);
  EXPECT_EQ(on_proc("/12a/x"), KernelFile::Setting);
}

TEST(KernelFiles, ANamespacesOwnSettingsNameTheirNamespace) {
  EXPECT_EQ(ns_of("/sys/net/ipv4/ip_forward"), "net");
  EXPECT_EQ(ns_of("/sys/user/max_user_namespaces"), "user");
  EXPECT_EQ(ns_of("/sys/fs/mqueue/msg_max"), "ipc");
  EXPECT_EQ(ns_of("/sys/kernel/shmmax"), "ipc");
  EXPECT_EQ(ns_of("/sys/kernel/sem"), "ipc");
  EXPECT_EQ(ns_of("/sys/kernel/hostname"), "uts");
  EXPECT_EQ(on_proc("/sys/kernel/hostname"), KernelFile::Namespaced);
  // The same names elsewhere are the machine's.
  EXPECT_EQ(on_proc("/sys/kernel/core_pattern"), KernelFile::Setting);
  EXPECT_EQ(on_proc("/sys/fs/file-max"), KernelFile::Setting);
  EXPECT_EQ(on_proc("/sys/kernel/shmmaxx"), KernelFile::Setting);
}

TEST(KernelFiles, DataFileSystemsHoldNoSettings) {
  EXPECT_EQ(kernel_file(EXT4_SUPER_MAGIC, "/sys/kernel/core_pattern").kind, KernelFile::None);
  EXPECT_EQ(kernel_file(TMPFS_MAGIC, "/sys").kind, KernelFile::None);
  EXPECT_FALSE(kernel_fs(EXT4_SUPER_MAGIC));
  EXPECT_FALSE(kernel_fs(OVERLAYFS_SUPER_MAGIC));
  EXPECT_TRUE(kernel_fs(PROC_SUPER_MAGIC));
  // As the kernel reports them for the mounts here.
  struct statfs sf;
  ASSERT_EQ(statfs("/proc", &sf), 0);
  EXPECT_TRUE(kernel_fs(static_cast<unsigned long>(sf.f_type)));
  if (statfs("/sys", &sf) == 0) {
    EXPECT_TRUE(kernel_fs(static_cast<unsigned long>(sf.f_type)));
  }
}

}  // namespace
}  // namespace cb
