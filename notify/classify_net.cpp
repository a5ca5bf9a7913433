// The handlers of the network families: connect and bind, decided on the
// address as it was read and carried out on the very socket (pidfd_getfd)
// with that address, so no thread can swap it after the check.  What they
// share with the sends (classify_send.cpp): the address's text and the way
// to a unix socket named by a path.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <optional>

#include "base/paths.h"
#include "host/unix_servers.h"
#include "net/sockaddr.h"
#include "notify/handlers.h"
#include "notify/listener.h"

namespace cb::handlers {
namespace {

constexpr size_t kSunPath = offsetof(sockaddr_un, sun_path);

sa_family_t family_of(const std::vector<uint8_t>& a) {
  sa_family_t fam = 0;
  if (a.size() >= sizeof fam) memcpy(&fam, a.data(), sizeof fam);
  return fam;
}

// The path of a unix address that names a file (not abstract, not empty).
std::optional<std::string> unix_path(const std::vector<uint8_t>& a) {
  if (family_of(a) != AF_UNIX || a.size() <= kSunPath || a[kSunPath] == 0) return std::nullopt;
  const char* p = reinterpret_cast<const char*>(a.data() + kSunPath);
  return std::string(p, strnlen(p, a.size() - kSunPath));
}

}  // namespace

std::string sockaddr_text(const std::vector<uint8_t>& a, int type, PathContext* ctx) {
  if (a.size() < sizeof(sa_family_t)) return "?";
  // One spelling per host (net/sockaddr.h): ::ffff:a.b.c.d is a.b.c.d.
  std::string text = net::describe_sockaddr(a, type).path;
  // A unix path relative to the caller's cwd, named from the root as the
  // tracer names it: a rule on the absolute name holds for either spelling.
  if (text.starts_with("unix:") && text.size() > 5 && text[5] != '/' && text[5] != '@' && ctx)
    if (auto cwd = ctx->cwd_path(); cwd && !cwd->empty()) text = "unix:" + join_path(*cwd, text.substr(5));
  return text;
}

int socket_type(int fd) {
  int type = 0;
  socklen_t sl = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) != 0) return 0;
  return type;
}

Result<Ok> reach_unix_path(PathContext& ctx, std::vector<uint8_t>& addr, bool binding, UniqueFd& held) {
  auto sp = unix_path(addr);
  if (!sp) return Ok{};
  // The path names the socket in the target's mount namespace: resolve it
  // there and reach it through the resolved object.
  auto r = resolve_path(ctx, AT_FDCWD, *sp, binding ? Follow::NoFinal : Follow::Final);
  if (!r) return r.error();
  std::string via;
  if (!binding) {
    if (!r->exists) return Error{ENOENT, "no socket"};
    UniqueFd o = std::move(r->object);
    if (!o) o.reset(openat(r->parent.get(), r->name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!o) return Error{errno, "socket file"};
    via = "/proc/self/fd/" + std::to_string(o.get());
    held = std::move(o);
  } else {
    if (r->exists) return Error{EADDRINUSE, "exists"};
    via = "/proc/self/fd/" + std::to_string(r->parent.get()) + "/" + r->name;
    held = std::move(r->parent);
  }
  if (via.size() >= sizeof(sockaddr_un::sun_path)) return Error{ENAMETOOLONG, "path"};
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  memcpy(un.sun_path, via.data(), via.size());
  addr.assign(reinterpret_cast<uint8_t*>(&un), reinterpret_cast<uint8_t*>(&un) + kSunPath + via.size() + 1);
  return Ok{};
}

Classified classify_socket_address(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  const uint64_t* a = call.args;
  size_t len = a[row.args.addrlen];
  if (len > sizeof(sockaddr_storage)) return fail(EINVAL);
  std::vector<uint8_t> addr(len);
  if (len && !TargetMemory::read(call.tid, a[row.args.addr], addr.data(), len)) return fail(EFAULT);
  auto sock = target_fd_object(call, as_fd(a[row.args.sock]), true, env);
  if (!sock) return fail(sock.error().err == EBADF ? EBADF : ENOTSOCK);
  int type = socket_type(sock->get());
  if (!type) type = SOCK_STREAM;
  Classified c;
  bool connecting = row.family == Family::Connect;
  std::string text = sockaddr_text(addr, type, &ctx);
  c.facets.push_back(facet(connecting ? Action::NetConnect : Action::NetBind, text));
  // A datagram socket connected to an address sends there from then on
  // (send(), write(), bash's /dev/udp/HOST/PORT), with no address in the
  // call: the connect is where that send is judged.  AF_UNSPEC only
  // dissolves the association.
  if (connecting && type == SOCK_DGRAM && family_of(addr) != AF_UNSPEC)
    c.facets.push_back(facet(Action::NetSend, text));
  // Carried out on the very socket, with the address as it was checked.
  c.op.kind = connecting ? OpKind::Connect : OpKind::Bind;
  bool abstract = family_of(addr) == AF_UNIX && addr.size() > kSunPath + 1 && addr[kSunPath] == 0;
  std::string abstract_name;
  if (abstract)
    abstract_name.assign(reinterpret_cast<const char*>(addr.data() + kSunPath + 1), addr.size() - kSunPath - 1);
  if (auto r = reach_unix_path(ctx, addr, !connecting, c.op.dir2); !r) return fail(r.error().err);
  // Who serves the socket, found from the socket the file leads to (held
  // in dir2, which the connect then goes through), so that a deputy is
  // known whatever its socket is called.  Only servers accept connections.
  if (connecting && env.unix_servers && (type == SOCK_STREAM || type == SOCK_SEQPACKET)) {
    std::vector<std::string> servers = c.op.dir2  ? env.unix_servers->outside_servers(c.op.dir2.get())
                                       : abstract ? env.unix_servers->outside_servers(abstract_name)
                                                  : std::vector<std::string>{};
    for (const auto& s : servers) c.facets[0].target += (c.facets[0].target.empty() ? "" : " ") + s;
    c.facets[0].servers = std::move(servers);
  }
  c.op.blob = std::move(addr);
  int fl = fcntl(sock->get(), F_GETFL);
  c.op.blocking = connecting && type == SOCK_STREAM && fl >= 0 && !(fl & O_NONBLOCK);
  c.op.obj = std::move(*sock);
  return c;
}

// listen(2) names no address: it is judged on the one the socket is bound
// to (port 0 before an implicit bind: the kernel picks one), and carried
// out on the very socket judged, so no dup2 can put another in its place.
Classified classify_listen(const Call& call, const Syscall& row, PathContext&, const ClassifyEnv& env) {
  auto sock = target_fd_object(call, as_fd(call.args[row.args.sock]), true, env);
  if (!sock) return fail(sock.error().err == EBADF ? EBADF : ENOTSOCK);
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(sock->get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return fail(errno == EBADF ? EBADF : ENOTSOCK);
  std::vector<uint8_t> addr(reinterpret_cast<uint8_t*>(&ss), reinterpret_cast<uint8_t*>(&ss) + len);
  Classified c;
  c.facets.push_back(facet(Action::NetListen, sockaddr_text(addr, socket_type(sock->get()), nullptr)));
  c.op.kind = OpKind::Listen;
  c.op.value = static_cast<int64_t>(static_cast<int>(call.args[row.args.size]));
  c.op.obj = std::move(*sock);
  return c;
}

}  // namespace cb::handlers
