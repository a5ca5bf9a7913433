// Carrying out allowed operations for the target, on the objects the
// decision was made about, with the target's credentials.
//
// The supervisor thread that runs this has its own fs_struct (unshare
// CLONE_FS at start), so umask() here is the target's umask for the length
// of one operation; fsuid/fsgid/groups are per-thread by the kernel (raw
// syscalls: glibc would broadcast setgroups to every thread).
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "notify/listener.h"
#include "notify/ops.h"
#include "notify/send.h"
#include "procs/creds.h"

namespace cb {
namespace {

class UmaskScope {
 public:
  UmaskScope(bool on, mode_t m) : on_(on) {
    if (on_) old_ = umask(m);
  }
  ~UmaskScope() {
    if (on_) umask(old_);
  }

 private:
  bool on_;
  mode_t old_ = 0;
};

int64_t result(long rc) { return rc < 0 ? -errno : rc; }

std::string self_fd(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace

Outcome execute(Operation& op, const Call& call, const Creds& creds, Listener& l) {
  Outcome out;
  CredScope cs(creds);  // the whole operation, including the answer, as the target
  UmaskScope us(op.needs_umask && creds.valid, creds.umask);
  const char* name = op.name.c_str();
  const char* name2 = op.name2.c_str();
  switch (op.kind) {
    case OpKind::Fail: out.ret = -op.err; break;
    case OpKind::Reply: out.ret = op.value; break;
    case OpKind::Continue:
      out.responded = l.respond_continue(call.id);
      out.ret = 0;
      return out;
    case OpKind::Open: {
      int flags = static_cast<int>(op.flags) | O_CLOEXEC;
      int fd;
      if (op.obj) {
        // Reached through a magic link: open the object itself again.
        fd = open(self_fd(op.obj.get()).c_str(), flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW));
      } else {
        // O_NOFOLLOW: the name was checked as a non-symlink (or its target
        // was resolved): a symlink planted since must not be followed.
        int extra = (op.flags & __O_TMPFILE) == __O_TMPFILE ? 0 : O_NOFOLLOW;
        fd = openat(op.dir.get(), name, flags | extra, static_cast<mode_t>(op.mode));
      }
      if (fd < 0) {
        out.ret = -errno;
        break;
      }
      int r = l.respond_addfd(call.id, fd, op.cloexec);
      close(fd);
      out.ret = r;
      out.responded = true;
      return out;
    }
    case OpKind::Unlink: out.ret = result(unlinkat(op.dir.get(), name, static_cast<int>(op.flags))); break;
    case OpKind::Rename:
      out.ret = result(static_cast<long>(
          syscall(SYS_renameat2, op.dir.get(), name, op.dir2.get(), name2, static_cast<unsigned>(op.flags))));
      break;
    case OpKind::Link:
      if (op.obj && op.name.empty())
        out.ret = result(linkat(op.obj.get(), "", op.dir2.get(), name2, AT_EMPTY_PATH));
      else if (op.obj)
        out.ret = result(linkat(AT_FDCWD, self_fd(op.obj.get()).c_str(), op.dir2.get(), name2, AT_SYMLINK_FOLLOW));
      else
        out.ret = result(linkat(op.dir.get(), name, op.dir2.get(), name2, 0));
      break;
    case OpKind::Symlink: out.ret = result(symlinkat(op.str.c_str(), op.dir2.get(), name2)); break;
    case OpKind::Mkdir: out.ret = result(mkdirat(op.dir.get(), name, static_cast<mode_t>(op.mode))); break;
    case OpKind::Mknod:
      out.ret = result(mknodat(op.dir.get(), name, static_cast<mode_t>(op.mode), static_cast<dev_t>(op.dev)));
      break;
    case OpKind::Truncate: out.ret = result(truncate(self_fd(op.obj.get()).c_str(), op.len)); break;
    case OpKind::Chmod:
      out.ret = result(fchmodat(AT_FDCWD, self_fd(op.obj.get()).c_str(), static_cast<mode_t>(op.mode), 0));
      break;
    case OpKind::Chown: out.ret = result(fchownat(op.obj.get(), "", op.uid, op.gid, AT_EMPTY_PATH)); break;
    case OpKind::Utimens: {
      timespec ts[2];
      memcpy(ts, op.blob.data(), sizeof ts);
      out.ret = result(utimensat(AT_FDCWD, self_fd(op.obj.get()).c_str(), ts, 0));
      break;
    }
    case OpKind::SetXattr:
      out.ret = result(setxattr(self_fd(op.obj.get()).c_str(), op.str.c_str(), op.blob.data(), op.blob.size(),
                                static_cast<int>(op.flags)));
      break;
    case OpKind::RemoveXattr: out.ret = result(removexattr(self_fd(op.obj.get()).c_str(), op.str.c_str())); break;
    case OpKind::FdTruncate: out.ret = result(ftruncate(op.obj.get(), op.len)); break;
    case OpKind::FdFallocate:
      out.ret = result(fallocate(op.obj.get(), static_cast<int>(op.flags), op.value, op.len));
      break;
    case OpKind::Connect: {
      // A blocking socket is tried without waiting first: a unix socket's
      // connect completes at once, and a thread is taken only for one that
      // must wait (a TCP handshake, a full backlog), as the kernel would.
      int fl = op.blocking ? fcntl(op.obj.get(), F_GETFL) : -1;
      if (fl >= 0) fcntl(op.obj.get(), F_SETFL, fl | O_NONBLOCK);
      long rc = connect(op.obj.get(), reinterpret_cast<const sockaddr*>(op.blob.data()),
                        static_cast<socklen_t>(op.blob.size()));
      int err = rc < 0 ? errno : 0;
      if (err == EINPROGRESS && fl >= 0) {
        // On loopback the handshake is over by the time connect() returns.
        // (A non-blocking caller gets the kernel's own answer.)
        pollfd p{op.obj.get(), POLLOUT, 0};
        socklen_t sl = sizeof err;
        if (poll(&p, 1, 0) == 1) getsockopt(op.obj.get(), SOL_SOCKET, SO_ERROR, &err, &sl);
      }
      if (fl >= 0) {
        fcntl(op.obj.get(), F_SETFL, fl);
        if (err == EINPROGRESS || err == EAGAIN) {
          out.would_block = true;  // not answered: a worker waits for the rest
          return out;
        }
      }
      out.ret = err ? -err : 0;
      break;
    }
    case OpKind::Listen: out.ret = result(listen(op.obj.get(), static_cast<int>(op.value))); break;
    case OpKind::Bind:
      out.ret = result(bind(op.obj.get(), reinterpret_cast<const sockaddr*>(op.blob.data()),
                            static_cast<socklen_t>(op.blob.size())));
      break;
    case OpKind::Send: {
      SendStep st = send_step(op, call);
      if (st.would_block) {
        out.would_block = true;  // not answered: a worker waits for room
        return out;
      }
      out.ret = st.ret;
      break;
    }
    case OpKind::IoctlFlags:
      out.ret = result(ioctl(op.obj.get(), static_cast<unsigned long>(op.flags), op.blob.data()));
      break;
  }
  if (out.ret < 0)
    out.responded = l.respond_error(call.id, static_cast<int>(-out.ret));
  else
    out.responded = l.respond_value(call.id, out.ret);
  return out;
}

Outcome execute_blocking(Operation& op, const Call& call, const Creds& creds, Listener& l,
                         const std::function<bool()>& still_wanted) {
  Outcome out;
  CredScope cs(creds);
  if (op.kind == OpKind::Open) {
    // O_WRONLY on a FIFO blocks until a reader opens it; O_NONBLOCK instead
    // fails with ENXIO, so retry until a reader comes.
    int flags = static_cast<int>(op.flags) | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW;
    int fd = -1;
    for (;;) {
      fd = op.obj ? open(self_fd(op.obj.get()).c_str(), flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW))
                  : openat(op.dir.get(), op.name.c_str(), flags, static_cast<mode_t>(op.mode));
      if (fd >= 0 || errno != ENXIO || !still_wanted()) break;
      usleep(10000);
    }
    if (fd < 0) {
      out.ret = -errno;
      out.responded = l.respond_error(call.id, errno);
      return out;
    }
    if (!(op.flags & O_NONBLOCK)) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    out.ret = l.respond_addfd(call.id, fd, op.cloexec);
    out.responded = true;
    close(fd);
    return out;
  }
  if (op.kind == OpKind::Connect) {
    // Non-blocking for the length of the attempt (the target's thread is
    // parked in connect() and cannot use the socket meanwhile).
    int fl = fcntl(op.obj.get(), F_GETFL);
    fcntl(op.obj.get(), F_SETFL, fl | O_NONBLOCK);
    long rc = connect(op.obj.get(), reinterpret_cast<const sockaddr*>(op.blob.data()),
                      static_cast<socklen_t>(op.blob.size()));
    int err = rc < 0 ? errno : 0;
    while (err == EINPROGRESS || err == EALREADY || err == EAGAIN) {
      if (err == EAGAIN) {
        // A unix listener's backlog is full: the kernel would sleep until
        // it has room, which no poll() tells.
        if (!still_wanted()) {
          err = EINTR;
          break;
        }
        usleep(5000);
        rc = connect(op.obj.get(), reinterpret_cast<const sockaddr*>(op.blob.data()),
                     static_cast<socklen_t>(op.blob.size()));
        err = rc < 0 ? errno : 0;
        continue;
      }
      pollfd p{op.obj.get(), POLLOUT, 0};
      int n = poll(&p, 1, 20);
      if (n > 0) {
        socklen_t sl = sizeof err;
        getsockopt(op.obj.get(), SOL_SOCKET, SO_ERROR, &err, &sl);
        break;
      }
      if (!still_wanted()) {
        err = EINTR;
        break;
      }
    }
    fcntl(op.obj.get(), F_SETFL, fl);
    out.ret = err ? -err : 0;
    out.responded = err ? l.respond_error(call.id, err) : l.respond_value(call.id, 0);
    return out;
  }
  if (op.kind == OpKind::Send) {
    // Tried once already (execute): wait for room, then send the rest, as
    // long as the socket's send timeout (SO_SNDTIMEO) lets the caller wait.
    int timeout = send_timeout_ms(op);
    auto start = std::chrono::steady_clock::now();
    for (;;) {
      pollfd p{op.obj.get(), POLLOUT, 0};
      int ready = poll(&p, 1, 20);
      size_t before = send_progress(op);
      SendStep st = send_step(op, call);
      if (!st.would_block) {
        out.ret = st.ret;
        break;
      }
      if (!still_wanted()) {
        out.ret = -EINTR;
        break;
      }
      auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      if (timeout >= 0 && waited.count() >= timeout) {
        // What a blocking send answers when its timeout runs out: what it
        // sent, or EAGAIN.
        out.ret = send_cut(op).ret;
        break;
      }
      // Writable by poll yet refused (a unix datagram's receiver is full):
      // the kernel would sleep on the receiver; sleep a little here.
      if (ready > 0 && send_progress(op) == before) usleep(5000);
    }
    out.responded =
        out.ret < 0 ? l.respond_error(call.id, static_cast<int>(-out.ret)) : l.respond_value(call.id, out.ret);
    return out;
  }
  return execute(op, call, creds, l);
}

}  // namespace cb
