// The handlers of the network families: connect and bind, decided on the
// address as it was read and carried out on the very socket (pidfd_getfd)
// with that address, so no thread can swap it after the check.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "notify/handlers.h"
#include "notify/listener.h"

namespace cb::handlers {
namespace {

std::string sockaddr_text(const std::vector<uint8_t>& a, int type) {
  if (a.size() < sizeof(sa_family_t)) return "?";
  sa_family_t fam;
  memcpy(&fam, a.data(), sizeof fam);
  const char* proto = type == SOCK_DGRAM ? "udp" : "tcp";
  char host[INET6_ADDRSTRLEN] = "?";
  if (fam == AF_INET && a.size() >= sizeof(sockaddr_in)) {
    sockaddr_in s;
    memcpy(&s, a.data(), sizeof s);
    inet_ntop(AF_INET, &s.sin_addr, host, sizeof host);
    return std::string(proto) + ":" + host + ":" + std::to_string(ntohs(s.sin_port));
  }
  if (fam == AF_INET6 && a.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 s;
    memcpy(&s, a.data(), sizeof s);
    inet_ntop(AF_INET6, &s.sin6_addr, host, sizeof host);
    return std::string(proto) + ":[" + host + "]:" + std::to_string(ntohs(s.sin6_port));
  }
  if (fam == AF_UNIX) {
    size_t off = offsetof(sockaddr_un, sun_path);
    if (a.size() <= off) return "unix:";
    const char* p = reinterpret_cast<const char*>(a.data() + off);
    size_t n = a.size() - off;
    if (p[0] == 0) return "unix:@" + std::string(p + 1, strnlen(p + 1, n - 1));
    return "unix:" + std::string(p, strnlen(p, n));
  }
  return "family:" + std::to_string(fam);
}

}  // namespace

Classified classify_socket_address(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  const uint64_t* a = call.args;
  size_t len = a[row.args.addrlen];
  if (len > sizeof(sockaddr_storage)) return fail(EINVAL);
  std::vector<uint8_t> addr(len);
  if (len && !TargetMemory::read(call.tid, a[row.args.addr], addr.data(), len)) return fail(EFAULT);
  int type = SOCK_STREAM;
  if (auto f = target_fd_object(call, as_fd(a[row.args.sock]), true, env)) {
    socklen_t sl = sizeof type;
    getsockopt(f->get(), SOL_SOCKET, SO_TYPE, &type, &sl);
  }
  auto sock = target_fd_object(call, as_fd(a[row.args.sock]), true, env);
  if (!sock) return fail(sock.error().err == EBADF ? EBADF : ENOTSOCK);
  Classified c;
  bool connecting = row.family == Family::Connect;
  c.facets.push_back(facet(connecting ? Action::NetConnect : Action::NetBind, sockaddr_text(addr, type)));
  // Carried out on the very socket, with the address as it was checked.
  c.op.kind = connecting ? OpKind::Connect : OpKind::Bind;
  sa_family_t fam = 0;
  if (addr.size() >= sizeof fam) memcpy(&fam, addr.data(), sizeof fam);
  size_t off = offsetof(sockaddr_un, sun_path);
  if (fam == AF_UNIX && addr.size() > off && addr[off] != 0) {
    // A path names the socket in the target's mount namespace: resolve it
    // there and reach it through the resolved object.
    std::string sp(reinterpret_cast<const char*>(addr.data() + off),
                   strnlen(reinterpret_cast<const char*>(addr.data() + off), addr.size() - off));
    auto r = resolve_path(ctx, AT_FDCWD, sp, connecting ? Follow::Final : Follow::NoFinal);
    if (!r) return fail(r.error().err);
    std::string via;
    if (connecting) {
      if (!r->exists) return fail(ENOENT);
      UniqueFd o = std::move(r->object);
      if (!o) o.reset(openat(r->parent.get(), r->name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!o) return fail(errno);
      via = "/proc/self/fd/" + std::to_string(o.get());
      c.op.dir2 = std::move(o);
    } else {
      if (r->exists) return fail(EADDRINUSE);
      via = "/proc/self/fd/" + std::to_string(r->parent.get()) + "/" + r->name;
      c.op.dir2 = std::move(r->parent);
    }
    if (via.size() >= sizeof(sockaddr_un::sun_path)) return fail(ENAMETOOLONG);
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    memcpy(un.sun_path, via.data(), via.size());
    addr.assign(reinterpret_cast<uint8_t*>(&un), reinterpret_cast<uint8_t*>(&un) + off + via.size() + 1);
  }
  c.op.blob = std::move(addr);
  int fl = fcntl(sock->get(), F_GETFL);
  c.op.blocking = connecting && type == SOCK_STREAM && fl >= 0 && !(fl & O_NONBLOCK);
  c.op.obj = std::move(*sock);
  return c;
}

}  // namespace cb::handlers
