#include "trace/tracer_service.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstdlib>
#include <cstring>

#include "trace/core_btf.h"

namespace cb {

std::string tracer_socket_path() {
  // Tests run a service of their own, so as not to end the host's.
  if (const char* t = getenv("COTTONBOX_TRACER_SOCKET"); t && *t) return t;
  return core_btf_dir() + "/tracer.sock";
}
std::string tracer_lock_path(const std::string& socket) { return socket + ".lock"; }

namespace {

// The service answers at once or not at all: a stuck service must not hold
// a session's start.
constexpr int kReplyTimeoutMs = 5000;

Result<TracerdReply> await_reply(int sock, int* fds, int nfds_max, int* nfds) {
  pollfd pf{sock, POLLIN, 0};
  int r = poll(&pf, 1, kReplyTimeoutMs);
  if (r == 0) return Error{ETIMEDOUT, "the tracer service did not answer"};
  if (r < 0) return Error::from_errno("waiting for the tracer service");
  TracerdReply rep;
  iovec iov{&rep, sizeof rep};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  if (n < 0) return Error::from_errno("reading the tracer service's answer");
  if (n == 0) return Error{ECONNRESET, "the tracer service closed the connection"};
  if (static_cast<size_t>(n) != sizeof rep || rep.magic != kTracerdMagic)
    return Error{EPROTO, "the tracer service's answer is garbled"};
  *nfds = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int k = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < k; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (*nfds < nfds_max)
        fds[(*nfds)++] = fd;
      else
        close(fd);
    }
  }
  rep.message[sizeof rep.message - 1] = '\0';
  return rep;
}

}  // namespace

Result<UniqueFd> connect_tracer_service(const std::string& path) {
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s) return Error::from_errno("socket");
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) return Error{ENAMETOOLONG, "tracer socket path too long: " + path};
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  if (connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    return Error::from_errno("no tracer service at " + path);
  return s;
}

Result<TracerRegistration> register_with_tracer(int sock, int pidfd) {
  TracerdRequest req;
  req.op = TracerdOp::Register;
  iovec iov{&req, sizeof req};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = ctl;
  mh.msg_controllen = sizeof ctl;
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pidfd, sizeof pidfd);
  if (sendmsg(sock, &mh, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof req))
    return Error::from_errno("cannot reach the tracer service");
  int fds[2] = {-1, -1};
  int nfds = 0;
  auto rep = await_reply(sock, fds, 2, &nfds);
  UniqueFd ring(nfds > 0 ? fds[0] : -1), lost(nfds > 1 ? fds[1] : -1);
  if (!rep) return rep.error();
  if (rep->err != 0) return Error{rep->err, std::string("the tracer service refused: ") + rep->message};
  if (!ring || !lost) return Error{EPROTO, "the tracer service sent no ring buffer"};
  TracerRegistration out;
  out.ring = std::move(ring);
  out.lost = std::move(lost);
  out.ring_bytes = rep->ring_bytes;
  out.slot = rep->slot;
  out.pidns_level = rep->pidns_level;
  return out;
}

Result<TracerdReply> tracer_status(const std::string& path) {
  auto s = connect_tracer_service(path);
  if (!s) return s.error();
  TracerdRequest req;
  req.op = TracerdOp::Status;
  if (send(s->get(), &req, sizeof req, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof req))
    return Error::from_errno("cannot reach the tracer service");
  int fds[1];
  int nfds = 0;
  auto rep = await_reply(s->get(), fds, 0, &nfds);
  return rep;
}

}  // namespace cb
