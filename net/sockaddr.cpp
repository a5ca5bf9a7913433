#include "net/sockaddr.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>

namespace cb::net {

SocketTarget describe_sockaddr(std::span<const uint8_t> a, int sock_type) {
  SocketTarget t;
  sa_family_t fam = AF_UNSPEC;
  if (a.size() >= sizeof fam) memcpy(&fam, a.data(), sizeof fam);
  NetProto proto = sock_type == SOCK_DGRAM ? NetProto::Udp : NetProto::Tcp;
  if (fam == AF_INET && a.size() >= sizeof(sockaddr_in)) {
    sockaddr_in s;
    memcpy(&s, a.data(), sizeof s);
    t.net = make_net_object(proto, IpAddr::v4(reinterpret_cast<const uint8_t*>(&s.sin_addr)), ntohs(s.sin_port));
  } else if (fam == AF_INET6 && a.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 s;
    memcpy(&s, a.data(), sizeof s);
    t.net = make_net_object(proto, IpAddr::v6(s.sin6_addr.s6_addr), ntohs(s.sin6_port));
  } else if (fam == AF_UNIX) {
    t.net.proto = NetProto::Unix;
    size_t off = offsetof(sockaddr_un, sun_path);
    if (a.size() <= off) {
      t.path = "unix:";
      return t;
    }
    const char* p = reinterpret_cast<const char*>(a.data() + off);
    size_t n = a.size() - off;
    if (p[0] == 0)
      t.path = "unix:@" + std::string(p + 1, strnlen(p + 1, n - 1));
    else
      t.path = "unix:" + std::string(p, strnlen(p, n));
    return t;
  } else {
    t.net.proto = NetProto::Other;
    t.path = "family:" + std::to_string(fam);
    return t;
  }
  // The host the kernel reaches, not the spelling the process chose: an
  // IPv4-mapped IPv6 address is written as the IPv4 address, so that a
  // path rule on "tcp:169.254.169.254:*" cannot be passed by
  // "::ffff:169.254.169.254".
  std::string host = t.net.addr.family == 6 ? "[" + t.net.addr_text + "]" : t.net.addr_text;
  t.path = std::string(net_proto_name(proto)) + ":" + host + ":" + std::to_string(t.net.port);
  return t;
}

}  // namespace cb::net
