// DNS messages in their wire format (RFC 1035 section 4; EDNS0 from RFC
// 6891; SVCB/HTTPS address hints from RFC 9460).
//
// The parser reads bytes a supervised process sent (queries) and bytes an
// upstream resolver answered (responses), so it trusts nothing: every read
// is bounds-checked, compression pointers must point strictly backwards (so
// no chain of them can loop) and into the message past the header, a name
// is at most 255 bytes, counts must match the records present, and bytes
// after the last record are an error.  What it cannot parse is refused
// whole: the resolver answers SERVFAIL rather than pass on an answer it
// could not record.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/netaddr.h"

namespace cb::net {

namespace dns_type {
constexpr uint16_t A = 1, NS = 2, CNAME = 5, SOA = 6, PTR = 12, MX = 15, TXT = 16, AAAA = 28, SRV = 33, OPT = 41,
                   SVCB = 64, HTTPS = 65, ANY = 255;
}
constexpr uint16_t kClassIn = 1;

enum class Rcode : uint8_t { NoError = 0, FormErr = 1, ServFail = 2, NxDomain = 3, NotImp = 4, Refused = 5 };

constexpr size_t kMaxNameWire = 255;  // bytes, labels and their length bytes and the root
constexpr size_t kMaxUdpPlain = 512;  // a UDP message without EDNS
constexpr size_t kHeaderSize = 12;

struct DnsName {
  std::vector<std::string> labels;  // the bytes of each label as on the wire; empty: the root

  // Presentation form (RFC 1035 section 5.1): labels joined by '.', a '.'
  // or '\' inside a label escaped with '\', bytes outside printable ASCII
  // as \DDD; "." for the root.  Case as on the wire.
  std::string text() const;
  // text() in lower case without the final '.': the form the name map and
  // the rules use (normalize_host_name()).  "" for the root.
  std::string key() const;
  size_t wire_size() const;
  // The presentation form back (escapes understood); nullopt if a label is
  // empty or longer than 63 bytes, or the name longer than 255.
  static std::optional<DnsName> from_text(std::string_view text);
  bool equals_ignoring_case(const DnsName& o) const;
};

struct DnsHeader {
  uint16_t id = 0;
  uint16_t flags = 0;
  bool qr() const { return flags & 0x8000; }
  uint8_t opcode() const { return (flags >> 11) & 0xf; }
  bool aa() const { return flags & 0x0400; }
  bool tc() const { return flags & 0x0200; }
  bool rd() const { return flags & 0x0100; }
  bool ra() const { return flags & 0x0080; }
  uint8_t rcode() const { return flags & 0xf; }
  void set_qr(bool v) { set(0x8000, v); }
  void set_tc(bool v) { set(0x0200, v); }
  void set_rd(bool v) { set(0x0100, v); }
  void set_ra(bool v) { set(0x0080, v); }
  void set_aa(bool v) { set(0x0400, v); }
  void set_rcode(Rcode r) { flags = static_cast<uint16_t>((flags & ~0xf) | static_cast<uint16_t>(r)); }

 private:
  void set(uint16_t bit, bool v) { flags = static_cast<uint16_t>(v ? flags | bit : flags & ~bit); }
};

struct DnsQuestion {
  DnsName name;
  uint16_t type = dns_type::A;
  uint16_t cls = kClassIn;
};

struct DnsRecord {
  DnsName name;
  uint16_t type = 0;
  uint16_t cls = kClassIn;
  uint32_t ttl = 0;
  // As on the wire.  Names inside may be compressed, pointing into the
  // message it came from; build_dns() writes it unchanged except for the
  // types it builds from the fields below.
  std::vector<uint8_t> rdata;
  IpAddr addr;                // A, AAAA
  DnsName target;             // CNAME; SVCB/HTTPS: the target name
  std::vector<IpAddr> hints;  // SVCB/HTTPS: ipv4hint and ipv6hint
};

struct DnsMessage {
  DnsHeader header;
  std::vector<DnsQuestion> questions;
  std::vector<DnsRecord> answers, authority, additional;
  // Parsed messages only: where the additional section begins, and the
  // OPT record's bytes (owner, type, class, TTL, rdata) if there was one.
  size_t additional_offset = 0;
  std::vector<uint8_t> opt_bytes;

  // The largest UDP response the sender accepts: the OPT record's class,
  // at least 512; 512 without EDNS.
  size_t udp_limit() const;
  const DnsRecord* opt() const;
};

// Strict parse of one message (no TCP length prefix).
Result<DnsMessage> parse_dns(std::span<const uint8_t> bytes);

// Writes `m`, compressing the names of questions and record owners and of
// CNAME targets.  A and AAAA rdata come from `addr`, CNAME rdata from
// `target` (always: a parsed CNAME's raw rdata may point into the message
// it came from); other types use `rdata` as is, so it must hold no
// compression pointers.  Counts come from the vectors.
std::vector<uint8_t> build_dns(const DnsMessage& m);

// A response to `query` with no records: its id, opcode, RD and question,
// QR and RA set, and `rcode` (REFUSED, NXDOMAIN, SERVFAIL, FORMERR...), or
// TC set when `truncated` (the client should ask again over TCP).
std::vector<uint8_t> build_reply(const DnsMessage& query, Rcode rcode, bool truncated = false);

// The same header fields taken from raw bytes that did not parse: the id
// and opcode of the first 12 bytes, no question.  Empty when there are
// fewer than 12 bytes or the QR bit says it is no query.
std::vector<uint8_t> build_formerr(std::span<const uint8_t> bytes);

// ---------------------------------------------------------------- TCP

// DNS over TCP (RFC 1035 4.2.2, RFC 7766): each message preceded by its
// length in two bytes.  Collects a stream and hands out whole messages.
class TcpFramer {
 public:
  void append(std::span<const uint8_t> bytes);
  // The next whole message, without its prefix, or nullopt for more bytes.
  std::optional<std::vector<uint8_t>> next();
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
};

// `msg` with its two-byte length prefix (msg must be < 65536 bytes).
std::vector<uint8_t> tcp_frame(std::span<const uint8_t> msg);

}  // namespace cb::net
