// Network objects as the rules engine sees them: IP addresses (IPv4-mapped
// IPv6 addresses folded into IPv4, so that one host has one spelling), CIDR
// blocks, port ranges and host-name patterns.  Pure values and parsing; no
// sockets, no resolver.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct IpAddr {
  uint8_t family = 0;              // 0 none, 4, 6
  std::array<uint8_t, 16> b = {};  // IPv4 in b[0..3], the rest zero

  static IpAddr v4(const uint8_t bytes[4]);
  // ::ffff:a.b.c.d becomes the IPv4 address a.b.c.d: the kernel connects an
  // AF_INET6 socket to such an address over IPv4, so it is that host.
  static IpAddr v6(const uint8_t bytes[16]);
  // Dotted quad (exactly four decimal parts, no leading zeros beyond "0") or
  // any IPv6 text inet_pton(3) takes, optionally in brackets.
  static std::optional<IpAddr> parse(std::string_view text);

  bool empty() const { return family == 0; }
  size_t size() const { return family == 4 ? 4 : family == 6 ? 16 : 0; }
  // "203.0.113.7", "2001:db8::1"; "" when empty.
  std::string text() const;
  bool loopback() const;

  friend bool operator==(const IpAddr&, const IpAddr&) = default;
  friend auto operator<=>(const IpAddr&, const IpAddr&) = default;
};

struct Cidr {
  IpAddr net;  // host bits zero
  uint8_t prefix = 0;
  bool contains(const IpAddr& a) const;
  std::string text() const;  // "10.0.0.0/8", "::1" for a single address
};

struct PortRange {
  uint16_t lo = 0, hi = 0;
  bool contains(uint16_t p) const { return p >= lo && p <= hi; }
  std::string text() const;
};

// A pattern for `host:`: a name pattern or an address block.
//   registry.npmjs.org   one name (case-insensitive, a final '.' ignored)
//   *.github.com         any name below github.com (one or more labels), not github.com itself
//   registry*.npmjs.org  '*' inside a label: any run of characters within that label
//   *                    any name the session resolved
//   10.0.0.0/8, ::1, [2001:db8::]/32, ::ffff:10.0.0.0/104 (= 10.0.0.0/8)
struct HostPattern {
  enum class Kind : uint8_t { Name, Address };
  Kind kind = Kind::Name;
  std::string text;                 // canonical: lowercased name, or the block as Cidr::text()
  Cidr cidr;                        // Address
  bool any_subdomain = false;       // Name: the pattern began with "*." (stripped from `labels`)
  std::vector<std::string> labels;  // Name, lowercased, may hold '*'

  bool match_name(std::string_view name) const;  // `name` lowercased, no final '.'
  bool match_addr(const IpAddr& a) const { return kind == Kind::Address && cidr.contains(a); }
};

struct NetParseError {
  size_t offset = 0;  // into the text as written
  std::string message;
};

// Each returns the value or an error that says what to write instead.
std::optional<HostPattern> parse_host_pattern(std::string_view text, NetParseError* err);
std::optional<PortRange> parse_port_range(std::string_view text, NetParseError* err);

// "Example.COM." -> "example.com": the form names are kept and matched in.
std::string normalize_host_name(std::string_view name);

}  // namespace cb
