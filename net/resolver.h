// The session's stub resolver: it serves the address the session's
// resolv.conf names (UDP and TCP), forwards each lookup to the host's
// upstream resolvers (or a test resolver), and records every answer it hands
// out into the session's NameMap before the client can read it.  So every
// address a process of the session learned from a name is known by that
// name when the process connects to it.
//
// What it refuses or changes, and why:
// - a lookup the judge denies: REFUSED (or NXDOMAIN), at the question and
//   again when the answer's CNAME chain or addresses are known;
// - an answer it cannot parse, whose CNAME chain loops, or that carries
//   address records for names off the chain: SERVFAIL, since passing it on
//   would hand out an address under a name the map would not know;
// - the additional section is dropped (but its OPT record): glue and
//   other extra addresses are not answers to the question;
// - a full name map: SERVFAIL (fail closed; see NameMap);
// - an answer larger than the client takes over UDP: TC, and the client
//   asks again over TCP; an upstream's TC is passed on the same way.
//
// Event loop: everything it owns (listening sockets, TCP clients, upstream
// sockets, one timerfd) sits in one epoll set.  The host polls fd() for
// POLLIN beside its own fds and calls run_once() when it is readable; or
// runs a ResolverThread.  run_once() never blocks.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "net/endpoint.h"
#include "net/name_map.h"

namespace cb::net {

// A lookup as the judge sees it: at the question (answer null), then with
// the answer's chain and addresses.
struct Lookup {
  std::string name;  // key form
  uint16_t type = 0;
  const ChainAnswer* answer = nullptr;
  Endpoint client;
  bool tcp = false;
};
enum class LookupVerdict : uint8_t { Allow, Refuse, NxDomain };

// One client query and what it was answered, for the trail.
struct LookupRecord {
  int64_t ts_ns = 0;
  Endpoint client;
  bool tcp = false;
  std::string name;  // key form; "" when the query did not parse
  uint16_t type = 0;
  Rcode rcode = Rcode::NoError;
  bool denied = false;     // the judge refused it
  bool truncated = false;  // TC: the client is to ask again over TCP
  std::vector<std::string> chain;
  std::vector<IpAddr> addresses;  // recorded into the name map
  std::string upstream;           // "127.0.0.1:53"; "" when none was asked
  std::string note;               // why it failed, in words
};

struct ResolverOptions {
  std::vector<Endpoint> listen;             // served over UDP and TCP; port 0: bind picks one
  std::vector<Endpoint> upstreams;          // tried in order, then once more
  std::chrono::milliseconds timeout{1500};  // per upstream attempt
  size_t max_pending = 512;                 // lookups in flight; more are answered SERVFAIL
  size_t max_tcp_clients = 64;
  std::chrono::milliseconds tcp_idle{10000};
  std::function<LookupVerdict(const Lookup&)> judge;   // null: allow every lookup
  std::function<void(const LookupRecord&)> on_lookup;  // null: none
};

class Resolver {
 public:
  // Binds every listen address (UDP and TCP) now, so that an error is the
  // caller's to report before the session starts.
  static Result<std::unique_ptr<Resolver>> start(ResolverOptions opts, NameMap& map);
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  int fd() const;
  void run_once();
  // Replaces ResolverOptions::on_lookup: for a host that starts the
  // resolver before its sinks exist.  Not while run_once() runs.
  void set_on_lookup(std::function<void(const LookupRecord&)> f);
  // The addresses served, with the ports bind chose.
  std::vector<Endpoint> listening() const;

  struct Stats {
    uint64_t queries = 0, forwarded = 0, refused = 0, servfail = 0, truncated = 0, tcp_queries = 0, timeouts = 0,
             formerr = 0;
  };
  Stats stats() const;

  struct Impl;

 private:
  explicit Resolver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A thread that runs a resolver's loop until stop() or destruction.
class ResolverThread {
 public:
  explicit ResolverThread(std::unique_ptr<Resolver> r);
  ~ResolverThread();
  void stop();
  Resolver& resolver() { return *resolver_; }

 private:
  std::unique_ptr<Resolver> resolver_;
  UniqueFd stop_fd_;
  std::thread thread_;
};

}  // namespace cb::net
