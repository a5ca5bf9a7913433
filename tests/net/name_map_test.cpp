// The session's name map, the chain an answer follows, and the files that
// name resolvers and hosts.
#include "net/name_map.h"

#include <gtest/gtest.h>

#include <thread>

#include "net/endpoint.h"

namespace cb::net {
namespace {

IpAddr ip(const char* s) { return *IpAddr::parse(s); }

DnsRecord rec(const char* owner, uint16_t type, const char* value, uint32_t ttl = 300) {
  DnsRecord r;
  r.name = *DnsName::from_text(owner);
  r.type = type;
  r.ttl = ttl;
  if (type == dns_type::CNAME)
    r.target = *DnsName::from_text(value);
  else
    r.addr = ip(value);
  return r;
}

DnsMessage response(const char* qname, std::vector<DnsRecord> answers) {
  DnsMessage m;
  m.header.set_qr(true);
  m.questions.push_back({*DnsName::from_text(qname), dns_type::A, kClassIn});
  m.answers = std::move(answers);
  // Through the wire and back, as the resolver sees it.
  return *parse_dns(build_dns(m));
}

TEST(FollowChain, FromTheQuestionThroughCnames) {
  auto m = response(
      "WWW.Example.TEST",
      {rec("www.example.test", dns_type::CNAME, "edge.cdn.test"), rec("EDGE.cdn.test", dns_type::CNAME, "a1.cdn.test"),
       rec("a1.cdn.test", dns_type::A, "192.0.2.1", 20), rec("a1.cdn.test", dns_type::AAAA, "2001:db8::1", 30)});
  ChainAnswer c = follow_chain(m);
  EXPECT_EQ(c.asked, "www.example.test");
  EXPECT_EQ(c.chain, (std::vector<std::string>{"edge.cdn.test", "a1.cdn.test"}));
  ASSERT_EQ(c.addresses.size(), 2u);
  EXPECT_EQ(c.addresses[0].addr.text(), "192.0.2.1");
  EXPECT_EQ(c.addresses[0].ttl, 20u);
  EXPECT_EQ(c.addresses[0].owner, "a1.cdn.test");
  EXPECT_EQ(c.addresses[1].addr.text(), "2001:db8::1");
  EXPECT_FALSE(c.off_chain);
  EXPECT_FALSE(c.loop);
}

TEST(FollowChain, AddressesOffTheChainAreFlagged) {
  // An answer that slips in an address for a name nobody asked about.
  auto m = response("innocent.test", {rec("innocent.test", dns_type::A, "192.0.2.5"),
                                      rec("registry.npmjs.org", dns_type::A, "6.6.6.6")});
  ChainAnswer c = follow_chain(m);
  EXPECT_TRUE(c.off_chain);
  ASSERT_EQ(c.addresses.size(), 1u);
  EXPECT_EQ(c.addresses[0].addr.text(), "192.0.2.5");
  // The same in the authority section.
  DnsMessage a = response("x.test", {});
  a.authority.push_back(rec("x.test", dns_type::A, "192.0.2.6"));
  EXPECT_TRUE(follow_chain(a).off_chain);
  // Glue in the additional section is not an answer, and is not flagged
  // (the resolver drops that section).
  DnsMessage g = response("x.test", {});
  g.additional.push_back(rec("ns.x.test", dns_type::A, "192.0.2.7"));
  EXPECT_FALSE(follow_chain(g).off_chain);
  EXPECT_TRUE(follow_chain(g).addresses.empty());
}

TEST(FollowChain, LoopsAndLongChainsStop) {
  auto m = response("a.test", {rec("a.test", dns_type::CNAME, "b.test"), rec("b.test", dns_type::CNAME, "a.test"),
                               rec("a.test", dns_type::A, "192.0.2.1")});
  EXPECT_TRUE(follow_chain(m).loop);
  std::vector<DnsRecord> longer;
  for (int i = 0; i < 20; ++i)
    longer.push_back(rec(("n" + std::to_string(i) + ".test").c_str(), dns_type::CNAME,
                         ("n" + std::to_string(i + 1) + ".test").c_str()));
  EXPECT_TRUE(follow_chain(response("n0.test", longer)).loop);
}

TEST(NameMap, AnnotatesAnAddressWithWhatTheSessionResolved) {
  NameMap map;
  auto m = response("registry.npmjs.org", {rec("registry.npmjs.org", dns_type::CNAME, "r.cdn.test"),
                                           rec("r.cdn.test", dns_type::A, "104.16.0.35")});
  ASSERT_TRUE(map.add(follow_chain(m), NameOrigin::Dns, 1000));
  ASSERT_TRUE(map.add("other.test", {}, ip("104.16.0.35"), 60, NameOrigin::Dns, 2000));
  NetObject n = make_net_object(NetProto::Tcp, ip("104.16.0.35"), 443);
  map.annotate(n);
  EXPECT_EQ(n.hosts, (std::vector<std::string>{"registry.npmjs.org", "other.test"}));
  EXPECT_EQ(n.names, (std::vector<std::string>{"registry.npmjs.org", "other.test", "r.cdn.test"}));
  // An IPv4-mapped address is the same host.
  NetObject mapped = make_net_object(NetProto::Tcp, ip("::ffff:104.16.0.35"), 443);
  map.annotate(mapped);
  EXPECT_EQ(mapped.hosts.size(), 2u);
  NetObject none = make_net_object(NetProto::Tcp, ip("104.16.0.36"), 443);
  map.annotate(none);
  EXPECT_TRUE(none.hosts.empty());
  EXPECT_TRUE(none.names.empty());
  EXPECT_EQ(map.addresses_of("Registry.NPMJS.org."), (std::vector<IpAddr>{ip("104.16.0.35")}));
  EXPECT_TRUE(map.addresses_of("r.cdn.test").empty()) << "indexed by the name asked";
}

TEST(NameMap, ARepeatUpdatesAndARebindAdds) {
  NameMap map;
  ASSERT_TRUE(map.add("rebind.test", {}, ip("192.0.2.1"), 5, NameOrigin::Dns, 100));
  ASSERT_TRUE(map.add("rebind.test", {}, ip("192.0.2.1"), 4, NameOrigin::Dns, 200));
  ASSERT_EQ(map.size(), 1u);
  auto r = map.lookup(ip("192.0.2.1"));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].answers, 2u);
  EXPECT_EQ(r[0].first_ns, 100);
  EXPECT_EQ(r[0].last_ns, 200);
  EXPECT_EQ(r[0].ttl, 4u);
  // The same name now elsewhere: both addresses keep the name.
  ASSERT_TRUE(map.add("rebind.test", {}, ip("169.254.169.254"), 0, NameOrigin::Dns, 300));
  EXPECT_EQ(map.size(), 2u);
  EXPECT_EQ(map.addresses_of("rebind.test").size(), 2u);
  EXPECT_FALSE(map.add("", {}, ip("1.2.3.4"), 0, NameOrigin::Dns, 0));
  EXPECT_FALSE(map.add("x.test", {}, IpAddr{}, 0, NameOrigin::Dns, 0));
}

TEST(NameMap, AFullMapRefusesWholeAnswers) {
  NameMap map(3);
  ASSERT_TRUE(map.add("a.test", {}, ip("192.0.2.1"), 0, NameOrigin::Dns, 0));
  auto m = response("b.test", {rec("b.test", dns_type::A, "192.0.2.2"), rec("b.test", dns_type::A, "192.0.2.3"),
                               rec("b.test", dns_type::A, "192.0.2.4")});
  EXPECT_FALSE(map.add(follow_chain(m), NameOrigin::Dns, 0));
  EXPECT_EQ(map.size(), 1u) << "all or nothing";
  auto two = response("b.test", {rec("b.test", dns_type::A, "192.0.2.2"), rec("b.test", dns_type::A, "192.0.2.3")});
  EXPECT_TRUE(map.add(follow_chain(two), NameOrigin::Dns, 0));
  EXPECT_TRUE(map.add(follow_chain(two), NameOrigin::Dns, 0)) << "known entries need no room";
  EXPECT_FALSE(map.add("c.test", {}, ip("192.0.2.9"), 0, NameOrigin::Dns, 0));
}

TEST(NameMap, ReadersBesideAWriter) {
  NameMap map;
  std::atomic<bool> done = false;
  std::thread reader([&] {
    while (!done) {
      NetObject n = make_net_object(NetProto::Tcp, ip("10.0.0.1"), 80);
      map.annotate(n);
      EXPECT_LE(n.hosts.size(), 1000u);
    }
  });
  for (int i = 0; i < 1000; ++i) map.add("h" + std::to_string(i) + ".test", {}, ip("10.0.0.1"), 0, NameOrigin::Dns, i);
  done = true;
  reader.join();
  NetObject n = make_net_object(NetProto::Tcp, ip("10.0.0.1"), 80);
  map.annotate(n);
  EXPECT_EQ(n.hosts.size(), 1000u);
}

TEST(HostsFile, ParsesAsGlibcDoes) {
  auto entries = parse_hosts(
      "# comment\n127.0.0.1\tlocalhost\n::1 localhost ip6-localhost  # trailing\n"
      "10.0.0.5 Build.Local build\n\n  \nnot-an-address foo\n192.168.1.300 bad\nfe80::1%eth0 scoped\n"
      "10.0.0.6\n203.0.113.9 last.test");
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].addr.text(), "127.0.0.1");
  EXPECT_EQ(entries[0].names, (std::vector<std::string>{"localhost"}));
  EXPECT_EQ(entries[1].names, (std::vector<std::string>{"localhost", "ip6-localhost"}));
  EXPECT_EQ(entries[2].names, (std::vector<std::string>{"build.local", "build"}));
  EXPECT_EQ(entries[3].addr.text(), "203.0.113.9");
}

TEST(ResolvConf, ServersAndTheSessionsFile) {
  std::string host =
      "# generated\nsearch corp.example lab.example\nnameserver 10.255.255.53\nnameserver ::1  # local\n"
      "nameserver fe80::1%eth0\noptions edns0 rotate timeout:2\n;comment\ndomain corp.example\n";
  auto servers = parse_resolv_conf_servers(host);
  ASSERT_EQ(servers.size(), 2u);
  EXPECT_EQ(servers[0].text(), "10.255.255.53:53");
  EXPECT_EQ(servers[1].text(), "[::1]:53");
  std::string mine = session_resolv_conf(Endpoint{ip("127.0.0.153"), 53}, host);
  EXPECT_EQ(mine,
            "# written by cottonbox: this session resolves names through its supervisor\n"
            "nameserver 127.0.0.153\n"
            "search corp.example lab.example\n"
            "options edns0 timeout:2\n"
            "domain corp.example\n");
  EXPECT_EQ(parse_resolv_conf_servers(mine).size(), 1u);
}

TEST(EndpointParse, Forms) {
  EXPECT_EQ(Endpoint::parse("127.0.0.1")->text(), "127.0.0.1:53");
  EXPECT_EQ(Endpoint::parse("127.0.0.1:5353")->text(), "127.0.0.1:5353");
  EXPECT_EQ(Endpoint::parse("::1")->text(), "[::1]:53");
  EXPECT_EQ(Endpoint::parse("[::1]:5353")->text(), "[::1]:5353");
  EXPECT_EQ(Endpoint::parse("[::ffff:127.0.0.1]:99")->text(), "127.0.0.1:99");
  EXPECT_EQ(Endpoint::parse("10.0.0.1:0")->port, 0);
  for (const char* bad : {"", "x", "1.2.3.4:", "1.2.3.4:99999", "[::1", "[::1]x", "[::1]:", "1.2.3.4:a"})
    EXPECT_FALSE(Endpoint::parse(bad)) << bad;
}

}  // namespace
}  // namespace cb::net
