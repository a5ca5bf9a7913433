// The parser on messages real programs sent and a real server answered:
// dig, glibc's getaddrinfo (getent), Python, Node's getaddrinfo and c-ares
// against dnsmasq, recorded by make_captures.sh into captures/*.txt.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "net/dns_wire.h"
#include "net/name_map.h"

namespace cb::net {
namespace {

struct Captured {
  std::string transport, kind;
  std::vector<uint8_t> bytes;
};

std::vector<Captured> load(const std::string& name) {
  std::ifstream in(std::string(COTTONBOX_CAPTURES) + "/" + name + ".txt");
  EXPECT_TRUE(in) << "missing capture " << name << " (tests/net/make_captures.sh makes them)";
  std::vector<Captured> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    Captured c;
    std::string hex;
    s >> c.transport >> c.kind >> hex;
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
      c.bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    out.push_back(std::move(c));
  }
  return out;
}

DnsMessage parsed(const Captured& c) {
  auto r = parse_dns(c.bytes);
  EXPECT_TRUE(r) << c.transport << " " << c.kind << ": " << (r ? "" : r.error().message);
  return r ? std::move(*r) : DnsMessage{};
}

std::vector<std::string> addresses(const DnsMessage& m) {
  std::vector<std::string> out;
  for (const auto& a : follow_chain(m).addresses) out.push_back(a.addr.text());
  return out;
}

TEST(DnsCaptures, EveryMessageParsesAndRebuildsByteForByte) {
  for (const char* name : {"dig_a_cname", "dig_aaaa_tcp", "dig_truncated", "dig_tcp_big", "dig_nxdomain", "dig_txt_mx",
                           "glibc_getent", "python_getaddrinfo", "node_lookup", "node_resolve"}) {
    auto msgs = load(name);
    EXPECT_FALSE(msgs.empty()) << name;
    for (const auto& c : msgs) {
      DnsMessage m = parsed(c);
      EXPECT_EQ(m.header.qr(), c.kind == "response") << name;
      ASSERT_EQ(m.questions.size(), 1u) << name;
      // Queries carry no compression, so the builder writes them back
      // exactly; that checks every field was read.
      if (c.kind == "query") {
        EXPECT_EQ(build_dns(m), c.bytes) << name;
      }
    }
  }
}

TEST(DnsCaptures, DigFollowsACnameToAnAddress) {
  auto msgs = load("dig_a_cname");
  ASSERT_EQ(msgs.size(), 2u);
  DnsMessage q = parsed(msgs[0]);
  EXPECT_EQ(q.questions[0].name.key(), "alias.cbtest");
  EXPECT_EQ(q.questions[0].type, dns_type::A);
  ASSERT_TRUE(q.opt()) << "dig sends EDNS";
  EXPECT_GE(q.udp_limit(), 1232u);
  DnsMessage r = parsed(msgs[1]);
  EXPECT_EQ(r.header.id, q.header.id);
  ChainAnswer chain = follow_chain(r);
  EXPECT_EQ(chain.asked, "alias.cbtest");
  EXPECT_EQ(chain.chain, (std::vector<std::string>{"web.cbtest"}));
  EXPECT_EQ(addresses(r), (std::vector<std::string>{"127.1.0.10"}));
  EXPECT_FALSE(chain.off_chain);
  EXPECT_EQ(r.additional.size(), 1u) << "dnsmasq echoes EDNS";
}

TEST(DnsCaptures, TcpAndAaaa) {
  auto msgs = load("dig_aaaa_tcp");
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].transport, "tcp");
  DnsMessage r = parsed(msgs[1]);
  EXPECT_EQ(addresses(r), (std::vector<std::string>{"fd00:cb::10"}));
}

TEST(DnsCaptures, TruncationOverUdpAndTheWholeAnswerOverTcp) {
  auto udp = load("dig_truncated");
  ASSERT_EQ(udp.size(), 2u);
  DnsMessage q = parsed(udp[0]);
  EXPECT_FALSE(q.opt()) << "+noedns";
  DnsMessage r = parsed(udp[1]);
  EXPECT_TRUE(r.header.tc());
  EXPECT_LE(udp[1].bytes.size(), 512u);
  auto tcp = load("dig_tcp_big");
  ASSERT_EQ(tcp.size(), 2u);
  DnsMessage whole = parsed(tcp[1]);
  EXPECT_FALSE(whole.header.tc());
  EXPECT_EQ(addresses(whole).size(), 40u);
  EXPECT_GT(tcp[1].bytes.size(), 512u);
}

TEST(DnsCaptures, NxdomainAndRecordsWithoutAddresses) {
  auto nx = load("dig_nxdomain");
  DnsMessage r = parsed(nx.at(1));
  EXPECT_EQ(r.header.rcode(), static_cast<int>(Rcode::NxDomain));
  EXPECT_TRUE(addresses(r).empty());
  auto other = load("dig_txt_mx");
  ASSERT_EQ(other.size(), 4u);
  DnsMessage txt = parsed(other[1]);
  ASSERT_FALSE(txt.answers.empty());
  EXPECT_EQ(txt.answers[0].type, dns_type::TXT);
  EXPECT_TRUE(addresses(txt).empty());
  DnsMessage mx = parsed(other[3]);
  ASSERT_FALSE(mx.answers.empty());
  EXPECT_EQ(mx.answers[0].type, dns_type::MX);
  // dnsmasq adds the MX host's address as additional data: not an answer,
  // and the resolver drops it.
  EXPECT_TRUE(addresses(mx).empty());
  EXPECT_FALSE(follow_chain(mx).off_chain);
}

// What each resolver library asks: glibc and Python ask A and AAAA; Node's
// dns.lookup is glibc underneath; its dns.resolve4 is c-ares.
void expect_questions(const std::string& capture, const std::string& name, std::vector<uint16_t> types) {
  std::vector<uint16_t> asked;
  for (const auto& c : load(capture)) {
    DnsMessage m = parsed(c);
    if (c.kind != "query") continue;
    EXPECT_EQ(m.questions[0].name.key(), name) << capture;
    asked.push_back(m.questions[0].type);
  }
  std::sort(asked.begin(), asked.end());
  std::sort(types.begin(), types.end());
  EXPECT_EQ(asked, types) << capture;
}

TEST(DnsCaptures, ResolverLibraries) {
  expect_questions("glibc_getent", "alias.cbtest", {dns_type::A, dns_type::AAAA});
  expect_questions("python_getaddrinfo", "web.cbtest", {dns_type::A, dns_type::AAAA});
  expect_questions("node_lookup", "alias.cbtest", {dns_type::A, dns_type::AAAA});
  expect_questions("node_resolve", "alias.cbtest", {dns_type::A});
  auto glibc = load("glibc_getent");
  std::vector<std::string> all;
  for (const auto& c : glibc)
    if (c.kind == "response")
      for (const auto& a : addresses(parsed(c))) all.push_back(a);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"127.1.0.10", "fd00:cb::10"}));
}

}  // namespace
}  // namespace cb::net
