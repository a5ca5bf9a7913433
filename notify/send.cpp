#include "notify/send.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

#include "notify/listener.h"
#include "procs/creds.h"

namespace cb {
namespace {

// Whether the caller's send waits for room: a blocking socket (as its open
// file says now, as the kernel would read it) and no MSG_DONTWAIT.
bool caller_waits(const Operation& op, const SendMessage& m) {
  if (m.flags & MSG_DONTWAIT) return false;
  int fl = fcntl(op.obj.get(), F_GETFL);
  return fl >= 0 && !(fl & O_NONBLOCK);
}

ssize_t send_once(const Operation& op, const SendMessage& m, int flags, int nr) {
  const uint8_t* data = m.data.data() + m.sent;
  size_t len = m.data.size() - m.sent;
  if (nr == SYS_sendto) {
    // A name given with length 0 is still a name to the kernel (UDP
    // answers EINVAL): any non-null pointer says so.
    static const sockaddr_storage empty{};
    const void* name = m.named ? (m.name.empty() ? static_cast<const void*>(&empty) : m.name.data()) : nullptr;
    return sendto(op.obj.get(), data, len, flags, static_cast<const sockaddr*>(name),
                  static_cast<socklen_t>(m.name.size()));
  }
  iovec iov{const_cast<uint8_t*>(data), len};
  msghdr mh{};
  if (m.named && !m.name.empty()) {
    mh.msg_name = const_cast<uint8_t*>(m.name.data());
    mh.msg_namelen = static_cast<socklen_t>(m.name.size());
  }
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (!m.control.empty()) {
    mh.msg_control = const_cast<uint8_t*>(m.control.data());
    mh.msg_controllen = m.control.size();
  }
  return sendmsg(op.obj.get(), &mh, flags);
}

// The answer once sending stopped on `err` (0: no error).
int64_t answer(const Operation& op, int err) {
  if (op.multi) return op.next_msg > 0 || !err ? static_cast<int64_t>(op.next_msg) : -err;
  const SendMessage& m = op.msgs.front();
  // A stream send cut by an error answers what it sent, as the kernel's.
  return m.sent > 0 || !err ? static_cast<int64_t>(m.sent) : -err;
}

}  // namespace

SendStep send_step(Operation& op, const Call& call) {
  while (op.next_msg < op.msgs.size()) {
    SendMessage& m = op.msgs[op.next_msg];
    bool waits = caller_waits(op, m);
    // Never a SIGPIPE to the supervisor: the caller gets it below.
    int flags = static_cast<int>(m.flags) | MSG_NOSIGNAL | (waits ? MSG_DONTWAIT : 0);
    ssize_t rc = send_once(op, m, flags, call.nr);
    if (rc < 0) {
      int err = errno;
      if (waits && err == EAGAIN) return {0, true};
      if (waits && err == EINPROGRESS && (m.flags & MSG_FASTOPEN)) {
        // A fast open without a cookie sent its SYN alone: once connected,
        // the data goes as on any connected socket.
        m.flags &= ~static_cast<uint64_t>(MSG_FASTOPEN);
        m.named = false;
        m.name.clear();
        return {0, true};
      }
      if (err == EPIPE && !(m.flags & MSG_NOSIGNAL) && m.sent == 0) syscall(SYS_tkill, call.tid, SIGPIPE);
      return {answer(op, err), false};
    }
    m.sent += static_cast<size_t>(rc);
    // Ancillary data went with the first piece.
    m.control.clear();
    m.fds.clear();
    if (op.stream && m.sent < m.data.size() && waits) return {0, true};
    if (m.len_at) {
      auto n = static_cast<uint32_t>(m.sent);
      Privileged priv;  // a caller that made itself undumpable still gets its answer
      if (!TargetMemory::write(call.tid, m.len_at, &n, sizeof n)) return {answer(op, EFAULT), false};
    }
    ++op.next_msg;
    if (m.sent < m.data.size()) break;  // a stream took part of it without waiting: the kernel stops there
  }
  return {answer(op, 0), false};
}

size_t send_progress(const Operation& op) {
  size_t n = op.next_msg;
  for (const SendMessage& m : op.msgs) n += m.sent;
  return n;
}

SendStep send_cut(const Operation& op) { return {answer(op, EAGAIN), false}; }

int send_timeout_ms(const Operation& op) {
  timeval tv{};
  socklen_t sl = sizeof tv;
  if (getsockopt(op.obj.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, &sl) != 0) return -1;
  if (tv.tv_sec == 0 && tv.tv_usec == 0) return -1;
  return static_cast<int>(tv.tv_sec * 1000 + tv.tv_usec / 1000);
}

}  // namespace cb
