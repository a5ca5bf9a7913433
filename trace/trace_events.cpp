#include "trace/trace_events.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/syscall.h>

#include "syscalls/compat.h"
#include "syscalls/table.h"

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
  const Syscall* row = find_syscall(r.syscall_nr);
  if (!row) return std::nullopt;
  switch (row->family) {
    case Family::Open: {
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
    case Family::Unlink:
      ev.action = Action::FileDelete;
      ev.is_dir = r.flags & AT_REMOVEDIR;
      return ev;
    case Family::Rename:
      ev.action = Action::FileRename;
      ev.target = r.path2;
      return ev;
    case Family::Link:
      // The new name is the object; the file it names is the target.
      ev.action = Action::FileLink;
      ev.path = r.path2;
      ev.target = r.path;
      return ev;
    case Family::Symlink:
      ev.action = Action::FileLink;
      ev.target = r.path2;
      return ev;
    case Family::Mkdir:
      ev.action = Action::FileCreate;
      ev.is_dir = true;
      ev.flags = r.mode;
      return ev;
    case Family::Mknod:
      ev.action = Action::FileCreate;
      ev.flags = r.mode;
      return ev;
    case Family::Truncate:
    case Family::FdTruncate: ev.action = Action::FileTruncate; return ev;
    case Family::Fallocate:
      ev.action =
          (r.flags & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE | FALLOC_FL_INSERT_RANGE))
              ? Action::FileTruncate
              : Action::FileWrite;
      return ev;
    case Family::Chmod:
    case Family::Chown:
    case Family::Utime:
    case Family::SetXattr:
    case Family::RemoveXattr:
    case Family::XattrAt: ev.action = Action::FileAttr; return ev;
    case Family::Connect:
    case Family::Bind:
      ev.action = row->family == Family::Connect ? Action::NetConnect : Action::NetBind;
      ev.path = r.addr;
      return ev;
    case Family::Signal:
      ev.action = Action::ProcSignal;
      ev.target_pid = r.target_pid ? r.target_pid : r.target_arg;
      ev.flags = static_cast<uint64_t>(r.signal);
      ev.path.clear();
      return ev;
    // Not traced, or records that only keep the process table right.
    case Family::OpenByHandle:
    case Family::Chattr:
    case Family::Exec:
    case Family::Trace:
    case Family::Prlimit:
    case Family::Send:  // the supervisor carries every one out and writes its row
    case Family::Listen:
    case Family::IoUringSetup:
    case Family::IoUringUse:
    case Family::Mount:
    case Family::Namespace:
    case Family::Clone:
    case Family::Clone3:
    case Family::Kernel:
    case Family::Chdir:
    case Family::Creds:
    case Family::Userfaultfd:
    case Family::Count: return std::nullopt;
  }
  return std::nullopt;
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
