// The handler of the send family: sendto with an address, sendmsg and
// sendmmsg.  Every destination a call names is a facet: net.send, or
// net.connect for a MSG_FASTOPEN send on a stream socket (which connects).
// A message without a name goes to the socket's peer, judged at connect.
//
// Whatever is judged, the supervisor carries the call out (notify/send.h):
// each message's name, payload and ancillary data are read here, once, and
// sent as they were read on the very socket (pidfd_getfd).  No thread can
// rewrite a name or a payload after the check, nor dup2 another socket
// onto the number.  Descriptors passed with SCM_RIGHTS are taken from the
// caller the same way.
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>

#include "notify/fixed_args.h"
#include "notify/handlers.h"
#include "notify/listener.h"
#include "procs/creds.h"

namespace cb::handlers {
namespace {

// What one call may carry.  Past it a datagram is refused (EMSGSIZE, which
// no datagram this large escapes anyway); a stream send is cut short, a
// short write its caller loops on, as it does when a signal cuts one.
constexpr size_t kMaxPayload = size_t{16} << 20;
// Ancillary data past this is refused, as the kernel refuses more than
// optmem_max (ENOBUFS).
constexpr size_t kMaxControl = size_t{256} << 10;
constexpr size_t kMaxIov = UIO_MAXIOV;  // iovecs of one message, messages of one sendmmsg
constexpr size_t kMaxFds = 253;         // SCM_MAX_FD

struct Sender {
  const Call& call;
  PathContext& ctx;
  const ClassifyEnv& env;
  int type = 0, domain = 0;
  bool stream = false;
  size_t budget = kMaxPayload;
};

// One message as read, and what it is judged as.
struct Read {
  SendMessage m;
  std::string text;  // empty: no destination to judge
  Action action = Action::NetSend;
};

// A descriptor of the caller, the very open file.
Result<UniqueFd> take_fd(const Sender& s, int fd) {
  Privileged priv;
  UniqueFd own;
  int pidfd = s.env.target_pidfd;
  if (pidfd < 0) {
    own.reset(static_cast<int>(syscall(SYS_pidfd_open, s.call.tid, 0)));
    if (!own) return Error{EPERM, "no pidfd for the caller"};
    pidfd = own.get();
  }
  UniqueFd f(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0)));
  if (!f) return Error{errno == EBADF ? EBADF : EPERM, "taking the caller's descriptor"};
  return f;
}

// The payload behind `iov`, within what is left of the call's budget.
Result<std::vector<uint8_t>> read_payload(Sender& s, std::vector<iovec> iov) {
  size_t total = 0;
  for (const iovec& v : iov) {
    if (v.iov_len > SSIZE_MAX) return Error{EINVAL, "iovec length"};
    total += std::min(v.iov_len, kMaxPayload + 1);
    total = std::min(total, kMaxPayload + 1);
  }
  if (total > s.budget) {
    if (!s.stream || s.budget == 0) return Error{EMSGSIZE, "payload over the supervisor's bound"};
    size_t left = s.budget;
    for (iovec& v : iov) {
      v.iov_len = std::min(v.iov_len, left);
      left -= v.iov_len;
    }
    total = s.budget;
  }
  std::vector<uint8_t> data(total);
  if (total && !TargetMemory::read_gather(s.call.tid, iov.data(), iov.size(), data.data()))
    return Error{EFAULT, "payload"};
  s.budget -= total;
  return data;
}

// Checks ancillary data as the kernel will walk it, and takes the
// descriptors SCM_RIGHTS passes: the numbers are the caller's, rewritten
// to the supervisor's copies of the same open files.
Result<Ok> prepare_control(Sender& s, SendMessage& m) {
  uint8_t* base = m.control.data();
  size_t len = m.control.size();
  size_t passed = 0;
  for (size_t off = 0; off + sizeof(cmsghdr) <= len;) {
    cmsghdr h;
    memcpy(&h, base + off, sizeof h);
    if (h.cmsg_len < sizeof(cmsghdr) || h.cmsg_len > len - off) return Error{EINVAL, "ancillary data"};
    uint8_t* data = base + off + CMSG_LEN(0);
    size_t dlen = h.cmsg_len - CMSG_LEN(0);
    bool scm = h.cmsg_level == SOL_SOCKET && (s.domain == AF_UNIX || s.domain == AF_NETLINK);
    // Credentials are checked against the sender, which is the supervisor
    // here (maybe root): the caller could claim any.
    if (scm && h.cmsg_type == SCM_CREDENTIALS) return Error{EPERM, "SCM_CREDENTIALS"};
    if (scm && h.cmsg_type == SCM_RIGHTS && s.domain == AF_UNIX) {
      size_t n = dlen / sizeof(int);
      if (passed + n > kMaxFds) return Error{EINVAL, "too many descriptors"};
      for (size_t i = 0; i < n; ++i) {
        int fd;
        memcpy(&fd, data + i * sizeof(int), sizeof fd);
        auto f = take_fd(s, fd);
        if (!f) return f.error();
        int mine = f->get();
        memcpy(data + i * sizeof(int), &mine, sizeof mine);
        m.fds.push_back(std::move(*f));
      }
      passed += n;
    }
    // A source route (IPv4 options, an IPv6 routing header) sends the
    // packet to its first hop, not to the address that was judged.
    bool inet = s.domain == AF_INET || s.domain == AF_INET6;
    if (inet && h.cmsg_level == IPPROTO_IP && h.cmsg_type == IP_RETOPTS) return Error{EPERM, "IP options"};
    if (inet && h.cmsg_level == IPPROTO_IPV6 && (h.cmsg_type == IPV6_RTHDR || h.cmsg_type == IPV6_2292RTHDR))
      return Error{EPERM, "routing header"};
    off += CMSG_ALIGN(h.cmsg_len);
  }
  return Ok{};
}

// Whether a name is where the message goes, and so what is judged.  An
// IP stream socket ignores a name but with MSG_FASTOPEN (SCTP's may not):
// judged all the same, which can only refuse more.
bool names_destination(const Sender& s) {
  if (s.domain == AF_NETLINK) return false;              // the kernel or a socket of this host: no network
  if (s.domain == AF_UNIX) return s.type == SOCK_DGRAM;  // streams refuse a name, seqpacket ignores it
  return true;
}

// The name as read: what it is judged as, and the way to a unix path.
Result<Ok> aim(Sender& s, Read& r) {
  if (!r.m.named || r.m.name.empty() || !names_destination(s)) return Ok{};
  r.text = sockaddr_text(r.m.name, s.type, &s.ctx);
  r.action = s.stream && (r.m.flags & MSG_FASTOPEN) ? Action::NetConnect : Action::NetSend;
  if (s.domain == AF_UNIX) return reach_unix_path(s.ctx, r.m.name, false, r.m.via);
  return Ok{};
}

// One message of sendmsg or sendmmsg, read in the kernel's order.
Result<Read> read_message(Sender& s, const msghdr& mh, uint64_t flags) {
  Read r;
  r.m.flags = flags | (static_cast<unsigned>(mh.msg_flags) & MSG_EOR);
  // The kernel reads msg_namelen as an int, and cuts it to a
  // sockaddr_storage; a null name or a zero length is no name.
  auto namelen = static_cast<int>(mh.msg_namelen);
  if (mh.msg_name && namelen) {
    if (namelen < 0) return Error{EINVAL, "name length"};
    r.m.name.resize(std::min<size_t>(static_cast<size_t>(namelen), sizeof(sockaddr_storage)));
    if (!TargetMemory::read(s.call.tid, reinterpret_cast<uint64_t>(mh.msg_name), r.m.name.data(), r.m.name.size()))
      return Error{EFAULT, "name"};
    r.m.named = true;
  }
  if (mh.msg_iovlen > kMaxIov) return Error{EMSGSIZE, "iovecs"};
  std::vector<iovec> iov(mh.msg_iovlen);
  if (!iov.empty() &&
      !TargetMemory::read(s.call.tid, reinterpret_cast<uint64_t>(mh.msg_iov), iov.data(), iov.size() * sizeof(iovec)))
    return Error{EFAULT, "iovecs"};
  auto data = read_payload(s, std::move(iov));
  if (!data) return data.error();
  r.m.data = std::move(*data);
  if (mh.msg_controllen > INT_MAX || mh.msg_controllen > kMaxControl) return Error{ENOBUFS, "ancillary data"};
  if (mh.msg_controllen) {
    r.m.control.resize(mh.msg_controllen);
    if (!TargetMemory::read(s.call.tid, reinterpret_cast<uint64_t>(mh.msg_control), r.m.control.data(),
                            r.m.control.size()))
      return Error{EFAULT, "ancillary data"};
    if (auto ok = prepare_control(s, r.m); !ok) return ok.error();
  }
  if (auto ok = aim(s, r); !ok) return ok.error();
  return r;
}

Result<Read> read_sendto(Sender& s, const SyscallArgs& roles, uint64_t flags) {
  const uint64_t* a = s.call.args;
  Read r;
  r.m.flags = flags;
  auto addrlen = static_cast<int>(a[roles.addrlen]);
  if (addrlen < 0 || static_cast<size_t>(addrlen) > sizeof(sockaddr_storage)) return Error{EINVAL, "name length"};
  r.m.named = a[roles.addr] != 0;
  r.m.name.resize(static_cast<size_t>(addrlen));
  if (addrlen && !TargetMemory::read(s.call.tid, a[roles.addr], r.m.name.data(), r.m.name.size()))
    return Error{EFAULT, "name"};
  auto data = read_payload(s, {iovec{reinterpret_cast<void*>(a[roles.data]), static_cast<size_t>(a[roles.size])}});
  if (!data) return data.error();
  r.m.data = std::move(*data);
  if (auto ok = aim(s, r); !ok) return ok.error();
  return r;
}

// sendmmsg's messages, up to the first that cannot be read: the kernel
// sends those before it and answers their count.
Result<std::vector<Read>> read_messages(Sender& s, const SyscallArgs& roles, uint64_t flags) {
  uint64_t at = s.call.args[roles.data];
  size_t vlen = std::min<size_t>(static_cast<uint32_t>(s.call.args[roles.size]), kMaxIov);
  std::vector<mmsghdr> hdrs(vlen);
  size_t readable = vlen;
  if (vlen && !TargetMemory::read(s.call.tid, at, hdrs.data(), vlen * sizeof(mmsghdr))) {
    readable = 0;
    while (readable < vlen &&
           TargetMemory::read(s.call.tid, at + readable * sizeof(mmsghdr), &hdrs[readable], sizeof(mmsghdr)))
      ++readable;
    if (!readable) return Error{EFAULT, "messages"};
  }
  std::vector<Read> out;
  for (size_t i = 0; i < readable; ++i) {
    auto r = read_message(s, hdrs[i].msg_hdr, flags);
    if (!r) {
      if (out.empty()) return r.error();
      break;
    }
    r->m.len_at = at + i * sizeof(mmsghdr) + offsetof(mmsghdr, msg_len);
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace

Classified classify_send(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  Sender s{call, ctx, env};
  auto sock = take_fd(s, as_fd(call.args[row.args.sock]));
  if (!sock) return fail(sock.error().err);
  s.type = socket_type(sock->get());
  if (!s.type) return fail(ENOTSOCK);
  socklen_t sl = sizeof s.domain;
  getsockopt(sock->get(), SOL_SOCKET, SO_DOMAIN, &s.domain, &sl);
  s.stream = s.type == SOCK_STREAM;
  uint64_t flags = call.args[row.args.flags];
  // Netlink goes to the kernel (or another socket of this host), whose
  // checks are the caller's capabilities in its own user namespace, which
  // the supervisor does not have (bwrap and `ip` set up a new network
  // namespace so).  Nothing is judged; the kernel may run it when the
  // number cannot come to name another socket before it does.
  if (s.domain == AF_NETLINK && descriptors_fixed(call.tid, env.session_pids)) return cont();

  std::vector<Read> reads;
  if (call.nr == SYS_sendmmsg) {
    if (static_cast<uint32_t>(call.args[row.args.size]) == 0) {
      Classified c;
      c.op.kind = OpKind::Reply;
      return c;
    }
    auto rs = read_messages(s, row.args, flags);
    if (!rs) return fail(rs.error().err);
    reads = std::move(*rs);
  } else {
    msghdr mh{};
    if (call.nr == SYS_sendmsg && !TargetMemory::read(call.tid, call.args[row.args.data], &mh, sizeof mh))
      return fail(EFAULT);
    auto r = call.nr == SYS_sendmsg ? read_message(s, mh, flags) : read_sendto(s, row.args, flags);
    if (!r) return fail(r.error().err);
    reads.push_back(std::move(*r));
  }

  Classified c;
  c.flags = flags;
  for (Read& r : reads) {
    bool seen = r.text.empty() || std::any_of(c.facets.begin(), c.facets.end(),
                                              [&](const Facet& f) { return f.action == r.action && f.path == r.text; });
    if (!seen) c.facets.push_back(facet(r.action, r.text));
    c.op.msgs.push_back(std::move(r.m));
  }
  c.op.kind = OpKind::Send;
  c.op.obj = std::move(*sock);
  c.op.flags = flags;
  c.op.multi = call.nr == SYS_sendmmsg;
  c.op.stream = s.stream;
  return c;
}

}  // namespace cb::handlers
