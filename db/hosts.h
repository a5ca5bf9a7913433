// "Which hosts did this session reach, and who?": the pure part of
// `cottonbox hosts`, folding a session's net.* events and its resolver's
// lookups into one row per host and port; and "who contacted this host?",
// the host twin of a path glob (EventQuery::host).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/result.h"
#include "db/store.h"
#include "policy/netaddr.h"

namespace cb::db {

// The fold behind summarize_hosts(), one record at a time and in any order
// (a live view adds events in batches as they arrive, and lookups as the
// database commits them): rows() is the same whatever the order.
class HostTally {
 public:
  // At most `max_hosts` rows of each kind; what would make more is counted
  // in dropped(), not kept (a live view's bound).
  explicit HostTally(size_t max_hosts = std::numeric_limits<size_t>::max()) : max_(max_hosts) {}

  // Events without an IP address (unix sockets, files) are left out.
  void add(const EventRow& e);
  void add(const LookupRow& l);

  // Contacted hosts in order of first contact, then the names refused at
  // resolution that no event reached, as rows of proto "dns".
  std::vector<HostContact> rows() const;
  // Events and lookups left out for the bound.
  uint64_t dropped() const { return dropped_; }

 private:
  struct NameLookups {
    uint64_t all = 0, refused = 0;
    int64_t first_refused_ns = 0, last_refused_ns = 0;
    std::vector<uint64_t> refused_by;  // proc ids, in order, no repeats
  };
  // Adds what the lookups of `name` count to row `i`, which just gained it.
  void count_lookups(size_t i, const std::string& name);

  size_t max_;
  uint64_t dropped_ = 0;
  std::vector<HostContact> contacted_;
  std::map<std::tuple<std::string, uint16_t, std::string>, size_t> index_;
  std::map<std::string, std::vector<size_t>> by_name_;  // name -> contacted rows that have it
  std::map<std::string, NameLookups> lookups_;
  std::vector<std::string> refused_order_;  // names, in order of their first refused lookup
};

// One row per (first name resolved for the address, or the address; port;
// protocol), in order of first contact; names refused at resolution that
// no event reached follow, as rows of proto "dns".  Events without an IP
// address (unix sockets) are left out.
std::vector<HostContact> summarize_hosts(const std::vector<StoredEvent>& events,
                                         const std::vector<StoredLookup>& lookups);

// The actions that reach a host: a connection, a datagram sent to an
// address.  Binding and listening name a local address, not a host
// contacted: "who contacted" leaves them out.
constexpr ActionMask kContactActions = bit(Action::NetConnect) | bit(Action::NetSend);

// What a user asks "who contacted" about, read as `host:` in rules reads it
// (policy/netaddr.h): a name (registry.npmjs.org), a name pattern
// (*.example.com, registry*.npmjs.org, * for any resolved name), an address
// (10.0.0.1, ::1, [::1], ::ffff:10.0.0.1 = 10.0.0.1) or a block
// (10.0.0.0/8).  An error says what to write instead.
Result<HostPattern> parse_host_query(std::string_view text);

// The event's network object is that host: its address lies in the block,
// or one of the names the session resolved to it (those asked for and the
// CNAME chain's) matches the pattern.  As a deny rule reads `host:`, so a
// CNAME cannot hide a contact from the question.
bool contacted(const HostPattern& p, const NetObject& n);

}  // namespace cb::db
