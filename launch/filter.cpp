#include "launch/filter.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>

#include "syscalls/compat.h"

namespace cb {
namespace {

struct CtxDeleter {
  void operator()(void* c) const { seccomp_release(c); }
};
using CtxPtr = std::unique_ptr<void, CtxDeleter>;

constexpr uint32_t kNsFlags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
                                 CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP, CLONE_NEWTIME};

class Builder {
 public:
  explicit Builder(scmp_filter_ctx ctx) : ctx_(ctx) {}

  void notify(int nr) { add(SCMP_ACT_NOTIFY, nr, 0, nullptr); }
  void errno_(int nr, int e) { add(SCMP_ACT_ERRNO(e), nr, 0, nullptr); }
  void notify_if(int nr, scmp_arg_cmp cmp) { add(SCMP_ACT_NOTIFY, nr, 1, &cmp); }
  // Notify when any bit of `bits` is set in argument `arg` (one rule per bit:
  // a masked compare tests equality, not "any of").
  void notify_any_bit(int nr, unsigned arg, uint64_t bits) {
    for (uint64_t b = 1; b; b <<= 1)
      if (bits & b) notify_if(nr, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, b, b));
  }
  // A write-intent open: access mode not O_RDONLY, or O_CREAT/O_TRUNC.
  void notify_write_open(int nr, unsigned flags_arg) {
    notify_if(nr, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY));
    notify_if(nr, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR));
    notify_if(nr, SCMP_CMP(flags_arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_ACCMODE));
    notify_any_bit(nr, flags_arg, O_CREAT | O_TRUNC);
  }

  int error() const { return err_; }

 private:
  void add(uint32_t action, int nr, unsigned n, const scmp_arg_cmp* cmp) {
    int rc = n ? seccomp_rule_add_array(ctx_, action, nr, n, cmp) : seccomp_rule_add(ctx_, action, nr, 0);
    // EEXIST: an identical rule is already there (several families share a syscall).
    if (rc < 0 && rc != -EEXIST && !err_) err_ = -rc;
  }
  scmp_filter_ctx ctx_;
  int err_ = 0;
};

}  // namespace

Result<FilterProgram> build_filter(const FilterSpec& s) {
  CtxPtr ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Error{ENOMEM, "seccomp_init failed"};
  // Native arch only: an i386 (`int 0x80`) or x32 syscall would be decoded
  // with another table, so it kills the process instead of being allowed.
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0);  // set by the launcher itself
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);

  const bool any_file = s.any_file();
  Builder b(ctx.get());
  if (s.read_opens) {
    for (int nr : {__NR_open, __NR_openat, __NR_creat}) b.notify(nr);
  } else if (s.write_opens) {
    b.notify_write_open(__NR_open, 1);
    b.notify_write_open(__NR_openat, 2);
    b.notify(__NR_creat);
  } else if (s.create_opens) {
    b.notify_any_bit(__NR_open, 1, O_CREAT);
    b.notify_any_bit(__NR_openat, 2, O_CREAT);
    b.notify(__NR_creat);
  }

  if (any_file) {
    // open_how is behind a pointer: every openat2 is judged (and carried out)
    // by the supervisor, so flags cannot change after the check.
    b.notify(__NR_openat2);
    // A file handle names an inode without a path: never a way around path rules.
    b.notify(__NR_open_by_handle_at);
  }
  if (s.deletes)
    for (int nr : {__NR_unlink, __NR_unlinkat, __NR_rmdir}) b.notify(nr);
  if (s.renames)
    for (int nr : {__NR_rename, __NR_renameat, __NR_renameat2}) b.notify(nr);
  if (s.hard_links)
    for (int nr : {__NR_link, __NR_linkat}) b.notify(nr);
  if (s.symlinks)
    for (int nr : {__NR_symlink, __NR_symlinkat}) b.notify(nr);
  if (s.creates)
    for (int nr : {__NR_mkdir, __NR_mkdirat}) b.notify(nr);
  // Device nodes are always judged: a new node for a disk that holds
  // protected files is another way to write them.
  for (int nr : {__NR_mknod, __NR_mknodat}) b.notify(nr);
  if (s.truncates) {
    b.notify(__NR_truncate);
    b.notify(__NR_ftruncate);
    // Punching, collapsing, zeroing or inserting ranges rewrites content;
    // plain allocation only grows the file.
    b.notify_any_bit(__NR_fallocate, 1,
                     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_INSERT_RANGE);
  }
  if (s.attrs) {
    for (int nr : {__NR_chmod,       __NR_fchmod,       __NR_fchmodat,     __NR_fchmodat2,  __NR_chown,
                   __NR_fchown,      __NR_lchown,       __NR_fchownat,     __NR_utime,      __NR_utimes,
                   __NR_futimesat,   __NR_utimensat,    __NR_setxattr,     __NR_lsetxattr,  __NR_fsetxattr,
                   __NR_removexattr, __NR_lremovexattr, __NR_fremovexattr, __NR_setxattrat, __NR_removexattrat})
      b.notify(nr);
  }
  if (any_file) {
    // Not seen by the tracer: always judged, so that a refusal (by a rule
    // or by a read-only mount) is always recorded.  chattr sets
    // immutable/append-only through ioctl on an fd that may well be read-only.
    for (uint64_t cmd : {uint64_t(FS_IOC_SETFLAGS), uint64_t(FS_IOC32_SETFLAGS), uint64_t(FS_IOC_FSSETXATTR)})
      b.notify_if(__NR_ioctl, SCMP_CMP(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, cmd));
  }
  if (s.execs)
    for (int nr : {__NR_execve, __NR_execveat}) b.notify(nr);
  if (s.signals)
    for (int nr :
         {__NR_kill, __NR_tkill, __NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo, __NR_pidfd_send_signal})
      b.notify(nr);
  if (s.net)
    for (int nr : {__NR_connect, __NR_bind}) b.notify(nr);
  if (s.cred_changes)
    for (int nr : {__NR_setuid, __NR_setgid, __NR_setreuid, __NR_setregid, __NR_setresuid, __NR_setresgid,
                   __NR_setfsuid, __NR_setfsgid, __NR_setgroups, __NR_capset})
      b.notify(nr);

  // Guards: always judged (and recorded) by the supervisor.
  b.notify(__NR_io_uring_setup);
  if (!s.io_uring_allowed) {
    b.errno_(__NR_io_uring_enter, ENOSYS);
    b.errno_(__NR_io_uring_register, ENOSYS);
  }
  for (int nr : {__NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_fsopen, __NR_fsconfig, __NR_fsmount,
                 __NR_move_mount, __NR_open_tree, __NR_mount_setattr, __NR_fspick, __NR_open_tree_attr})
    b.notify(nr);
  b.notify(__NR_setns);
  b.notify_any_bit(__NR_unshare, 0, [] {
    uint64_t m = 0;
    for (auto f : kNsFlags) m |= f;
    return m;
  }());
  b.notify_any_bit(__NR_clone, 0, [] {
    uint64_t m = 0;
    for (auto f : kNsFlags) m |= f;
    return m;
  }());
  // The supervisor caches each thread's cwd and root: changing them, or a
  // process sharing its fs with another (clone with CLONE_FS but not
  // CLONE_THREAD, which no libc does by default), must reach it.
  b.notify(__NR_chdir);
  b.notify(__NR_fchdir);
  {
    scmp_arg_cmp c = SCMP_CMP(0, SCMP_CMP_MASKED_EQ, CLONE_FS | CLONE_THREAD, CLONE_FS);
    b.notify_if(__NR_clone, c);
  }
  // clone3 passes its flags behind a pointer: ENOSYS makes libc fall back to clone.
  b.errno_(__NR_clone3, ENOSYS);
  for (int nr : {__NR_ptrace, __NR_process_vm_writev, __NR_pidfd_getfd}) b.notify(nr);
  for (int nr : {__NR_bpf, __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_kexec_load,
                 __NR_kexec_file_load, __NR_iopl, __NR_ioperm})
    b.notify(nr);
  // Changing another process's limits (pid != 0 and a new limit given).
  {
    scmp_arg_cmp c[2] = {SCMP_CMP(0, SCMP_CMP_NE, 0), SCMP_CMP(2, SCMP_CMP_NE, 0)};
    if (int rc = seccomp_rule_add_array(ctx.get(), SCMP_ACT_NOTIFY, __NR_prlimit64, 2, c); rc < 0)
      return Error{-rc, "seccomp rule for prlimit64"};
  }
  // A page-fault handler could stall the supervisor's reads of target memory.
  b.errno_(__NR_userfaultfd, EPERM);

  if (b.error()) return Error{b.error(), std::string("building the seccomp filter: ") + strerror(b.error())};

  // Debian 12's libseccomp has no export to memory: go through a memfd.
  UniqueFd mfd(memfd_create("cottonbox-filter", MFD_CLOEXEC));
  if (!mfd) return Error::from_errno("memfd_create");
  if (int rc = seccomp_export_bpf(ctx.get(), mfd.get()); rc < 0) return Error{-rc, "seccomp_export_bpf failed"};
  off_t len = lseek(mfd.get(), 0, SEEK_END);
  if (len <= 0 || len % sizeof(sock_filter)) return Error{EINVAL, "bad exported filter size"};
  FilterProgram prog;
  prog.insns.resize(len / sizeof(sock_filter));
  if (pread(mfd.get(), prog.insns.data(), len, 0) != len) return Error::from_errno("reading the filter");
  return prog;
}

int install_filter_raw(const FilterProgram& prog, bool* killable) {
  sock_fprog fprog{static_cast<unsigned short>(prog.insns.size()), const_cast<sock_filter*>(prog.insns.data())};
  unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  int fd = static_cast<int>(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog));
  if (fd >= 0) {
    if (killable) *killable = true;
    return fd;
  }
  if (errno != EINVAL) return -1;
  if (killable) *killable = false;
  return static_cast<int>(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog));
}

}  // namespace cb
