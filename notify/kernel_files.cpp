#include "notify/kernel_files.h"

#include <linux/magic.h>

#include <array>
#include <cctype>

namespace cb {
namespace {

std::string_view first_component(std::string_view p, std::string_view* rest) {
  while (!p.empty() && p.front() == '/') p.remove_prefix(1);
  size_t slash = p.find('/');
  std::string_view head = p.substr(0, slash);
  *rest = slash == std::string_view::npos ? std::string_view{} : p.substr(slash + 1);
  return head;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// The sysctls kept per namespace (kernel/sysctl tables registered per
// net, user, ipc and uts namespace); everything else under /proc/sys is
// the machine's.
KernelFile sysctl(std::string_view rest) {
  std::string_view tail;
  std::string_view dir = first_component(rest, &tail);
  if (dir == "net") return {KernelFile::Namespaced, "net"};
  if (dir == "user") return {KernelFile::Namespaced, "user"};
  if (dir == "fs" && first_component(tail, &tail) == "mqueue") return {KernelFile::Namespaced, "ipc"};
  if (dir == "kernel") {
    std::string_view name = first_component(tail, &tail);
    static constexpr std::array<std::string_view, 11> kIpc = {
        "shmmax", "shmall", "shmmni",      "shm_rmid_forced", "msgmax",     "msgmnb",
        "msgmni", "sem",    "shm_next_id", "msg_next_id",     "sem_next_id"};
    for (auto n : kIpc)
      if (name == n) return {KernelFile::Namespaced, "ipc"};
    if (name == "hostname" || name == "domainname") return {KernelFile::Namespaced, "uts"};
  }
  return {KernelFile::Setting, nullptr};
}

}  // namespace

bool kernel_fs(unsigned long f_type) {
  switch (f_type) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BINFMTFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case 0x62656570:  // configfs
    case EFIVARFS_MAGIC:
    case PSTOREFS_MAGIC:
    case BPF_FS_MAGIC:
    case 0x65735543:  // fusectl
    case SELINUX_MAGIC:
    case SMACK_MAGIC: return true;
    default: return false;
  }
}

KernelFile kernel_file(unsigned long f_type, std::string_view fs_path) {
  if (!kernel_fs(f_type)) return {};
  if (f_type != PROC_SUPER_MAGIC) return {KernelFile::Setting, nullptr};
  std::string_view rest;
  std::string_view top = first_component(fs_path, &rest);
  // A process's own directory: its memory, id maps and attributes are
  // judged as such elsewhere.
  if (all_digits(top) || top == "self" || top == "thread-self") return {};
  if (top == "sys") return sysctl(rest);
  return {KernelFile::Setting, nullptr};
}

}  // namespace cb
