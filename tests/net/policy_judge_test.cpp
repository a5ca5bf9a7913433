// Which lookups a policy refuses at resolution, and the socket addresses
// the supervisor will describe for connect, bind and sendto.
#include "net/policy_judge.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

#include "net/sockaddr.h"

namespace cb::net {
namespace {

Policy load(const std::string& text) {
  LoadOptions o;
  o.vars = {{"HOME", "/home/u"}};
  auto r = load_policy_text({{"p.yaml", text}}, o);
  EXPECT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  add_self_protection(*r.policy, SelfProtection{{"/home/u/.local/share/cottonbox/audit.db"}, {"/run/cottonbox"}});
  return std::move(*r.policy);
}

LookupVerdict at_question(const Policy& p, const std::string& name) {
  Lookup l;
  l.name = name;
  return judge_lookup(p, l);
}

LookupVerdict at_answer(const Policy& p, const std::string& name, std::vector<std::string> chain,
                        std::vector<const char*> addrs) {
  ChainAnswer a;
  a.asked = name;
  a.chain = std::move(chain);
  for (const char* x : addrs) a.addresses.push_back({*IpAddr::parse(x), 60, name});
  Lookup l;
  l.name = name;
  l.answer = &a;
  return judge_lookup(p, l);
}

const char* const kPolicy = R"(version: 1
default: allow
rules:
  - id: no-metadata
    action: [net.connect, net.send]
    host: [169.254.169.254, metadata.google.internal]
    decision: deny
  - id: registries
    action: net.connect
    host: [registry.npmjs.org]
    decision: allow
  - id: no-evil
    action: net.*
    host: ["*.evil.example"]
    decision: deny
  - id: ssh-only-for-git
    action: net.connect
    host: ["*.forge.example"]
    port: 22
    decision: deny
  - id: curl-not-to-paste
    action: net.connect
    host: [paste.example]
    process: [curl]
    decision: deny
  - id: tunnel
    action: net.send
    host: [tunnel.example]
    decision: deny
)";

TEST(PolicyJudge, RefusesOnlyWhatEveryConnectionWouldBeDenied) {
  Policy p = load(kPolicy);
  EXPECT_EQ(at_question(p, "metadata.google.internal"), LookupVerdict::Refuse);
  EXPECT_EQ(at_question(p, "x.evil.example"), LookupVerdict::Refuse);
  EXPECT_EQ(at_question(p, "a.b.evil.example"), LookupVerdict::Refuse);
  EXPECT_EQ(at_question(p, "evil.example"), LookupVerdict::Allow) << "'*.' is below the name only";
  EXPECT_EQ(at_question(p, "registry.npmjs.org"), LookupVerdict::Allow);
  // Denied on one port, or for one process: other connections may be fine.
  EXPECT_EQ(at_question(p, "git.forge.example"), LookupVerdict::Allow);
  EXPECT_EQ(at_question(p, "paste.example"), LookupVerdict::Allow);
  // Only net.send is denied: a connect may still be allowed.
  EXPECT_EQ(at_question(p, "tunnel.example"), LookupVerdict::Allow);
  EXPECT_EQ(at_question(p, "example.com"), LookupVerdict::Allow);
}

TEST(PolicyJudge, TheAnswerIsJudgedAgain) {
  Policy p = load(kPolicy);
  // A name that resolves to a denied address (rebinding to the metadata service).
  EXPECT_EQ(at_answer(p, "rebind.test", {}, {"169.254.169.254"}), LookupVerdict::Refuse);
  EXPECT_EQ(at_answer(p, "rebind.test", {}, {"192.0.2.1", "::ffff:169.254.169.254"}), LookupVerdict::Refuse);
  EXPECT_EQ(at_answer(p, "fine.test", {}, {"192.0.2.1"}), LookupVerdict::Allow);
  // A chain into a denied name.
  EXPECT_EQ(at_answer(p, "innocent.test", {"x.evil.example"}, {"192.0.2.9"}), LookupVerdict::Refuse);
  // A chain into an allowed name allows nothing more: the name asked decides.
  EXPECT_EQ(at_answer(p, "registry.npmjs.org", {"r.cdn.test"}, {"104.16.0.35"}), LookupVerdict::Allow);
}

TEST(PolicyJudge, AnEarlierRuleThatMayAllowWins) {
  Policy p = load(R"(version: 1
rules:
  - id: log-all
    action: net.*
    decision: log
  - id: no-evil
    action: net.connect
    host: ["*.evil.example"]
    decision: deny
)");
  EXPECT_EQ(at_question(p, "x.evil.example"), LookupVerdict::Allow) << "every connection matches log-all first";
  Policy q = load(R"(version: 1
rules:
  - id: api
    action: net.connect
    host: [api.evil.example]
    port: 443
    decision: allow
  - id: no-evil
    action: net.connect
    host: ["*.evil.example"]
    decision: deny
)");
  EXPECT_EQ(at_question(q, "api.evil.example"), LookupVerdict::Allow);
  EXPECT_EQ(at_question(q, "www.evil.example"), LookupVerdict::Refuse);
  Policy by_addr = load(R"(version: 1
rules:
  - id: lan
    action: net.connect
    host: [10.0.0.0/8]
    decision: allow
  - id: no-evil
    action: net.connect
    host: ["*.evil.example"]
    decision: deny
)");
  // At the question the address is unknown, so the allowance may apply.
  EXPECT_EQ(at_question(by_addr, "x.evil.example"), LookupVerdict::Allow);
  EXPECT_EQ(at_answer(by_addr, "x.evil.example", {}, {"10.1.2.3"}), LookupVerdict::Allow);
  EXPECT_EQ(at_answer(by_addr, "x.evil.example", {}, {"192.0.2.1"}), LookupVerdict::Refuse);
}

std::vector<uint8_t> bytes_of(const void* p, size_t n) {
  auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

TEST(DescribeSockaddr, EveryFamily) {
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  v4.sin_port = htons(443);
  inet_pton(AF_INET, "203.0.113.7", &v4.sin_addr);
  SocketTarget t = describe_sockaddr(bytes_of(&v4, sizeof v4), SOCK_STREAM);
  EXPECT_EQ(t.path, "tcp:203.0.113.7:443");
  EXPECT_EQ(t.net.proto, NetProto::Tcp);
  EXPECT_EQ(t.net.port, 443);
  EXPECT_EQ(describe_sockaddr(bytes_of(&v4, sizeof v4), SOCK_DGRAM).path, "udp:203.0.113.7:443");

  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(53);
  inet_pton(AF_INET6, "2001:db8::1", &v6.sin6_addr);
  EXPECT_EQ(describe_sockaddr(bytes_of(&v6, sizeof v6), SOCK_DGRAM).path, "udp:[2001:db8::1]:53");
  // The mapped form is the IPv4 host, in the object and in the path.
  inet_pton(AF_INET6, "::ffff:169.254.169.254", &v6.sin6_addr);
  SocketTarget m = describe_sockaddr(bytes_of(&v6, sizeof v6), SOCK_STREAM);
  EXPECT_EQ(m.path, "tcp:169.254.169.254:53");
  EXPECT_EQ(m.net.addr.family, 4);

  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  strcpy(un.sun_path, "/run/docker.sock");
  EXPECT_EQ(describe_sockaddr(bytes_of(&un, offsetof(sockaddr_un, sun_path) + 17), SOCK_STREAM).path,
            "unix:/run/docker.sock");
  memcpy(un.sun_path, "\0abstract", 9);
  SocketTarget abs = describe_sockaddr(bytes_of(&un, offsetof(sockaddr_un, sun_path) + 9), SOCK_STREAM);
  EXPECT_EQ(abs.path, "unix:@abstract");
  EXPECT_EQ(abs.net.proto, NetProto::Unix);
  EXPECT_EQ(describe_sockaddr(bytes_of(&un, sizeof(sa_family_t)), SOCK_DGRAM).path, "unix:");

  // Too short for its family, and other families.
  EXPECT_EQ(describe_sockaddr(bytes_of(&v4, 8), SOCK_STREAM).path, "family:2");
  EXPECT_EQ(describe_sockaddr(bytes_of(&v4, 8), SOCK_STREAM).net.proto, NetProto::Other);
  uint16_t netlink = AF_NETLINK;
  EXPECT_EQ(describe_sockaddr(bytes_of(&netlink, 2), SOCK_RAW).path, "family:16");
  EXPECT_EQ(describe_sockaddr({}, SOCK_STREAM).path, "family:0");
  // The path reads back to the same object.
  EXPECT_EQ(net_object_from_path(m.path).addr, m.net.addr);
  EXPECT_EQ(net_object_from_path(t.path).port, t.net.port);
}

}  // namespace
}  // namespace cb::net
