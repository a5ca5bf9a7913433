#include "host/features.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "host/in_child.h"
#include "host/nesting.h"
#include "syscalls/compat.h"

#ifdef COTTONBOX_HAVE_EBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

namespace cb {

namespace {

// PIDFD_GET_INFO (6.13) and PIDFD_INFO_EXIT (6.15): newer than Debian 12's headers.
struct cb_pidfd_info {
  uint64_t mask;
  uint64_t cgroupid;
  uint32_t pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  int32_t exit_code;
};
static_assert(sizeof(cb_pidfd_info) == 64);  // PIDFD_INFO_SIZE_VER0
constexpr unsigned long kPidfdGetInfo = _IOWR(0xFF, 11, cb_pidfd_info);
constexpr uint64_t kPidfdInfoExit = 1ULL << 3;

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
constexpr unsigned kLandlockCreateRulesetVersion = 1U << 0;

std::string read_line(const char* path) {
  std::ifstream in(path);
  std::string s;
  if (!std::getline(in, s)) return {};
  return s;
}

// Probe results of the seccomp child, as exit-status bits.
constexpr int kNotify = 1, kSyncWakeup = 2;

int seccomp_probe(unsigned flags) {
  static sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  sock_fprog prog{1, allow};
  return in_child([&]() -> int {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 0;
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (fd < 0) return 0;
    int bits = kNotify;
    if (ioctl(static_cast<int>(fd), SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0)
      bits |= kSyncWakeup;
    return bits;
  });
}

}  // namespace

// The simplest bpf() call (an array map): an enclosing sandbox's refusal,
// told apart from what the kernel lacks.
int bpf_refused() {
  union bpf_attr a {};
  a.map_type = BPF_MAP_TYPE_ARRAY;
  a.key_size = 4;
  a.value_size = 4;
  a.max_entries = 1;
  long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return 0;
  }
  return errno == EPERM || errno == EACCES ? errno : 0;
}

namespace {

bool tracefs_has(const UniqueFd& dir, const char* rel) { return dir && faccessat(dir.get(), rel, F_OK, 0) == 0; }

void probe_userns(Features& f) {
  std::string clone = read_line("/proc/sys/kernel/unprivileged_userns_clone");
  std::string max = read_line("/proc/sys/user/max_user_namespaces");
  int rc = in_child([]() -> int {
    // As root, drop to nobody first: the question is what an unprivileged user may do.
    if (geteuid() == 0) {
      if (syscall(SYS_setgroups, 0, nullptr) != 0) return 100;
      if (syscall(SYS_setresgid, 65534, 65534, 65534) != 0) return 100;
      if (syscall(SYS_setresuid, 65534, 65534, 65534) != 0) return 100;
    }
    return syscall(SYS_unshare, CLONE_NEWUSER) == 0 ? 0 : (errno & 0x7f);
  });
  if (rc == 100) {
    // In a user namespace that maps no `nobody` (`unshare -Ur`): what this
    // process may make is the question then.
    int own = in_child([]() -> int { return syscall(SYS_unshare, CLONE_NEWUSER) == 0 ? 0 : (errno & 0x7f); });
    f.userns_unprivileged = own == 0;
    f.userns_detail = own == 0  ? "a nested user namespace can be made (probed as this user: nobody is not mapped here)"
                      : own > 0 ? std::string("unshare(CLONE_NEWUSER) failed: ") + std::strerror(own)
                                : "could not be probed";
    return;
  }
  f.userns_unprivileged = rc == 0;
  if (rc == 0) {
    f.userns_detail = "unprivileged user namespaces allowed";
  } else if (clone == "0") {
    f.userns_detail = "disabled by kernel.unprivileged_userns_clone=0";
  } else if (max == "0") {
    f.userns_detail = "disabled by user.max_user_namespaces=0";
  } else if (rc > 0 && rc < 100) {
    f.userns_detail = std::string("unshare(CLONE_NEWUSER) as an unprivileged user failed: ") + std::strerror(rc);
  } else {
    f.userns_detail = "could not be probed";
  }
}

bool probe_pidfd_exit_info() {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) _exit(7);
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!pidfd) return false;
  cb_pidfd_info info{};
  info.mask = kPidfdInfoExit;
  // After the reap: only a kernel that keeps exit info still answers.
  if (ioctl(pidfd.get(), kPidfdGetInfo, &info) != 0) return false;
  return (info.mask & kPidfdInfoExit) != 0;
}

void probe_ebpf(Features& f) {
  f.bpf_privileged = has_bpf_privileges();
  f.btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  f.tracefs = find_mount("tracefs");
  f.bpffs = find_mount("bpf");
  std::string where;
  auto tfs = f.bpf_privileged ? open_tracefs(&where) : Result<UniqueFd>(Error{EPERM, "not privileged"});
  f.tracefs_usable = tfs.ok() || !f.tracefs.empty();
  if (tfs.ok()) {
    f.syscall_tracepoints = tracefs_has(*tfs, "events/syscalls/sys_enter_openat/id");
    f.io_uring_tracepoint = tracefs_has(*tfs, "events/io_uring/io_uring_submit_req/id");
  }
#ifdef COTTONBOX_HAVE_EBPF
  if (f.bpf_privileged) {
    libbpf_print_fn_t old = libbpf_set_print(nullptr);
    f.bpf_tracepoint = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, nullptr) == 1;
    f.bpf_raw_tracepoint = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, nullptr) == 1;
    f.bpf_ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 1;
    libbpf_set_print(old);
  }
  // Reading BTF needs no privilege: this answers for unprivileged users too.
  if (f.btf && !f.io_uring_tracepoint) {
    libbpf_print_fn_t old = libbpf_set_print(nullptr);
    if (btf* vm = btf__load_vmlinux_btf()) {
      f.io_uring_tracepoint = btf__find_by_name_kind(vm, "btf_trace_io_uring_submit_req", BTF_KIND_TYPEDEF) >= 0;
      btf__free(vm);
    }
    libbpf_set_print(old);
  }
#endif

  if (fake_missing("btf")) f.btf = false;
  if (fake_missing("tracefs")) {
    f.tracefs.clear();
    f.tracefs_usable = false;
  }
  if (fake_missing("bpffs")) f.bpffs.clear();
  if (fake_missing("io_uring")) f.io_uring_tracepoint = false;

  if (fake_missing("ebpf")) {
    f.ebpf_detail = "disabled by COTTONBOX_FAKE_MISSING (test only)";
    return;
  }
#ifndef COTTONBOX_HAVE_EBPF
  f.ebpf_detail = "this cottonbox was built without eBPF support (COTTONBOX_WITH_EBPF=OFF)";
#else
  if (!f.bpf_privileged)
    f.ebpf_detail = "needs root or CAP_BPF+CAP_PERFMON in the initial user namespace";
  else if (int e = bpf_refused(); e != 0)
    f.ebpf_detail = std::string("bpf() is refused here (") + std::strerror(e) +
                    "): a sandbox this runs in, such as another cottonbox session, denies it";
  else if (!f.bpf_tracepoint || !f.bpf_raw_tracepoint)
    f.ebpf_detail = "kernel lacks BPF tracepoint programs (CONFIG_BPF_EVENTS)";
  else if (!f.bpf_ringbuf)
    f.ebpf_detail = "kernel lacks BPF ring buffers (Linux 5.8 or later)";
  else if (!f.btf)
    f.ebpf_detail = "kernel lacks BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)";
  else if (!f.tracefs_usable)
    f.ebpf_detail = "tracefs is neither mounted nor mountable";
  else if (!f.syscall_tracepoints)
    f.ebpf_detail = "kernel lacks syscall tracepoints (CONFIG_FTRACE_SYSCALLS)";
  else
    f.ebpf = true;
#endif
}

}  // namespace

bool has_bpf_privileges() {
  // Capabilities in a user namespace of one's own (`unshare -Ur`) do not
  // reach the kernel's BPF.
  if (!in_initial_user_namespace()) return false;
  if (geteuid() == 0) return true;
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &hdr, data) != 0) return false;
  auto has = [&](int cap) { return (data[cap / 32].effective & (1U << (cap % 32))) != 0; };
  return has(CAP_SYS_ADMIN) || (has(CAP_BPF) && has(CAP_PERFMON));
}

bool fake_missing(std::string_view feature) {
  const char* env = std::getenv("COTTONBOX_FAKE_MISSING");
  if (!env) return false;
  std::string_view list(env);
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == feature) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

std::string find_mount(std::string_view fstype) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // id parent maj:min root mountpoint options [optional...] - fstype source superopts
    size_t sep = line.find(" - ");
    if (sep == std::string::npos) continue;
    std::istringstream tail(line.substr(sep + 3));
    std::string type;
    tail >> type;
    if (type != fstype) continue;
    std::istringstream head(line.substr(0, sep));
    std::string id, parent, dev, root, mnt;
    head >> id >> parent >> dev >> root >> mnt;
    // mountinfo escapes spaces and the like as \ooo
    std::string out;
    for (size_t i = 0; i < mnt.size(); ++i) {
      if (mnt[i] == '\\' && i + 3 < mnt.size()) {
        out += static_cast<char>(std::stoi(mnt.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        out += mnt[i];
      }
    }
    return out;
  }
  return {};
}

Result<UniqueFd> open_tracefs(std::string* where) {
  std::string mnt = find_mount("tracefs");
  if (!mnt.empty()) {
    UniqueFd fd(open(mnt.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd) {
      if (where) *where = mnt;
      return fd;
    }
  }
  // With debugfs mounted, tracefs appears below it on first access.
  if (!find_mount("debugfs").empty()) {
    UniqueFd fd(open("/sys/kernel/debug/tracing", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd && faccessat(fd.get(), "events", F_OK, 0) == 0) {
      if (where) *where = "/sys/kernel/debug/tracing";
      return fd;
    }
  }
  UniqueFd fs(static_cast<int>(syscall(SYS_fsopen, "tracefs", FSOPEN_CLOEXEC)));
  if (!fs) return Error::from_errno("tracefs is not mounted, and a private instance cannot be made (fsopen)");
  if (syscall(SYS_fsconfig, fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return Error::from_errno("cannot create a private tracefs instance");
  UniqueFd m(static_cast<int>(syscall(SYS_fsmount, fs.get(), FSMOUNT_CLOEXEC, 0)));
  if (!m) return Error::from_errno("cannot mount a private tracefs instance");
  if (where) *where = "(private instance)";
  return m;
}

Features probe_features() {
  Features f;
  utsname u{};
  if (uname(&u) == 0) f.kernel = u.release;
  f.root = geteuid() == 0;

  int bits = seccomp_probe(SECCOMP_FILTER_FLAG_NEW_LISTENER);
  f.seccomp_notify = bits > 0 && (bits & kNotify);
  f.seccomp_sync_wakeup = bits > 0 && (bits & kSyncWakeup);
  int killable = seccomp_probe(SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV);
  f.seccomp_killable_recv = killable > 0 && (killable & kNotify);
  ListenerProbe lp = probe_listener();
  f.listener_err = lp.available ? 0 : lp.err;
  f.listener_why = lp.why;
  f.seccomp_filters = lp.filters_above;
  NamespaceProbe ns = probe_namespaces(f.root);
  f.mountns_err = ns.mount_err;
  f.pidns_err = ns.pid_err;

  probe_ebpf(f);
  f.cgroup2 = find_mount("cgroup2");

  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kLandlockCreateRulesetVersion);
  if (abi > 0) {
    f.landlock_abi = static_cast<int>(abi);
  } else {
    f.landlock_detail = errno == EOPNOTSUPP ? "built in but disabled at boot (lsm=)"
                        : errno == ENOSYS   ? "not built into this kernel"
                                            : std::string("landlock_create_ruleset: ") + std::strerror(errno);
  }

  std::string dis = read_line("/proc/sys/kernel/io_uring_disabled");
  if (!dis.empty()) f.io_uring_disabled = std::atoi(dis.c_str());
  errno = 0;
  long r = syscall(SYS_io_uring_setup, 0, nullptr);
  f.io_uring = !(r < 0 && errno == ENOSYS);

  probe_userns(f);
  f.pidfd_exit_info = probe_pidfd_exit_info();

  // Test-only: report what COTTONBOX_FAKE_MISSING names as missing.
  static constexpr std::string_view kNames[] = {"seccomp",  "sync_wakeup", "killable_recv", "ebpf",
                                                "btf",      "tracefs",     "bpffs",         "cgroup2",
                                                "landlock", "io_uring",    "userns",        "pidfd_exit_info"};
  for (auto n : kNames)
    if (fake_missing(n)) f.faked.emplace_back(n);
  if (fake_missing("seccomp")) f.seccomp_notify = f.seccomp_sync_wakeup = f.seccomp_killable_recv = false;
  if (fake_missing("sync_wakeup")) f.seccomp_sync_wakeup = false;
  if (fake_missing("killable_recv")) f.seccomp_killable_recv = false;
  if (fake_missing("cgroup2")) f.cgroup2.clear();
  if (fake_missing("landlock")) {
    f.landlock_abi = 0;
    f.landlock_detail = "disabled by COTTONBOX_FAKE_MISSING (test only)";
  }
  if (fake_missing("io_uring")) f.io_uring = false;
  if (fake_missing("userns")) {
    if (!f.root) f.mountns_err = f.pidns_err = EPERM;
    f.userns_unprivileged = false;
    f.userns_detail = "disabled by COTTONBOX_FAKE_MISSING (test only)";
  }
  if (fake_missing("pidfd_exit_info")) f.pidfd_exit_info = false;
  return f;
}

}  // namespace cb
