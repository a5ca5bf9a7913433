// The session's name map: which names this session resolved to which
// addresses, through its own resolver or its hosts file, and by what chain.
//
// It is what makes a name rule exact: a connect to an address matches
// `host: registry.npmjs.org` only when this session asked for that name and
// was given that address.  Entries never expire within the session (TTLs are
// kept for the trail, not for permission): a program may connect long after
// its lookup, and a name that re-resolves elsewhere (rebinding) adds an
// entry rather than moving one.
//
// Thread-safe: the resolver adds while the supervisor's decisions read.
#pragma once

#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "net/dns_wire.h"
#include "policy/event.h"

namespace cb::net {

enum class NameOrigin : uint8_t { Dns, HostsFile };
std::string_view name_origin_name(NameOrigin o);  // "dns", "hosts"

struct Resolution {
  std::string asked;               // the name a process asked for, in key form (DnsName::key())
  std::vector<std::string> chain;  // the CNAME targets from `asked` to the address's owner, in order
  IpAddr addr;
  uint32_t ttl = 0;  // of the address record, as the last answer gave it
  NameOrigin origin = NameOrigin::Dns;
  int64_t first_ns = 0, last_ns = 0;
  uint32_t answers = 0;  // how many answers gave it
};

// What a response says about addresses, following the CNAME chain from its
// question.  `addresses` holds the A and AAAA records and the SVCB/HTTPS
// address hints whose owner is on the chain; `off_chain` is set when the
// answer or authority section holds an address record (or a hint) for a
// name off the chain: a resolver must not pass that on, since the client
// could use an address the map would not know by that name.
struct ChainAnswer {
  std::string asked;
  std::vector<std::string> chain;
  struct Addr {
    IpAddr addr;
    uint32_t ttl = 0;
    std::string owner;  // the name on the chain that holds it
  };
  std::vector<Addr> addresses;
  bool off_chain = false;
  bool loop = false;  // the CNAME chain came back to a name on it (or ran over 16 links)
};
ChainAnswer follow_chain(const DnsMessage& response);

class NameMap;
// For a net.* event: its object read back from its path (one spelling,
// net/sockaddr.h), with the names `names` holds for the address (none when
// null).  Other events are left as they are.
void fill_net_object(Event& ev, const NameMap* names);

struct IpAddrHash {
  size_t operator()(const IpAddr& a) const;
};

class NameMap {
 public:
  static constexpr size_t kDefaultMaxEntries = 1 << 16;
  explicit NameMap(size_t max_entries = kDefaultMaxEntries) : max_(max_entries) {}

  // Records one (name, chain, address).  The same triple again updates its
  // times, TTL and count.  False, and nothing recorded, when the map is
  // full: the caller must then not hand the address out.
  bool add(const std::string& asked, const std::vector<std::string>& chain, const IpAddr& addr, uint32_t ttl,
           NameOrigin origin, int64_t now_ns);
  // Every address of `answer`, all or nothing: false when they do not all fit.
  bool add(const ChainAnswer& answer, NameOrigin origin, int64_t now_ns);

  // Fills n.hosts (names asked) and n.names (those and every chain name)
  // for n.addr, in the order they were first recorded, without repeats.
  void annotate(NetObject& n) const;
  std::vector<Resolution> lookup(const IpAddr& addr) const;
  std::vector<IpAddr> addresses_of(std::string_view name) const;  // name in any case, with or without a final '.'
  std::vector<Resolution> all() const;
  size_t size() const;

 private:
  mutable std::shared_mutex mu_;
  size_t max_;
  std::vector<Resolution> entries_;
  std::unordered_map<IpAddr, std::vector<size_t>, IpAddrHash> by_addr_;
  std::unordered_map<std::string, std::vector<size_t>> by_name_;  // asked -> entries
  std::unordered_map<std::string, size_t> by_key_;                // asked, chain and address -> entry
};

}  // namespace cb::net
