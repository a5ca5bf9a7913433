#include "trace/trace_events.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/syscall.h>

#include "syscalls/compat.h"

namespace cb {

std::optional<Event> event_of(const TraceRecord& r) {
  Event ev;
  ev.ts_ns = r.ts_ns;
  ev.pid = r.pid;
  ev.tid = r.tid;
  ev.syscall_nr = r.syscall_nr;
  ev.syscall = r.syscall;
  ev.source = Source::Ebpf;
  ev.flags = r.flags;
  ev.path = r.path;
  switch (r.kind) {
    case TraceKind::Exec:
      ev.action = Action::ProcExec;
      ev.syscall = "execve";
      return ev;
    case TraceKind::IoUring:
      ev.action = Action::SysIoUring;
      ev.syscall = "io_uring:" + r.io_uring_op;
      ev.path = "io_uring";
      ev.flags = r.io_uring_opcode;
      return ev;
    case TraceKind::Fork:
    case TraceKind::Exit: return std::nullopt;
    case TraceKind::Syscall: break;
  }
  switch (r.syscall_nr) {
    case SYS_open:
    case SYS_openat:
    case SYS_openat2:
    case SYS_creat: {
      int acc = static_cast<int>(r.flags & O_ACCMODE);
      bool write = !(r.flags & O_PATH) && (acc == O_WRONLY || acc == O_RDWR);
      // Once it succeeded, the kernel says whether it made the file; a
      // failed one is named by the most it asked for.
      if (r.ret >= 0 && r.created)
        ev.action = Action::FileCreate;
      else if (write && (r.flags & O_TRUNC))
        ev.action = Action::FileTruncate;
      else if (r.ret < 0 && (r.flags & O_CREAT))
        ev.action = Action::FileCreate;
      else if (write)
        ev.action = Action::FileWrite;
      else
        ev.action = Action::FileRead;
      return ev;
    }
    case SYS_unlink:
    case SYS_unlinkat:
    case SYS_rmdir:
      ev.action = Action::FileDelete;
      ev.is_dir = r.syscall_nr == SYS_rmdir || (r.syscall_nr == SYS_unlinkat && (r.flags & AT_REMOVEDIR));
      return ev;
    case SYS_rename:
    case SYS_renameat:
    case SYS_renameat2:
      ev.action = Action::FileRename;
      ev.target = r.path2;
      return ev;
    case SYS_link:
    case SYS_linkat:
      // The new name is the object; the file it names is the target.
      ev.action = Action::FileLink;
      ev.path = r.path2;
      ev.target = r.path;
      return ev;
    case SYS_symlink:
    case SYS_symlinkat:
      ev.action = Action::FileLink;
      ev.target = r.path2;
      return ev;
    case SYS_mkdir:
    case SYS_mkdirat:
      ev.action = Action::FileCreate;
      ev.is_dir = true;
      ev.flags = r.mode;
      return ev;
    case SYS_mknod:
    case SYS_mknodat:
      ev.action = Action::FileCreate;
      ev.flags = r.mode;
      return ev;
    case SYS_truncate:
    case SYS_ftruncate: ev.action = Action::FileTruncate; return ev;
    case SYS_fallocate:
      ev.action =
          (r.flags & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_INSERT_RANGE))
              ? Action::FileTruncate
              : Action::FileWrite;
      return ev;
    case SYS_utime:
    case SYS_utimes:
    case SYS_futimesat:
    case SYS_utimensat:
    case SYS_chmod:
    case SYS_fchmod:
    case SYS_fchmodat:
    case __NR_fchmodat2:
    case SYS_chown:
    case SYS_lchown:
    case SYS_fchown:
    case SYS_fchownat:
    case SYS_setxattr:
    case SYS_lsetxattr:
    case SYS_fsetxattr:
    case __NR_setxattrat:
    case SYS_removexattr:
    case SYS_lremovexattr:
    case SYS_fremovexattr:
    case __NR_removexattrat: ev.action = Action::FileAttr; return ev;
    case SYS_connect:
    case SYS_bind:
      ev.action = r.syscall_nr == SYS_connect ? Action::NetConnect : Action::NetBind;
      ev.path = r.addr;
      return ev;
    case SYS_kill:
    case SYS_tkill:
    case SYS_tgkill:
    case SYS_pidfd_send_signal:
      ev.action = Action::ProcSignal;
      ev.target_pid = r.target_pid ? r.target_pid : r.target_arg;
      ev.flags = static_cast<uint64_t>(r.signal);
      ev.path.clear();
      return ev;
    default: return std::nullopt;
  }
}

bool refused_by_read_only_mount(Action a, int err) {
  switch (a) {
    case Action::FileWrite:
    case Action::FileCreate:
    case Action::FileDelete:
    case Action::FileRename:
    case Action::FileTruncate:
    case Action::FileLink:
    case Action::FileAttr:
      // EXDEV: a rename or link across the read-only mount's boundary;
      // EBUSY: the mount point itself.
      return err == EROFS || err == EXDEV || err == EBUSY;
    default: return false;
  }
}

}  // namespace cb
