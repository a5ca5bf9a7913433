#include "syscalls/table.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>

#include "syscalls/compat.h"

namespace cb {
namespace {

using A = SyscallArgs;
using C = FilterClause;

constexpr uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                     CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME;
// Punching, collapsing, zeroing or inserting ranges rewrites content; plain
// allocation only grows the file.
constexpr uint64_t kFallocRewrites =
    FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_INSERT_RANGE;

constexpr C always(Gate g) { return C{g, {}, 0}; }
constexpr C when(Gate g, ArgCmp a, ArgCmp b = {}) { return C{g, {a, b}, 0}; }
constexpr C refuse(Gate g, int err) { return C{g, {}, static_cast<int16_t>(err)}; }
constexpr ArgCmp any_bit(int8_t arg, uint64_t bits) { return {arg, CmpOp::AnyBit, bits, 0}; }
constexpr ArgCmp masked(int8_t arg, uint64_t mask, uint64_t value) { return {arg, CmpOp::MaskedEq, mask, value}; }
constexpr ArgCmp not_equal(int8_t arg, uint64_t value) { return {arg, CmpOp::NotEqual, 0, value}; }
constexpr ArgCmp write_open(int8_t arg) { return {arg, CmpOp::WriteOpen, 0, 0}; }

// An open with its flags in argument `f`: every open when a rule decides
// reads, write-intent ones when one decides writes, creating ones when
// creation inside read-only trees is carried out by the supervisor.
constexpr std::array<C, 3> opens(int8_t f) {
  return {always(Gate::ReadOpens), when(Gate::WriteOpens, write_open(f)), when(Gate::CreateOpens, any_bit(f, O_CREAT))};
}
constexpr std::array<C, 3> one(C c) { return {c, C{}, C{}}; }

// Sorted by family, then number.  The chattr ioctls are matched on their
// command's low 32 bits (the kernel compares an unsigned int).
constexpr Syscall kTable[] = {
    // ---- opens
    {SYS_open, "open", Family::Open, A{.path1 = 0, .flags = 1, .mode = 2}, opens(1), true},
    {SYS_openat, "openat", Family::Open, A{.path1 = 1, .dirfd1 = 0, .flags = 2, .mode = 3}, opens(2), true},
    {SYS_creat,
     "creat",
     Family::Open,
     A{.path1 = 0, .mode = 1, .implied_flags = O_CREAT | O_WRONLY | O_TRUNC},
     {always(Gate::ReadOpens), always(Gate::WriteOpens), always(Gate::CreateOpens)},
     true},
    // open_how is behind a pointer: every openat2 is judged and carried out
    // by the supervisor, so the flags cannot change after the check.  The
    // tracer copies it at entry into args[2..4] (flags, mode, resolve).
    {SYS_openat2, "openat2", Family::Open, A{.path1 = 1, .dirfd1 = 0, .how = 2, .flags = 2, .mode = 3, .size = 3},
     one(always(Gate::FileObjects)), true},
    // A handle names an inode without a path: never a way around path rules.
    {SYS_open_by_handle_at, "open_by_handle_at", Family::OpenByHandle, A{.fd = 0, .flags = 2, .data = 1},
     one(always(Gate::FileObjects))},
    // ---- removal
    {SYS_unlink, "unlink", Family::Unlink, A{.path1 = 0}, one(always(Gate::Deletes)), true},
    {SYS_unlinkat, "unlinkat", Family::Unlink, A{.path1 = 1, .dirfd1 = 0, .flags = 2}, one(always(Gate::Deletes)),
     true},
    {SYS_rmdir, "rmdir", Family::Unlink, A{.path1 = 0, .implied_flags = AT_REMOVEDIR}, one(always(Gate::Deletes)),
     true},
    // ---- renames
    {SYS_rename, "rename", Family::Rename, A{.path1 = 0, .path2 = 1}, one(always(Gate::Renames)), true, false, true},
    {SYS_renameat, "renameat", Family::Rename, A{.path1 = 1, .dirfd1 = 0, .path2 = 3, .dirfd2 = 2},
     one(always(Gate::Renames)), true, false, true},
    {SYS_renameat2, "renameat2", Family::Rename, A{.path1 = 1, .dirfd1 = 0, .path2 = 3, .dirfd2 = 2, .flags = 4},
     one(always(Gate::Renames)), true, false, true},
    // ---- links: path1 the existing file, path2 the new name
    {SYS_link, "link", Family::Link, A{.path1 = 0, .path2 = 1}, one(always(Gate::HardLinks)), true},
    {SYS_linkat, "linkat", Family::Link, A{.path1 = 1, .dirfd1 = 0, .path2 = 3, .dirfd2 = 2, .flags = 4},
     one(always(Gate::HardLinks)), true},
    // symlink: path1 the new link, path2 its contents
    {SYS_symlink, "symlink", Family::Symlink, A{.path1 = 1, .path2 = 0, .dirfd2 = kAtRaw}, one(always(Gate::Symlinks)),
     true, false, true},
    {SYS_symlinkat, "symlinkat", Family::Symlink, A{.path1 = 2, .dirfd1 = 1, .path2 = 0, .dirfd2 = kAtRaw},
     one(always(Gate::Symlinks)), true, false, true},
    // ---- other inodes
    {SYS_mkdir, "mkdir", Family::Mkdir, A{.path1 = 0, .mode = 1}, one(always(Gate::Creates)), true},
    {SYS_mkdirat, "mkdirat", Family::Mkdir, A{.path1 = 1, .dirfd1 = 0, .mode = 2}, one(always(Gate::Creates)), true},
    // Device nodes are always judged: a new node for a disk that holds
    // protected files is another way to write them.
    {SYS_mknod, "mknod", Family::Mknod, A{.path1 = 0, .mode = 1, .dev = 2}, one(always(Gate::Always)), true},
    {SYS_mknodat, "mknodat", Family::Mknod, A{.path1 = 1, .dirfd1 = 0, .mode = 2, .dev = 3}, one(always(Gate::Always)),
     true},
    // ---- size
    {SYS_truncate, "truncate", Family::Truncate, A{.path1 = 0, .length = 1}, one(always(Gate::Truncates)), true},
    {SYS_ftruncate, "ftruncate", Family::FdTruncate, A{.fd = 0, .length = 1}, one(always(Gate::Truncates)), true},
    {SYS_fallocate, "fallocate", Family::Fallocate, A{.fd = 0, .flags = 1, .offset = 2, .length = 3},
     one(when(Gate::Truncates, any_bit(1, kFallocRewrites))), true},
    // ---- attributes
    {SYS_chmod, "chmod", Family::Chmod, A{.path1 = 0, .mode = 1}, one(always(Gate::Attrs)), true},
    {SYS_fchmod, "fchmod", Family::Chmod, A{.fd = 0, .mode = 1}, one(always(Gate::Attrs)), true},
    {SYS_fchmodat, "fchmodat", Family::Chmod, A{.path1 = 1, .dirfd1 = 0, .mode = 2}, one(always(Gate::Attrs)), true},
    {__NR_fchmodat2, "fchmodat2", Family::Chmod, A{.path1 = 1, .dirfd1 = 0, .flags = 3, .mode = 2},
     one(always(Gate::Attrs)), true},
    {SYS_chown, "chown", Family::Chown, A{.path1 = 0, .uid = 1, .gid = 2}, one(always(Gate::Attrs)), true},
    {SYS_fchown, "fchown", Family::Chown, A{.fd = 0, .uid = 1, .gid = 2}, one(always(Gate::Attrs)), true},
    {SYS_lchown, "lchown", Family::Chown, A{.path1 = 0, .uid = 1, .gid = 2, .implied_flags = AT_SYMLINK_NOFOLLOW},
     one(always(Gate::Attrs)), true},
    {SYS_fchownat, "fchownat", Family::Chown, A{.path1 = 1, .dirfd1 = 0, .flags = 4, .uid = 2, .gid = 3},
     one(always(Gate::Attrs)), true},
    // times: tar and touch set them on every file they write
    {SYS_utime, "utime", Family::Utime, A{.path1 = 0, .data = 1}, one(always(Gate::Attrs)), true},
    {SYS_utimes, "utimes", Family::Utime, A{.path1 = 0, .data = 1}, one(always(Gate::Attrs)), true},
    {SYS_futimesat, "futimesat", Family::Utime, A{.path1 = 1, .dirfd1 = 0, .data = 2}, one(always(Gate::Attrs)), true},
    {SYS_utimensat, "utimensat", Family::Utime, A{.path1 = 1, .dirfd1 = 0, .flags = 3, .data = 2},
     one(always(Gate::Attrs)), true},
    // extended attributes (ACLs, security labels, capabilities)
    {SYS_setxattr, "setxattr", Family::SetXattr, A{.path1 = 0, .flags = 4, .data = 2, .name = 1, .size = 3},
     one(always(Gate::Attrs)), true},
    {SYS_lsetxattr, "lsetxattr", Family::SetXattr,
     A{.path1 = 0, .flags = 4, .data = 2, .name = 1, .size = 3, .implied_flags = AT_SYMLINK_NOFOLLOW},
     one(always(Gate::Attrs)), true},
    {SYS_fsetxattr, "fsetxattr", Family::SetXattr, A{.fd = 0, .flags = 4, .data = 2, .name = 1, .size = 3},
     one(always(Gate::Attrs)), true},
    {SYS_removexattr, "removexattr", Family::RemoveXattr, A{.path1 = 0, .name = 1}, one(always(Gate::Attrs)), true},
    {SYS_lremovexattr, "lremovexattr", Family::RemoveXattr,
     A{.path1 = 0, .name = 1, .implied_flags = AT_SYMLINK_NOFOLLOW}, one(always(Gate::Attrs)), true},
    {SYS_fremovexattr, "fremovexattr", Family::RemoveXattr, A{.fd = 0, .name = 1}, one(always(Gate::Attrs)), true},
    // Rare and new (6.13): refused, so that callers use the classic calls.
    {__NR_setxattrat, "setxattrat", Family::XattrAt, A{.path1 = 1, .dirfd1 = 0, .flags = 2}, one(always(Gate::Attrs)),
     true},
    {__NR_removexattrat, "removexattrat", Family::XattrAt, A{.path1 = 1, .dirfd1 = 0, .flags = 2},
     one(always(Gate::Attrs)), true},
    // chattr sets immutable or append-only through ioctl on an fd that may
    // well be read-only.  Not seen by the tracer: always judged, so that a
    // refusal (by a rule or by a read-only mount) is always recorded.
    {SYS_ioctl,
     "ioctl",
     Family::Chattr,
     A{.fd = 0, .flags = 1, .data = 2},
     {when(Gate::FileObjects, masked(1, 0xffffffffu, FS_IOC_SETFLAGS & 0xffffffffu)),
      when(Gate::FileObjects, masked(1, 0xffffffffu, FS_IOC32_SETFLAGS & 0xffffffffu)),
      when(Gate::FileObjects, masked(1, 0xffffffffu, FS_IOC_FSSETXATTR & 0xffffffffu))}},
    // ---- processes
    {SYS_execve, "execve", Family::Exec, A{.path1 = 0}, one(always(Gate::Execs))},
    {SYS_execveat, "execveat", Family::Exec, A{.path1 = 1, .dirfd1 = 0, .fd = 0, .flags = 4}, one(always(Gate::Execs))},
    {SYS_kill, "kill", Family::Signal, A{.sig = 1, .target = 0}, one(always(Gate::Signals)), true},
    {SYS_tkill, "tkill", Family::Signal, A{.sig = 1, .target = 0}, one(always(Gate::Signals)), true},
    {SYS_tgkill, "tgkill", Family::Signal, A{.sig = 2, .target = 0, .target_tid = 1}, one(always(Gate::Signals)), true},
    {SYS_rt_sigqueueinfo, "rt_sigqueueinfo", Family::Signal, A{.sig = 1, .target = 0}, one(always(Gate::Signals))},
    {SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", Family::Signal, A{.sig = 2, .target = 0, .target_tid = 1},
     one(always(Gate::Signals))},
    {SYS_pidfd_send_signal, "pidfd_send_signal", Family::Signal, A{.pidfd = 0, .flags = 3, .sig = 1},
     one(always(Gate::Signals)), true},
    {SYS_ptrace, "ptrace", Family::Trace, A{.flags = 0, .target = 1}, one(always(Gate::Always))},
    {SYS_process_vm_writev, "process_vm_writev", Family::Trace, A{.target = 0}, one(always(Gate::Always))},
    {SYS_pidfd_getfd, "pidfd_getfd", Family::Trace, A{.pidfd = 0, .flags = 1}, one(always(Gate::Always))},
    // Changing another process's limits (pid != 0 and a new limit given).
    {SYS_prlimit64, "prlimit64", Family::Prlimit, A{.flags = 1, .target = 0},
     one(when(Gate::Always, not_equal(0, 0), not_equal(2, 0)))},
    // ---- network
    {SYS_connect, "connect", Family::Connect, A{.sock = 0, .addr = 1, .addrlen = 2}, one(always(Gate::Net)), true},
    {SYS_bind, "bind", Family::Bind, A{.sock = 0, .addr = 1, .addrlen = 2}, one(always(Gate::Net)), true},
    {SYS_listen, "listen", Family::Listen, A{.sock = 0, .size = 1}, one(always(Gate::Net))},
    // Datagrams sent with an address.  sendto names it in a register: a
    // send() without one (sendto with a null address) never leaves the
    // kernel.  sendmsg and sendmmsg keep theirs behind a pointer (and may
    // carry descriptors): every one is judged and carried out, so that no
    // thread can rewrite the message after the check.  Not traced: the
    // supervisor's row is the record.
    {SYS_sendto, "sendto", Family::Send, A{.sock = 0, .addr = 4, .addrlen = 5, .flags = 3, .data = 1, .size = 2},
     one(when(Gate::Sends, not_equal(4, 0)))},
    {SYS_sendmsg, "sendmsg", Family::Send, A{.sock = 0, .flags = 2, .data = 1}, one(always(Gate::Sends))},
    {SYS_sendmmsg, "sendmmsg", Family::Send, A{.sock = 0, .flags = 3, .data = 1, .size = 2}, one(always(Gate::Sends))},
    // ---- guards
    {SYS_io_uring_setup, "io_uring_setup", Family::IoUringSetup, A{}, one(always(Gate::Always))},
    {SYS_io_uring_enter, "io_uring_enter", Family::IoUringUse, A{}, one(refuse(Gate::IoUringRefused, ENOSYS))},
    {SYS_io_uring_register, "io_uring_register", Family::IoUringUse, A{}, one(refuse(Gate::IoUringRefused, ENOSYS))},
    {SYS_mount, "mount", Family::Mount, A{.path1 = 1, .flags = 3}, one(always(Gate::Always)), false, false, true},
    {SYS_umount2, "umount2", Family::Mount, A{.path1 = 0}, one(always(Gate::Always)), false, false, true},
    {SYS_pivot_root, "pivot_root", Family::Mount, A{.path1 = 1}, one(always(Gate::Always)), false, false, true},
    {SYS_chroot, "chroot", Family::Mount, A{.path1 = 0}, one(always(Gate::Always)), false, false, true},
    {SYS_fsopen, "fsopen", Family::Mount, A{.path1 = 0, .dirfd1 = kAtRaw}, one(always(Gate::Always))},
    {SYS_fsconfig, "fsconfig", Family::Mount, A{}, one(always(Gate::Always))},
    {SYS_fsmount, "fsmount", Family::Mount, A{}, one(always(Gate::Always)), false, false, true},
    {SYS_move_mount, "move_mount", Family::Mount, A{.path1 = 3}, one(always(Gate::Always)), false, false, true},
    {SYS_open_tree, "open_tree", Family::Mount, A{.path1 = 1}, one(always(Gate::Always)), false, false, true},
    {SYS_mount_setattr, "mount_setattr", Family::Mount, A{.path1 = 1}, one(always(Gate::Always)), false, false, true},
    {SYS_fspick, "fspick", Family::Mount, A{.path1 = 1}, one(always(Gate::Always))},
    {__NR_open_tree_attr, "open_tree_attr", Family::Mount, A{.path1 = 1}, one(always(Gate::Always))},
    {SYS_unshare, "unshare", Family::Namespace, A{.flags = 0}, one(when(Gate::Always, any_bit(0, kNamespaceFlags))),
     false, false, true},
    {SYS_setns, "setns", Family::Namespace, A{.fd = 0, .flags = 1}, one(always(Gate::Always)), false, false, true},
    // clone: new namespaces, or a process that shares its fs_struct with
    // another (CLONE_FS without CLONE_THREAD, which no libc does by
    // default): the supervisor caches each thread's cwd and root.
    {SYS_clone,
     "clone",
     Family::Clone,
     A{.flags = 0},
     {when(Gate::Always, any_bit(0, kNamespaceFlags)),
      when(Gate::Always, masked(0, CLONE_FS | CLONE_THREAD, CLONE_FS))}},
    {SYS_clone3, "clone3", Family::Clone3, A{}, one(refuse(Gate::Always, ENOSYS))},
    {SYS_bpf, "bpf", Family::Kernel, A{}, one(always(Gate::Always))},
    {SYS_init_module, "init_module", Family::Kernel, A{}, one(always(Gate::Always))},
    {SYS_finit_module, "finit_module", Family::Kernel, A{}, one(always(Gate::Always))},
    {SYS_delete_module, "delete_module", Family::Kernel, A{}, one(always(Gate::Always))},
    {SYS_kexec_load, "kexec_load", Family::Kernel, A{}, one(always(Gate::Always))},
    {SYS_kexec_file_load, "kexec_file_load", Family::Kernel, A{}, one(always(Gate::Always))},
    {SYS_iopl, "iopl", Family::Kernel, A{}, one(always(Gate::Always))},
    // Packet and raw IP sockets: a packet made by hand reaches any address
    // with no connect and no address a rule could judge.
    {SYS_socket,
     "socket",
     Family::Kernel,
     A{.flags = 1},
     {when(Gate::Always, masked(0, 0xffffffffu, AF_PACKET)),
      when(Gate::Always, masked(0, 0xffffffffu, AF_INET), masked(1, 0xf, SOCK_RAW)),
      when(Gate::Always, masked(0, 0xffffffffu, AF_INET6), masked(1, 0xf, SOCK_RAW))}},
    {SYS_ioperm, "ioperm", Family::Kernel, A{}, one(always(Gate::Always))},
    // A page-fault handler could stall the supervisor's reads of target memory.
    {SYS_userfaultfd, "userfaultfd", Family::Userfaultfd, A{}, one(refuse(Gate::Always, EPERM))},
    // ---- where a process is, and who it is: the supervisor's caches
    {SYS_chdir, "chdir", Family::Chdir, A{.path1 = 0}, one(always(Gate::Always)), true, true},
    {SYS_fchdir, "fchdir", Family::Chdir, A{.fd = 0}, one(always(Gate::Always)), true},
    {SYS_setuid, "setuid", Family::Creds, A{.uid = 0}, one(always(Gate::CredChanges)), true},
    {SYS_setgid, "setgid", Family::Creds, A{.gid = 0}, one(always(Gate::CredChanges)), true},
    {SYS_setreuid, "setreuid", Family::Creds, A{}, one(always(Gate::CredChanges)), true},
    {SYS_setregid, "setregid", Family::Creds, A{}, one(always(Gate::CredChanges)), true},
    {SYS_setresuid, "setresuid", Family::Creds, A{}, one(always(Gate::CredChanges)), true},
    {SYS_setresgid, "setresgid", Family::Creds, A{}, one(always(Gate::CredChanges)), true},
    {SYS_setfsuid, "setfsuid", Family::Creds, A{}, one(always(Gate::CredChanges))},
    {SYS_setfsgid, "setfsgid", Family::Creds, A{}, one(always(Gate::CredChanges))},
    {SYS_setgroups, "setgroups", Family::Creds, A{}, one(always(Gate::CredChanges))},
    {SYS_capset, "capset", Family::Creds, A{}, one(always(Gate::CredChanges))},
};

constexpr int kMaxNr = 512;

struct Index {
  std::array<int16_t, kMaxNr> row{};
  Index() {
    row.fill(-1);
    for (size_t i = 0; i < std::size(kTable); ++i) row[static_cast<size_t>(kTable[i].nr)] = static_cast<int16_t>(i);
  }
};

constexpr bool numbers_fit() {
  for (const auto& s : kTable)
    if (s.nr < 0 || s.nr >= kMaxNr) return false;
  return true;
}
static_assert(numbers_fit(), "a syscall number beyond the index");

}  // namespace

std::span<const Syscall> syscall_table() { return kTable; }

const Syscall* find_syscall(int nr) {
  static const Index index;
  if (nr < 0 || nr >= kMaxNr) return nullptr;
  int16_t i = index.row[static_cast<size_t>(nr)];
  return i < 0 ? nullptr : &kTable[i];
}

std::string_view family_name(Family f) {
  static constexpr std::string_view kNames[] = {
      "open",     "open_by_handle", "unlink",         "rename",       "link",  "symlink",   "mkdir",    "mknod",
      "truncate", "ftruncate",      "fallocate",      "chmod",        "chown", "utime",     "setxattr", "removexattr",
      "xattrat",  "chattr",         "exec",           "signal",       "trace", "prlimit",   "connect",  "bind",
      "send",     "listen",         "io_uring_setup", "io_uring_use", "mount", "namespace", "clone",    "clone3",
      "kernel",   "chdir",          "creds",          "userfaultfd"};
  static_assert(std::size(kNames) == static_cast<size_t>(Family::Count));
  auto i = static_cast<size_t>(f);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

ActionMask family_actions(Family f) {
  switch (f) {
    case Family::Open:
    case Family::OpenByHandle:
      return bit(Action::FileRead) | bit(Action::FileWrite) | bit(Action::FileTruncate) | bit(Action::FileCreate) |
             bit(Action::ProcTrace);  // /proc/PID/mem opened for writing
    case Family::Unlink: return bit(Action::FileDelete);
    case Family::Rename: return bit(Action::FileRename) | bit(Action::FileDelete) | bit(Action::FileCreate);
    case Family::Link: return bit(Action::FileLink) | bit(Action::FileWrite) | bit(Action::FileTruncate);
    case Family::Symlink: return bit(Action::FileLink);
    case Family::Mkdir: return bit(Action::FileCreate);
    case Family::Mknod: return bit(Action::FileCreate) | bit(Action::FileWrite);
    case Family::Truncate:
    case Family::FdTruncate: return bit(Action::FileTruncate);
    case Family::Fallocate: return bit(Action::FileTruncate) | bit(Action::FileWrite);
    case Family::Chmod:
    case Family::Chown:
    case Family::Utime:
    case Family::SetXattr:
    case Family::RemoveXattr:
    case Family::XattrAt:
    case Family::Chattr: return bit(Action::FileAttr);
    case Family::Exec: return bit(Action::ProcExec);
    case Family::Signal: return bit(Action::ProcSignal);
    case Family::Trace:
    case Family::Prlimit: return bit(Action::ProcTrace);
    // A datagram socket connected to an address sends there.
    case Family::Connect: return bit(Action::NetConnect) | bit(Action::NetSend);
    // MSG_FASTOPEN with an address is a connect.
    case Family::Send: return bit(Action::NetSend) | bit(Action::NetConnect);
    case Family::Bind: return bit(Action::NetBind);
    case Family::Listen: return bit(Action::NetListen);
    case Family::IoUringSetup:
    case Family::IoUringUse: return bit(Action::SysIoUring);
    case Family::Mount: return bit(Action::SysMount);
    case Family::Namespace:
    case Family::Clone: return bit(Action::SysNamespace);
    case Family::Kernel: return bit(Action::SysKernel);
    case Family::Clone3:
    case Family::Chdir:
    case Family::Creds:
    case Family::Userfaultfd:
    case Family::Count: return 0;
  }
  return 0;
}

std::string_view gate_name(Gate g) {
  static constexpr std::string_view kNames[] = {
      "guards (io_uring_setup, mount family, namespaces, ptrace, kernel facilities, mknod)",
      "every open",
      "opens for writing, creating or truncating",
      "opens that create",
      "openat2, open_by_handle_at, chattr (the FS_IOC_SETFLAGS/FSSETXATTR ioctls)",
      "unlink/rmdir",
      "rename",
      "link",
      "symlink",
      "mkdir",
      "truncate",
      "chmod/chown/utimes/xattr",
      "execve",
      "signals",
      "connect, bind",
      "sendto with an address, sendmsg, sendmmsg",
      "credential changes (the setuid family, capset)",
      "io_uring_enter/register refused (ENOSYS)"};
  static_assert(std::size(kNames) == static_cast<size_t>(Gate::Count));
  auto i = static_cast<size_t>(g);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

}  // namespace cb
