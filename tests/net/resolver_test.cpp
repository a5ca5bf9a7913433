// The stub resolver against a scripted upstream on loopback: forwarding and
// recording, refusals at the question and at the chain, what it will not
// pass on, truncation, TCP, timeouts and a second upstream, and upstreams
// that lie about ids or questions.  Clients here send raw bytes, so every
// reply is checked as the wire carries it.
#include "net/resolver.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>

#include "tests/net/test_server.h"

namespace cb::net {
namespace {

using test::Answer;
using test::ask_udp;
using test::query;
using test::respond;
using test::TestDnsServer;
using Bytes = std::vector<uint8_t>;

Endpoint any_port(const char* addr) { return Endpoint{*IpAddr::parse(addr), 0}; }

// Sends each message over one TCP connection (all in one write) and reads
// `expect` framed replies.
std::vector<Bytes> ask_tcp(const Endpoint& to, const std::vector<Bytes>& msgs, size_t expect) {
  sockaddr_storage ss;
  socklen_t len = to.to_sockaddr(ss);
  UniqueFd s(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  std::vector<Bytes> out;
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return out;
  Bytes all;
  for (const auto& m : msgs) {
    auto f = tcp_frame(m);
    all.insert(all.end(), f.begin(), f.end());
  }
  if (::send(s.get(), all.data(), all.size(), MSG_NOSIGNAL) < 0) return out;
  TcpFramer fr;
  Bytes buf(65536);
  while (out.size() < expect) {
    pollfd p{s.get(), POLLIN, 0};
    if (poll(&p, 1, 3000) <= 0) break;
    ssize_t n = ::read(s.get(), buf.data(), buf.size());
    if (n <= 0) break;
    fr.append(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
    while (auto m = fr.next()) out.push_back(*m);
  }
  return out;
}

DnsMessage parsed(const std::optional<Bytes>& b) {
  EXPECT_TRUE(b) << "no reply";
  if (!b) return {};
  auto r = parse_dns(*b);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : DnsMessage{};
}

// The names the zone below knows.
Answer zone(const DnsMessage& q, const Bytes&, bool tcp) {
  std::string name = q.questions[0].name.key();
  uint16_t type = q.questions[0].type;
  if (name == "web.cbtest" && type == dns_type::A) return {{respond(q, {{"web.cbtest", dns_type::A, "127.1.0.10"}})}};
  if (name == "web.cbtest" && type == dns_type::AAAA)
    return {{respond(q, {{"web.cbtest", dns_type::AAAA, "fd00:cb::10"}})}};
  if (name == "alias.cbtest")
    return {{respond(q, {{"alias.cbtest", dns_type::CNAME, "web.cbtest"}, {"web.cbtest", dns_type::A, "127.1.0.10"}})}};
  if (name == "innocent.cbtest")
    return {{respond(
        q, {{"innocent.cbtest", dns_type::CNAME, "x.evil.cbtest"}, {"x.evil.cbtest", dns_type::A, "127.1.0.66"}})}};
  if (name == "glue.cbtest") {
    // An answer with glue in the additional section and EDNS.
    DnsMessage r = *parse_dns(respond(q, {{"glue.cbtest", dns_type::A, "127.1.0.11"}}));
    DnsRecord g;
    g.name = *DnsName::from_text("ns.elsewhere.test");
    g.type = dns_type::A;
    g.addr = *IpAddr::parse("198.51.100.1");
    r.additional.push_back(g);
    DnsRecord opt;
    opt.type = dns_type::OPT;
    opt.cls = 1232;
    r.additional.push_back(opt);
    return {{build_dns(r)}};
  }
  if (name == "offchain.cbtest")
    return {
        {respond(q, {{"offchain.cbtest", dns_type::A, "127.1.0.12"}, {"registry.npmjs.org", dns_type::A, "6.6.6.6"}})}};
  if (name == "loop.cbtest")
    return {{respond(
        q, {{"loop.cbtest", dns_type::CNAME, "pool.cbtest"}, {"pool.cbtest", dns_type::CNAME, "loop.cbtest"}})}};
  if (name == "garbage.cbtest") {
    Bytes g = respond(q, {{"garbage.cbtest", dns_type::A, "127.1.0.13"}});
    g.resize(g.size() - 2);  // cut inside the last record
    return {{g}};
  }
  if (name == "spoof.cbtest") {
    Bytes wrong_id = respond(q, {{"spoof.cbtest", dns_type::A, "6.6.6.6"}});
    wrong_id[0] ^= 0xff;
    DnsMessage other = q;
    other.questions[0].name = *DnsName::from_text("other.cbtest");
    Bytes wrong_question = respond(other, {{"other.cbtest", dns_type::A, "6.6.6.7"}});
    return {{wrong_id, wrong_question, respond(q, {{"spoof.cbtest", dns_type::A, "127.1.0.14"}})}};
  }
  if (name == "big.cbtest") {
    std::vector<std::tuple<std::string, uint16_t, std::string>> rrs;
    for (int i = 1; i <= 40; ++i) rrs.emplace_back("big.cbtest", dns_type::A, "127.1.1." + std::to_string(i));
    Bytes whole = respond(q, rrs);
    if (tcp) return {{whole}};
    // Over UDP an honest server sets TC and sends what fits.
    DnsMessage t = *parse_dns(whole);
    t.answers.resize(20);
    t.header.set_tc(true);
    return {{build_dns(t)}};
  }
  if (name == "fat.cbtest") {
    // A server that ignores the client's size and sends 40 records over UDP.
    std::vector<std::tuple<std::string, uint16_t, std::string>> rrs;
    for (int i = 1; i <= 40; ++i) rrs.emplace_back("fat.cbtest", dns_type::A, "127.1.2." + std::to_string(i));
    return {{respond(q, rrs)}};
  }
  if (name == "silent.cbtest") return {};
  DnsMessage nx;
  nx.header = q.header;
  nx.header.set_qr(true);
  nx.header.set_rcode(Rcode::NxDomain);
  nx.questions = q.questions;
  return {{build_dns(nx)}};
}

class ResolverTest : public ::testing::Test {
 protected:
  void start(std::vector<Endpoint> upstreams = {}, std::function<LookupVerdict(const Lookup&)> judge = nullptr,
             size_t map_size = NameMap::kDefaultMaxEntries) {
    server_ = std::make_unique<TestDnsServer>(any_port("127.0.0.1"), zone);
    if (upstreams.empty()) upstreams = {server_->endpoint()};
    start_resolver(std::move(upstreams), std::move(judge), map_size, std::chrono::milliseconds(300));
  }
  void start_resolver(std::vector<Endpoint> upstreams, std::function<LookupVerdict(const Lookup&)> judge,
                      size_t map_size, std::chrono::milliseconds timeout) {
    map_ = std::make_unique<NameMap>(map_size);
    ResolverOptions o;
    o.listen = {any_port("127.0.0.1")};
    o.upstreams = std::move(upstreams);
    o.timeout = timeout;
    o.judge = std::move(judge);
    o.on_lookup = [this](const LookupRecord& r) {
      std::lock_guard lk(mu_);
      records_.push_back(r);
    };
    auto r = Resolver::start(std::move(o), *map_);
    ASSERT_TRUE(r) << r.error().message;
    at_ = (*r)->listening()[0];
    thread_ = std::make_unique<ResolverThread>(std::move(*r));
  }
  void TearDown() override { thread_.reset(); }

  std::vector<LookupRecord> records() {
    std::lock_guard lk(mu_);
    return records_;
  }
  std::vector<std::string> hosts_of(const char* addr) {
    NetObject n = make_net_object(NetProto::Tcp, *IpAddr::parse(addr), 443);
    map_->annotate(n);
    return n.names;
  }

  std::unique_ptr<TestDnsServer> server_;
  std::unique_ptr<NameMap> map_;
  std::unique_ptr<ResolverThread> thread_;
  Endpoint at_;
  std::mutex mu_;
  std::vector<LookupRecord> records_;
};

TEST_F(ResolverTest, ForwardsRecordsAndAnswersWithTheClientsId) {
  start();
  DnsMessage r = parsed(ask_udp(at_, query("Alias.CBTEST", dns_type::A, 0x1111)));
  EXPECT_EQ(r.header.id, 0x1111);
  EXPECT_EQ(r.header.rcode(), 0);
  ASSERT_EQ(r.answers.size(), 2u);
  EXPECT_EQ(r.answers[1].addr.text(), "127.1.0.10");
  EXPECT_EQ(hosts_of("127.1.0.10"), (std::vector<std::string>{"alias.cbtest", "web.cbtest"}));
  auto recs = records();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].name, "alias.cbtest");
  EXPECT_EQ(recs[0].chain, (std::vector<std::string>{"web.cbtest"}));
  ASSERT_EQ(recs[0].addresses.size(), 1u);
  EXPECT_EQ(recs[0].upstream, server_->endpoint().text());
  EXPECT_FALSE(recs[0].tcp);
  EXPECT_GT(recs[0].ts_ns, 0);
  EXPECT_EQ(server_->udp_queries(), 1);
}

TEST_F(ResolverTest, TheAdditionalSectionIsDroppedButEdns) {
  start();
  auto raw = ask_udp(at_, query("glue.cbtest", dns_type::A, 7, true));
  DnsMessage r = parsed(raw);
  ASSERT_EQ(r.additional.size(), 1u);
  EXPECT_EQ(r.additional[0].type, dns_type::OPT);
  EXPECT_EQ(r.additional[0].cls, 1232);
  NetObject glue = make_net_object(NetProto::Tcp, *IpAddr::parse("198.51.100.1"), 53);
  map_->annotate(glue);
  EXPECT_TRUE(glue.names.empty());
}

TEST_F(ResolverTest, RefusedAtTheQuestion) {
  start({}, [](const Lookup& l) {
    return l.name == "evil.cbtest" || l.name.ends_with(".evil.cbtest") ? LookupVerdict::Refuse : LookupVerdict::Allow;
  });
  DnsMessage r = parsed(ask_udp(at_, query("x.evil.cbtest")));
  EXPECT_EQ(r.header.rcode(), static_cast<int>(Rcode::Refused));
  EXPECT_TRUE(r.answers.empty());
  EXPECT_EQ(server_->udp_queries(), 0) << "a refused name never leaves the session";
  auto recs = records();
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_TRUE(recs[0].denied);
  EXPECT_EQ(recs[0].rcode, Rcode::Refused);
}

TEST_F(ResolverTest, RefusedWhenTheChainLeadsToADeniedName) {
  start({}, [](const Lookup& l) {
    auto denied = [](const std::string& n) { return n.ends_with(".evil.cbtest"); };
    if (denied(l.name)) return LookupVerdict::Refuse;
    if (l.answer)
      for (const auto& c : l.answer->chain)
        if (denied(c)) return LookupVerdict::NxDomain;
    return LookupVerdict::Allow;
  });
  DnsMessage r = parsed(ask_udp(at_, query("innocent.cbtest")));
  EXPECT_EQ(r.header.rcode(), static_cast<int>(Rcode::NxDomain));
  EXPECT_TRUE(r.answers.empty());
  EXPECT_TRUE(hosts_of("127.1.0.66").empty()) << "nothing recorded for a refused answer";
  EXPECT_EQ(map_->size(), 0u);
}

TEST_F(ResolverTest, WhatItWillNotPassOn) {
  start();
  // Addresses for a name off the chain; a looping chain; an answer that does not parse.
  for (const char* name : {"offchain.cbtest", "loop.cbtest", "garbage.cbtest"}) {
    DnsMessage r = parsed(ask_udp(at_, query(name)));
    EXPECT_EQ(r.header.rcode(), static_cast<int>(Rcode::ServFail)) << name;
    EXPECT_TRUE(r.answers.empty()) << name;
  }
  EXPECT_EQ(map_->size(), 0u);
  auto recs = records();
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0].note, "the answer holds addresses for names off its CNAME chain");
  EXPECT_EQ(recs[1].note, "the answer's CNAME chain loops");
  EXPECT_TRUE(recs[2].note.starts_with("the upstream's answer did not parse: ")) << recs[2].note;
}

TEST_F(ResolverTest, AnswersWithAnotherIdOrQuestionAreIgnored) {
  start();
  DnsMessage r = parsed(ask_udp(at_, query("spoof.cbtest")));
  ASSERT_EQ(r.answers.size(), 1u);
  EXPECT_EQ(r.answers[0].addr.text(), "127.1.0.14");
  EXPECT_TRUE(hosts_of("6.6.6.6").empty());
  EXPECT_TRUE(hosts_of("6.6.6.7").empty());
}

TEST_F(ResolverTest, TruncatedOverUdpThenWholeOverTcp) {
  start();
  DnsMessage t = parsed(ask_udp(at_, query("big.cbtest")));
  EXPECT_TRUE(t.header.tc());
  // What the truncated answer held is recorded: a client could use it.
  EXPECT_EQ(map_->addresses_of("big.cbtest").size(), 20u);
  auto replies = ask_tcp(at_, {query("big.cbtest", dns_type::A, 9)}, 1);
  ASSERT_EQ(replies.size(), 1u);
  DnsMessage w = parsed(replies[0]);
  EXPECT_FALSE(w.header.tc());
  EXPECT_EQ(w.header.id, 9);
  EXPECT_EQ(w.answers.size(), 40u);
  EXPECT_EQ(map_->addresses_of("big.cbtest").size(), 40u);
  EXPECT_EQ(server_->tcp_queries(), 1) << "a TCP client is forwarded over TCP";
}

TEST_F(ResolverTest, TooBigForTheClientBecomesTruncated) {
  start();
  auto raw = ask_udp(at_, query("fat.cbtest"));
  ASSERT_TRUE(raw);
  EXPECT_LE(raw->size(), kMaxUdpPlain);
  DnsMessage r = parsed(raw);
  EXPECT_TRUE(r.header.tc());
  EXPECT_TRUE(r.answers.empty());
  // With EDNS the client takes it whole.
  DnsMessage e = parsed(ask_udp(at_, query("fat.cbtest", dns_type::A, 5, true)));
  EXPECT_FALSE(e.header.tc());
  EXPECT_EQ(e.answers.size(), 40u);
}

TEST_F(ResolverTest, TcpQueriesPipelinedOnOneConnection) {
  start();
  auto replies = ask_tcp(at_,
                         {query("web.cbtest", dns_type::A, 1), query("web.cbtest", dns_type::AAAA, 2),
                          query("nope.cbtest", dns_type::A, 3)},
                         3);
  ASSERT_EQ(replies.size(), 3u);
  std::map<uint16_t, DnsMessage> by_id;
  for (const auto& b : replies) {
    DnsMessage m = parsed(b);
    by_id[m.header.id] = m;
  }
  EXPECT_EQ(by_id[1].answers.at(0).addr.text(), "127.1.0.10");
  EXPECT_EQ(by_id[2].answers.at(0).addr.text(), "fd00:cb::10");
  EXPECT_EQ(by_id[3].header.rcode(), static_cast<int>(Rcode::NxDomain));
}

TEST_F(ResolverTest, BadQueries) {
  start();
  // Not even a header: no answer (nothing to answer to).
  EXPECT_FALSE(ask_udp(at_, Bytes{1, 2, 3}, 300));
  // A header and garbage: FORMERR with the id.
  Bytes junk = {0xbe, 0xef, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c};
  DnsMessage f = parsed(ask_udp(at_, junk));
  EXPECT_EQ(f.header.id, 0xbeef);
  EXPECT_EQ(f.header.rcode(), static_cast<int>(Rcode::FormErr));
  // Two questions.
  DnsMessage two = *parse_dns(query("a.cbtest"));
  two.questions.push_back(two.questions[0]);
  EXPECT_EQ(parsed(ask_udp(at_, build_dns(two))).header.rcode(), static_cast<int>(Rcode::FormErr));
  // Another opcode (STATUS).
  DnsMessage status = *parse_dns(query("a.cbtest"));
  status.header.flags |= 2 << 11;
  EXPECT_EQ(parsed(ask_udp(at_, build_dns(status))).header.rcode(), static_cast<int>(Rcode::NotImp));
  // A response sent to the resolver is dropped.
  DnsMessage resp = *parse_dns(query("a.cbtest"));
  resp.header.set_qr(true);
  EXPECT_FALSE(ask_udp(at_, build_dns(resp), 300));
  EXPECT_EQ(server_->udp_queries(), 0);
}

TEST_F(ResolverTest, ASilentUpstreamThenTheNextOne) {
  // The first upstream is a socket nobody reads: every attempt times out.
  UniqueFd mute(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(mute.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  socklen_t len = sizeof sa;
  getsockname(mute.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  sockaddr_storage ss{};
  memcpy(&ss, &sa, sizeof sa);
  Endpoint dead = Endpoint::from_sockaddr(ss);
  server_ = std::make_unique<TestDnsServer>(any_port("127.0.0.1"), zone);
  start_resolver({dead, server_->endpoint()}, nullptr, NameMap::kDefaultMaxEntries, std::chrono::milliseconds(200));
  auto t0 = std::chrono::steady_clock::now();
  DnsMessage a = parsed(ask_udp(at_, query("web.cbtest")));
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(a.answers.at(0).addr.text(), "127.1.0.10");
  EXPECT_GE(took, std::chrono::milliseconds(190));
  EXPECT_EQ(thread_->resolver().stats().timeouts, 1u);
  // Nothing answers "silent": every attempt times out, then SERVFAIL.
  t0 = std::chrono::steady_clock::now();
  DnsMessage s = parsed(ask_udp(at_, query("silent.cbtest")));
  took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(s.header.rcode(), static_cast<int>(Rcode::ServFail));
  EXPECT_GE(took, std::chrono::milliseconds(4 * 190));
  EXPECT_LT(took, std::chrono::milliseconds(3000));
}

TEST_F(ResolverTest, AFullNameMapFailsClosed) {
  start({}, nullptr, 1);
  EXPECT_EQ(parsed(ask_udp(at_, query("web.cbtest"))).header.rcode(), 0);
  DnsMessage r = parsed(ask_udp(at_, query("alias.cbtest")));
  EXPECT_EQ(r.header.rcode(), static_cast<int>(Rcode::ServFail));
  EXPECT_TRUE(r.answers.empty()) << "an address the map could not record is not handed out";
  // A name already known still resolves.
  EXPECT_EQ(parsed(ask_udp(at_, query("web.cbtest"))).header.rcode(), 0);
}

TEST_F(ResolverTest, HostedInAnotherLoop) {
  // The supervisor's way: poll fd() with its own fds, run_once() when ready.
  server_ = std::make_unique<TestDnsServer>(any_port("127.0.0.1"), zone);
  NameMap map;
  ResolverOptions o;
  o.listen = {any_port("127.0.0.1")};
  o.upstreams = {server_->endpoint()};
  auto r = Resolver::start(std::move(o), map);
  ASSERT_TRUE(r) << r.error().message;
  Resolver& res = **r;
  Endpoint at = res.listening()[0];
  sockaddr_storage ss;
  socklen_t len = at.to_sockaddr(ss);
  UniqueFd c(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(c.get(), reinterpret_cast<sockaddr*>(&ss), len), 0);
  Bytes q = query("web.cbtest");
  ASSERT_GT(::send(c.get(), q.data(), q.size(), 0), 0);
  Bytes buf(4096);
  ssize_t got = -1;
  for (int i = 0; i < 100 && got < 0; ++i) {
    pollfd fds[2] = {{res.fd(), POLLIN, 0}, {c.get(), POLLIN, 0}};
    poll(fds, 2, 100);
    if (fds[0].revents) res.run_once();
    if (fds[1].revents) got = ::recv(c.get(), buf.data(), buf.size(), 0);
  }
  ASSERT_GT(got, 0);
  EXPECT_EQ(map.addresses_of("web.cbtest").size(), 1u);
  EXPECT_EQ(res.stats().queries, 1u);
}

TEST(ResolverStart, ErrorsAreTheCallers) {
  NameMap map;
  ResolverOptions none;
  none.listen = {Endpoint{*IpAddr::parse("127.0.0.1"), 0}};
  auto r = Resolver::start(none, map);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no upstream resolver to forward to");
  // An address this host does not have.
  ResolverOptions bad;
  bad.listen = {Endpoint{*IpAddr::parse("192.0.2.55"), 0}};
  bad.upstreams = {Endpoint{*IpAddr::parse("127.0.0.1"), 53}};
  auto b = Resolver::start(bad, map);
  ASSERT_FALSE(b);
  EXPECT_TRUE(b.error().message.starts_with("cannot serve DNS on udp 192.0.2.55:0: ")) << b.error().message;
}

}  // namespace
}  // namespace cb::net
