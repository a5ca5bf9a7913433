// A scripted DNS server for the resolver's tests: it listens on a loopback
// address (UDP and TCP, one thread) and answers each query with whatever
// its handler returns, including nothing, garbage, or an answer to some
// other question: the misbehaving upstreams a resolver must survive.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "base/fd.h"
#include "net/dns_wire.h"
#include "net/endpoint.h"

namespace cb::net::test {

struct Answer {
  std::vector<std::vector<uint8_t>> messages;  // sent in order (none: silence)
};

class TestDnsServer {
 public:
  // query: the parsed query; raw: its bytes; tcp: how it came.
  using Handler = std::function<Answer(const DnsMessage& query, const std::vector<uint8_t>& raw, bool tcp)>;
  TestDnsServer(const Endpoint& at, Handler handler);
  ~TestDnsServer();
  Endpoint endpoint() const { return at_; }
  int udp_queries() const { return udp_queries_; }
  int tcp_queries() const { return tcp_queries_; }

 private:
  void run();
  Endpoint at_;
  Handler handler_;
  UniqueFd udp_, tcp_, stop_;
  std::atomic<int> udp_queries_ = 0, tcp_queries_ = 0;
  std::thread thread_;
};

// A response to `q` with these answer records (owner, type, value: an
// address or a CNAME target), id and question copied.
std::vector<uint8_t> respond(const DnsMessage& q,
                             const std::vector<std::tuple<std::string, uint16_t, std::string>>& rrs,
                             uint32_t ttl = 300);

// A query for `name` (with an OPT record for 4096 bytes when `edns`).
std::vector<uint8_t> query(const std::string& name, uint16_t type = dns_type::A, uint16_t id = 0x4242,
                           bool edns = false);
// Sends `msg` over UDP to `to` and waits for one reply; nullopt after the timeout.
std::optional<std::vector<uint8_t>> ask_udp(const Endpoint& to, const std::vector<uint8_t>& msg, int timeout_ms = 3000);

}  // namespace cb::net::test
