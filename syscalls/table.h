// The one table of system calls (x86_64).
//
// For every call cottonbox acts on, one row says:
//   - its family: what work it does, which actions it can amount to, and
//     (through the family) which handler classifies a notification of it
//     (notify/classify.cpp) and which action a trace record of it is
//     (trace/trace_events.cpp);
//   - how its arguments are laid out (which one is the path, the dirfd, the
//     flags, ...), read alike by the supervisor, the eBPF tracer's kernel
//     side (bpf/cb_wire.h's descriptor, filled from the row) and the
//     tracer's decoder;
//   - when the seccomp filter sends it to the supervisor (its clauses, each
//     under a gate the plan opens), or answers it in the kernel;
//   - whether the tracer records it.
// Adding a system call is one row here; a new family is one row plus one
// handler on each side that reads it.  Tests hold every row against the
// classifiers and the filter.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "policy/event.h"

namespace cb {

enum class Family : uint8_t {
  Open,          // open, openat, creat, openat2 (flags behind a pointer)
  OpenByHandle,  // open_by_handle_at: an inode without a path
  Unlink,        // unlink, unlinkat, rmdir
  Rename,
  Link,     // hard links
  Symlink,  // path1: the new link; path2: its contents, never resolved
  Mkdir,
  Mknod,
  Truncate,    // truncate(2): by path
  FdTruncate,  // ftruncate(2): on an open file
  Fallocate,   // only the modes that rewrite content are notified
  Chmod,
  Chown,
  Utime,
  SetXattr,
  RemoveXattr,
  XattrAt,  // setxattrat/removexattrat: refused, callers use the classic calls
  Chattr,   // ioctl(FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR): immutable, append-only
  Exec,
  Signal,
  Trace,    // ptrace, process_vm_writev, pidfd_getfd
  Prlimit,  // on another process
  Connect,
  Bind,
  Send,    // sendto with an address, sendmsg, sendmmsg: carried out by the supervisor
  Listen,  // listen(2): judged on the address the socket is bound to
  IoUringSetup,
  IoUringUse,   // io_uring_enter/register: answered in the filter
  Mount,        // mount, umount2, pivot_root, chroot and the new mount API
  Namespace,    // unshare, setns
  Clone,        // clone: namespaces, or a shared fs_struct
  Clone3,       // flags behind a pointer: ENOSYS, libc falls back to clone
  Kernel,       // bpf, modules, kexec, raw I/O ports
  Chdir,        // the supervisor's cwd cache
  Creds,        // setuid and kin: the supervisor's credential cache
  Userfaultfd,  // could stall the supervisor's reads of target memory
  Count
};
std::string_view family_name(Family f);
// The actions a call of this family can amount to (a rename is a rename and
// a delete or a create of its destination; a hard link a link and a write).
ActionMask family_actions(Family f);

// Argument roles: the index of the argument that plays the role, or -1.
inline constexpr int8_t kNoArg = -1;
// dirfd roles: relative paths are relative to the cwd; or the string is not
// a path to resolve (a symlink's contents, a file system's name).
inline constexpr int8_t kAtCwd = -1;
inline constexpr int8_t kAtRaw = -2;

struct SyscallArgs {
  int8_t path1 = kNoArg, dirfd1 = kAtCwd, path2 = kNoArg, dirfd2 = kAtCwd;
  int8_t fd = kNoArg;    // an fd that is the object (ftruncate, fchmod, ...)
  int8_t sock = kNoArg;  // a socket
  int8_t addr = kNoArg, addrlen = kNoArg;
  int8_t how = kNoArg;    // openat2: struct open_how
  int8_t pidfd = kNoArg;  // a pidfd naming the target process
  int8_t flags = kNoArg, mode = kNoArg, uid = kNoArg, gid = kNoArg;
  int8_t offset = kNoArg, length = kNoArg;
  int8_t sig = kNoArg, target = kNoArg, target_tid = kNoArg;
  int8_t dev = kNoArg;   // mknod: the device number
  int8_t data = kNoArg;  // a payload behind a pointer: times, an xattr's value, an ioctl's argument, a handle
  int8_t name = kNoArg;  // an xattr's name
  int8_t size = kNoArg;  // the payload's size (xattr value, open_how)
  // Flags the call has without an argument: creat is O_CREAT|O_WRONLY|O_TRUNC,
  // rmdir is AT_REMOVEDIR, lchown and lsetxattr do not follow a final symlink.
  uint64_t implied_flags = 0;
};

// The families of calls a plan may send to the supervisor: each filter
// clause opens under one gate.  `Always` clauses are the guards, which are
// rare and belong in the trail whatever the policy says.
enum class Gate : uint8_t {
  Always,
  ReadOpens,    // every open: some rule decides file.read
  WriteOpens,   // opens that may write, truncate or create
  CreateOpens,  // opens that may create (creation inside read-only trees)
  FileObjects,  // openat2, open_by_handle_at, chattr: some file action is judged
  Deletes,
  Renames,
  HardLinks,
  Symlinks,
  Creates,  // mkdir
  Truncates,
  Attrs,
  Execs,
  Signals,
  Net,    // connect, bind
  Sends,  // datagrams with an address: only where some rule judges net.send
  CredChanges,
  IoUringRefused,  // io_uring_enter/register fail in the filter
  Count
};
using GateMask = uint32_t;
constexpr GateMask gate_bit(Gate g) { return GateMask{1} << static_cast<int>(g); }
std::string_view gate_name(Gate g);

// One comparison of a scalar argument, made in the filter (race-free).
enum class CmpOp : uint8_t {
  None,
  MaskedEq,   // (arg & mask) == value
  NotEqual,   // arg != value
  AnyBit,     // arg & mask != 0 (a masked compare per bit: seccomp tests equality)
  WriteOpen,  // open flags that may write: O_WRONLY/O_RDWR/O_ACCMODE, O_CREAT or O_TRUNC
};
struct ArgCmp {
  int8_t arg = kNoArg;
  CmpOp op = CmpOp::None;
  uint64_t mask = 0;
  uint64_t value = 0;
};
// When the filter acts on a call: every comparison holds and the clause's
// gate is open.  It then notifies the supervisor, or fails the call with
// `errno_` in the kernel.
struct FilterClause {
  Gate gate = Gate::Count;  // Count: no clause
  ArgCmp cmp[2] = {};
  int16_t errno_ = 0;  // 0: notify
};

struct Syscall {
  int nr = -1;
  std::string_view name;
  Family family = Family::Count;
  SyscallArgs args;
  std::array<FilterClause, 3> filter = {};
  bool traced = false;          // the eBPF tracer records it
  bool cwd_result = false;      // chdir: a successful call's path is the new cwd
  bool repoints_names = false;  // may make a known name lead elsewhere (notify/carry.h)
};

std::span<const Syscall> syscall_table();
// The row for `nr`, or null when cottonbox does nothing with the call.
const Syscall* find_syscall(int nr);

}  // namespace cb
