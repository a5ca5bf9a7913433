// A socket address as the supervisor reads it from a process (the bytes of
// a sockaddr and the socket's type) turned into the rules' network object
// and the event's path text: one function for connect, bind, sendto,
// sendmsg and sendmmsg alike, so that every family is described the same
// way.  Pure: no sockets are touched.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "policy/event.h"

namespace cb::net {

struct SocketTarget {
  NetObject net;     // proto, address (IPv4-mapped folded into IPv4), port; names left empty
  std::string path;  // "tcp:203.0.113.7:443", "udp:[2001:db8::1]:53", "unix:/run/x.sock",
                     // "unix:@abstract", "unix:" (unnamed), "family:N" for another family
};

// `sock_type` is SO_TYPE of the socket (SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET,
// SOCK_RAW): a datagram socket is "udp", anything else "tcp" for IP families.
// Bytes too short for their family give proto Other and path "family:N".
SocketTarget describe_sockaddr(std::span<const uint8_t> addr, int sock_type);

}  // namespace cb::net
