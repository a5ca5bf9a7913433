// An IP address and port, and the files that name resolvers and hosts:
// /etc/resolv.conf and /etc/hosts.  Parsing is pure; reading a file is one
// call beside it.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/netaddr.h"

namespace cb::net {

struct Endpoint {
  IpAddr addr;
  uint16_t port = 53;

  // "127.0.0.1", "127.0.0.1:5353", "::1", "[::1]:5353"; a port of 0 is
  // taken (bind picks one).
  static std::optional<Endpoint> parse(std::string_view text, uint16_t default_port = 53);
  static Endpoint from_sockaddr(const sockaddr_storage& ss);
  // A sockaddr_in or sockaddr_in6 (an IPv4 address in an AF_INET one).
  socklen_t to_sockaddr(sockaddr_storage& ss) const;
  std::string text() const;  // "127.0.0.1:53", "[::1]:53"
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// The nameserver lines of a resolv.conf, in order (scoped IPv6 addresses
// are skipped: they cannot be reached from elsewhere).
std::vector<Endpoint> parse_resolv_conf_servers(std::string_view text);

// The resolv.conf a session sees: `server` as its only nameserver, and the
// host's search, domain and options lines kept (less the options that
// would send a process to another server or round the resolver).
std::string session_resolv_conf(const Endpoint& server, std::string_view host_text);

struct HostsEntry {
  IpAddr addr;
  std::vector<std::string> names;  // normalized (normalize_host_name)
};
// /etc/hosts as glibc reads it: '#' starts a comment, an address and its
// names on a line; lines whose address does not parse are skipped.
std::vector<HostsEntry> parse_hosts(std::string_view text);

// The whole file, or an error naming it.
Result<std::string> read_text_file(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace cb::net
