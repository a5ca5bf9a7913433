// What the plan asks of the seccomp filter: which families of system calls
// reach the supervisor.  launch/filter.h builds the program from it.
#pragma once

namespace cb {

// Which syscall families reach the supervisor.  Guards (io_uring, namespaces,
// mounts, tracing, kernel facilities, prlimit on others) are always notified:
// they are rare and every attempt belongs in the audit trail.
struct FilterSpec {
  bool write_opens = false;       // open/openat/creat with O_WRONLY|O_RDWR|O_CREAT|O_TRUNC; openat2
  bool create_opens = false;      // open/openat/creat with O_CREAT (creation inside read-only trees)
  bool read_opens = false;        // every open (a rule decides file.read)
  bool deletes = false;           // unlink, unlinkat, rmdir
  bool renames = false;           // rename, renameat, renameat2
  bool hard_links = false;        // link, linkat
  bool symlinks = false;          // symlink, symlinkat
  bool creates = false;           // mkdir, mkdirat, mknod, mknodat
  bool truncates = false;         // truncate
  bool attrs = false;             // chmod/chown/utime/xattr families
  bool execs = false;             // execve, execveat
  bool signals = false;           // kill, tkill, tgkill, rt_(tg)sigqueueinfo, pidfd_send_signal
  bool net = false;               // connect, bind
  bool cred_changes = false;      // setuid family, capset: keeps the supervisor's credential cache exact
  bool io_uring_allowed = false;  // else io_uring_enter/register fail with ENOSYS in the filter

  // Some file action is judged: then openat2, open_by_handle_at and the
  // chattr ioctls are too.
  bool any_file() const {
    return read_opens || write_opens || create_opens || deletes || renames || hard_links || symlinks || creates ||
           truncates || attrs;
  }
};

}  // namespace cb
