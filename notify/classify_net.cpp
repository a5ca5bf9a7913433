// The handlers of the network families: connect and bind, decided on the
// address as it was read and carried out on the very socket (pidfd_getfd)
// with that address, so no thread can swap it after the check.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "net/sockaddr.h"
#include "notify/handlers.h"
#include "notify/listener.h"

namespace cb::handlers {
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
  net::SocketTarget t = net::describe_sockaddr(addr, type);
  c.facets.push_back(facet(connecting ? Action::NetConnect : Action::NetBind, t.path));
  c.facets.back().net = std::move(t.net);
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
