// Rules on the network: addresses, CIDR blocks, host-name patterns and
// ports as `host:`/`port:` and as `when:` fields; read(@list) taints; every
// error message with its file:line:col.
#include <gtest/gtest.h>

#include <string>

#include "policy/netaddr.h"
#include "policy/policy.h"

namespace cb {
namespace {

// ---------------------------------------------------------------- values

IpAddr ip(const std::string& text) {
  auto a = IpAddr::parse(text);
  EXPECT_TRUE(a) << text;
  return a.value_or(IpAddr{});
}

TEST(NetAddr, ParsesAndPrintsAddresses) {
  EXPECT_EQ(ip("203.0.113.7").family, 4);
  EXPECT_EQ(ip("203.0.113.7").text(), "203.0.113.7");
  EXPECT_EQ(ip("0.0.0.0").text(), "0.0.0.0");
  EXPECT_EQ(ip("2001:DB8::1").text(), "2001:db8::1");
  EXPECT_EQ(ip("[2001:db8::1]").text(), "2001:db8::1");
  EXPECT_EQ(ip("::1").family, 6);
  EXPECT_TRUE(ip("::1").loopback());
  EXPECT_TRUE(ip("127.3.2.1").loopback());
  EXPECT_FALSE(ip("128.0.0.1").loopback());
  // An IPv4-mapped address is the IPv4 host: one spelling for one host.
  EXPECT_EQ(ip("::ffff:169.254.169.254"), ip("169.254.169.254"));
  EXPECT_EQ(ip("::ffff:a9fe:a9fe").text(), "169.254.169.254");
  EXPECT_EQ(ip("::FFFF:10.0.0.1").family, 4);
  // ...but not the deprecated IPv4-compatible form nor NAT64: other hosts.
  EXPECT_EQ(ip("::10.0.0.1").family, 6);
  EXPECT_EQ(ip("64:ff9b::a00:1").family, 6);
  for (const char* bad : {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.04", "1.2.3.4 ", "1..2.3",
                          "localhost", "fe80::1%eth0", ":::", "1.2.3.-1", "[::1", "0x7f.0.0.1", "2130706433"})
    EXPECT_FALSE(IpAddr::parse(bad)) << bad;
}

TEST(NetAddr, V6ConstructorFoldsMappedAddresses) {
  uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
  IpAddr a = IpAddr::v6(mapped);
  EXPECT_EQ(a.family, 4);
  EXPECT_EQ(a.text(), "10.1.2.3");
  mapped[10] = 0xfe;
  EXPECT_EQ(IpAddr::v6(mapped).family, 6);
}

HostPattern host(const std::string& text) {
  NetParseError e;
  auto h = parse_host_pattern(text, &e);
  EXPECT_TRUE(h) << text << ": " << e.message;
  return h.value_or(HostPattern{});
}

void host_error(const std::string& text, size_t offset, const std::string& message) {
  NetParseError e;
  EXPECT_FALSE(parse_host_pattern(text, &e)) << text;
  EXPECT_EQ(e.message, message) << text;
  EXPECT_EQ(e.offset, offset) << text;
}

TEST(HostPattern, NamesMatchExactlyAndWithoutCase) {
  HostPattern h = host("Registry.NPMJS.org.");
  EXPECT_EQ(h.kind, HostPattern::Kind::Name);
  EXPECT_EQ(h.text, "registry.npmjs.org");
  EXPECT_TRUE(h.match_name("registry.npmjs.org"));
  EXPECT_FALSE(h.match_name("xregistry.npmjs.org"));
  EXPECT_FALSE(h.match_name("registry.npmjs.org.evil.com"));
  EXPECT_FALSE(h.match_name("a.registry.npmjs.org"));
  EXPECT_FALSE(h.match_name("npmjs.org"));
  EXPECT_FALSE(h.match_name(""));
  EXPECT_FALSE(h.match_addr(ip("1.2.3.4")));
}

TEST(HostPattern, LeadingStarMatchesAnyDepthOfSubdomainsOnly) {
  HostPattern h = host("*.github.com");
  EXPECT_EQ(h.text, "*.github.com");
  EXPECT_TRUE(h.match_name("api.github.com"));
  EXPECT_TRUE(h.match_name("a.b.c.github.com"));
  EXPECT_FALSE(h.match_name("github.com"));
  EXPECT_FALSE(h.match_name("evilgithub.com"));
  EXPECT_FALSE(h.match_name("github.com.evil.com"));
  EXPECT_FALSE(h.match_name("api.github.co"));
  // A name whose label holds an escaped dot is one label, not two.
  EXPECT_FALSE(host("*.b.com").match_name("a\\.b.com"));
  EXPECT_TRUE(host("*.b.com").match_name("x.a\\.b.b.com"));
}

TEST(HostPattern, StarInsideALabelStaysInThatLabel) {
  HostPattern h = host("registry*.npmjs.org");
  EXPECT_TRUE(h.match_name("registry.npmjs.org"));
  EXPECT_TRUE(h.match_name("registry-eu.npmjs.org"));
  EXPECT_FALSE(h.match_name("registry.x.npmjs.org"));
  HostPattern mid = host("api.*.example.com");
  EXPECT_TRUE(mid.match_name("api.eu.example.com"));
  EXPECT_FALSE(mid.match_name("api.a.b.example.com"));
  EXPECT_FALSE(mid.match_name("api.example.com"));
  HostPattern any = host("*");
  EXPECT_TRUE(any.match_name("localhost"));
  EXPECT_TRUE(any.match_name("a.b"));
  EXPECT_FALSE(any.match_name(""));
}

TEST(HostPattern, AddressesAndBlocks) {
  HostPattern one = host("169.254.169.254");
  EXPECT_EQ(one.kind, HostPattern::Kind::Address);
  EXPECT_EQ(one.text, "169.254.169.254");
  EXPECT_TRUE(one.match_addr(ip("169.254.169.254")));
  EXPECT_TRUE(one.match_addr(ip("::ffff:169.254.169.254")));
  EXPECT_FALSE(one.match_addr(ip("169.254.169.253")));
  EXPECT_FALSE(one.match_name("169.254.169.254"));

  HostPattern block = host("10.0.0.0/8");
  EXPECT_EQ(block.text, "10.0.0.0/8");
  EXPECT_TRUE(block.match_addr(ip("10.255.1.2")));
  EXPECT_FALSE(block.match_addr(ip("11.0.0.0")));
  EXPECT_FALSE(block.match_addr(ip("::a00:1")));

  HostPattern odd = host("192.168.4.0/22");
  EXPECT_TRUE(odd.match_addr(ip("192.168.7.255")));
  EXPECT_FALSE(odd.match_addr(ip("192.168.8.0")));

  HostPattern v6 = host("[fd00:ec2::254]");
  EXPECT_EQ(v6.text, "fd00:ec2::254");
  EXPECT_TRUE(v6.match_addr(ip("fd00:ec2::254")));
  EXPECT_FALSE(v6.match_addr(ip("fd00:ec2::255")));
  HostPattern v6block = host("2001:db8::/32");
  EXPECT_TRUE(v6block.match_addr(ip("2001:db8:ffff::1")));
  EXPECT_FALSE(v6block.match_addr(ip("2001:db9::1")));

  // A block of mapped addresses is the IPv4 block.
  HostPattern mapped = host("::ffff:10.0.0.0/104");
  EXPECT_EQ(mapped.text, "10.0.0.0/8");
  EXPECT_TRUE(mapped.match_addr(ip("10.9.9.9")));
  EXPECT_EQ(host("::ffff:127.0.0.1").text, "127.0.0.1");

  HostPattern all4 = host("0.0.0.0/0");
  EXPECT_TRUE(all4.match_addr(ip("8.8.8.8")));
  EXPECT_FALSE(all4.match_addr(ip("::1")));
  HostPattern all6 = host("::/0");
  EXPECT_TRUE(all6.match_addr(ip("::1")));
  EXPECT_FALSE(all6.match_addr(ip("8.8.8.8")));
}

TEST(HostPattern, EveryErrorMessage) {
  host_error("", 0, "empty host; write a name (example.com, *.example.com) or an address (10.0.0.0/8)");
  host_error("example.com:443", 11, "'example.com:443' holds a port; write the host alone and the port in 'port: 443'");
  host_error("10.0.0.1:22", 8, "'10.0.0.1:22' holds a port; write the host alone and the port in 'port: 22'");
  host_error("[::1]:8080", 5, "'[::1]:8080' holds a port; write the host alone and the port in 'port: 8080'");
  host_error("1.2.3", 0,
             "'1.2.3' is not an IP address (an IPv4 address is four numbers 0-255 without leading zeros, e.g. "
             "10.0.0.1)");
  host_error("010.0.0.1", 0,
             "'010.0.0.1' is not an IP address (an IPv4 address is four numbers 0-255 without leading zeros, e.g. "
             "10.0.0.1)");
  host_error("fe80::1%eth0", 0, "'fe80::1%eth0' is not an IP address");
  host_error("[::1", 0, "'[' without a closing ']' in '[::1'");
  host_error("10.0.0.0/", 9, "the prefix length after '/' must be a number");
  host_error("10.0.0.0/x8", 9, "the prefix length after '/' must be a number");
  host_error("10.0.0.0/33", 9, "prefix length 33 is longer than 32");
  host_error("::/129", 3, "prefix length 129 is longer than 128");
  host_error("10.0.0.1/8", 0, "'10.0.0.1/8' has bits set past the prefix; did you mean 10.0.0.0/8?");
  host_error("2001:db8::1/32", 0, "'2001:db8::1/32' has bits set past the prefix; did you mean 2001:db8::/32?");
  host_error("::ffff:10.0.0.0/64", 16,
             "a block of IPv4-mapped addresses needs a prefix of at least 96 (64 reaches beyond ::ffff:0:0/96); "
             "write the IPv4 block instead");
  host_error("exa mple.com", 3,
             "' ' cannot appear in a host name (letters, digits, '-', '_' and '*'; write an internationalized name "
             "in its xn-- form)");
  host_error("*.exam/ple.com", 6,
             "'/' cannot appear in a host name (letters, digits, '-', '_' and '*'; write an internationalized name "
             "in its xn-- form)");
  host_error(
      "b\xc3\xbc"
      "cher.de",
      1,
      "a byte outside printable ASCII cannot appear in a host name (letters, digits, '-', '_' and '*'; write "
      "an internationalized name in its xn-- form)");
  host_error("a..b", 2, "empty label in host name 'a..b' ('..' or a leading '.')");
  host_error(".a.b", 0, "empty label in host name '.a.b' ('..' or a leading '.')");
  host_error("**.github.com", 0, "'**' is not a host pattern; a leading '*.' already matches any number of labels");
  host_error(std::string(64, 'a') + ".com", 0, "a label of a host name has at most 63 characters");
  std::string long_name;
  for (int i = 0; i < 64; ++i) long_name += "abc.";
  host_error(long_name + "com", 0, "host name longer than 253 characters");
}

PortRange port(const std::string& text) {
  NetParseError e;
  auto p = parse_port_range(text, &e);
  EXPECT_TRUE(p) << text << ": " << e.message;
  return p.value_or(PortRange{});
}

void port_error(const std::string& text, size_t offset, const std::string& message) {
  NetParseError e;
  EXPECT_FALSE(parse_port_range(text, &e)) << text;
  EXPECT_EQ(e.message, message) << text;
  EXPECT_EQ(e.offset, offset) << text;
}

TEST(PortRange, NumbersRangesAndErrors) {
  EXPECT_EQ(port("443").text(), "443");
  EXPECT_TRUE(port("443").contains(443));
  EXPECT_FALSE(port("443").contains(444));
  PortRange r = port("8000-8999");
  EXPECT_EQ(r.text(), "8000-8999");
  EXPECT_TRUE(r.contains(8000));
  EXPECT_TRUE(r.contains(8999));
  EXPECT_FALSE(r.contains(7999));
  EXPECT_FALSE(r.contains(9000));
  EXPECT_TRUE(port("0").contains(0));
  EXPECT_TRUE(port("0-65535").contains(65535));
  port_error("", 0, "empty port; write a number (443) or a range (8000-8999)");
  port_error("*", 0, "leave 'port' out to match any port");
  port_error("https", 0, "'https' is not a port number; did you mean 443?");
  port_error("ssh", 0, "'ssh' is not a port number; did you mean 22?");
  port_error("44x", 0, "'44x' is not a port; write a number (443) or a range (8000-8999)");
  port_error("-5", 0, "'-5' is not a port; write a number (443) or a range (8000-8999)");
  port_error("80-", 3, "'80-' is not a port; write a number (443) or a range (8000-8999)");
  port_error("65536", 0, "port 65536 is larger than 65535");
  port_error("1-999999", 2, "port 999999 is larger than 65535");
  port_error("9000-8000", 5, "the range 9000-8000 ends before it starts");
}

// ---------------------------------------------------------------- loading

LoadOptions options() {
  LoadOptions o;
  o.vars = {{"CWD", "/home/u/p"}, {"HOME", "/home/u"}, {"META", "169.254.169.254"}};
  return o;
}

LoadResult load(const std::string& text) { return load_policy_text({{"p.yaml", text}}, options()); }

Policy load_ok(const std::string& text) {
  auto r = load(text);
  EXPECT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  return r.policy ? std::move(*r.policy) : Policy{};
}

void expect_error(const std::string& text, const std::string& expected) {
  auto r = load(text);
  EXPECT_FALSE(r.policy) << text;
  ASSERT_EQ(r.errors.size(), 1u) << (r.errors.size() > 1 ? format_diagnostic(r.errors[1]) : "");
  EXPECT_EQ(format_diagnostic(r.errors[0]), expected);
}

const std::string kHead = "version: 1\nrules:\n";

TEST(NetLoader, NewActionsAndGroups) {
  EXPECT_EQ(parse_action("net.send"), Action::NetSend);
  EXPECT_EQ(parse_action("net.listen"), Action::NetListen);
  EXPECT_EQ(action_object(Action::NetSend), ObjectKind::Address);
  EXPECT_EQ(action_object(Action::NetListen), ObjectKind::Address);
  EXPECT_EQ(parse_action_or_group("net.*"),
            bit(Action::NetConnect) | bit(Action::NetBind) | bit(Action::NetSend) | bit(Action::NetListen));
  expect_error(kHead + "  - {id: a, action: net.sendto, decision: deny}\n",
               "p.yaml:3:21: error: unknown action 'net.sendto'; did you mean 'net.send'?");
  expect_error(kHead + "  - {id: a, action: net.listn, decision: deny}\n",
               "p.yaml:3:21: error: unknown action 'net.listn'; did you mean 'net.listen'?");
}

TEST(NetLoader, HostsAndPortsCompile) {
  Policy p = load_ok(kHead + R"(  - id: registries
    action: [net.connect]
    host: [registry.npmjs.org, "*.github.com", "${META}", "::ffff:10.0.0.0/104", "[::1]"]
    port: [443, "8000-8999"]
    decision: allow
  - id: one
    action: net.*
    host: localhost
    port: 53
    decision: log
)");
  const Rule& r = p.rules[0];
  std::vector<std::string> hosts;
  for (const auto& h : r.hosts) hosts.push_back(h.text);
  EXPECT_EQ(hosts,
            (std::vector<std::string>{"registry.npmjs.org", "*.github.com", "169.254.169.254", "10.0.0.0/8", "::1"}));
  ASSERT_EQ(r.ports.size(), 2u);
  EXPECT_EQ(r.ports[1].text(), "8000-8999");
  EXPECT_EQ(p.rules[1].hosts.size(), 1u);
  std::string d = describe_rule(r);
  EXPECT_NE(d.find("  hosts:    registry.npmjs.org, *.github.com, 169.254.169.254, 10.0.0.0/8, ::1\n"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("  ports:    443, 8000-8999\n"), std::string::npos) << d;
}

TEST(NetLoader, EveryErrorAtItsPlace) {
  expect_error(kHead + "  - {id: a, action: net.connect, host: 'evil.com:443', decision: deny}\n",
               "p.yaml:3:49: error: 'evil.com:443' holds a port; write the host alone and the port in 'port: 443'");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    host: [ok.com, 'bad..com']\n    decision: deny\n",
               "p.yaml:5:25: error: empty label in host name 'bad..com' ('..' or a leading '.')");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    host: 10.0.0.1/8\n    decision: deny\n",
               "p.yaml:5:11: error: '10.0.0.1/8' has bits set past the prefix; did you mean 10.0.0.0/8?");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    host: 10.0.0.0/40\n    decision: deny\n",
               "p.yaml:5:20: error: prefix length 40 is longer than 32");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    port: [443, https]\n    decision: deny\n",
               "p.yaml:5:17: error: 'https' is not a port number; did you mean 443?");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    port: 9000-80\n    decision: deny\n",
               "p.yaml:5:16: error: the range 9000-80 ends before it starts");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    port: 70000\n    decision: deny\n",
               "p.yaml:5:11: error: port 70000 is larger than 65535");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    host: []\n    decision: deny\n",
               "p.yaml:5:11: error: 'host' is an empty list; leave it out to match any host");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    port: []\n    decision: deny\n",
               "p.yaml:5:11: error: 'port' is an empty list; leave it out to match any port");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    host: {a: 1}\n    decision: deny\n",
               "p.yaml:5:11: error: 'host' must be a string or a list of strings");
  expect_error(kHead + "  - id: a\n    action: [file.write, net.connect]\n    host: x.com\n    decision: deny\n",
               "p.yaml:5:5: error: 'host' applies only to network actions (net.connect, net.send, net.bind, "
               "net.listen); this rule also names file.write");
  expect_error(kHead + "  - id: a\n    action: '*'\n    port: 22\n    decision: deny\n",
               "p.yaml:5:5: error: 'port' applies only to network actions (net.connect, net.send, net.bind, "
               "net.listen); this rule also names file.read, file.write, file.create, ...");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    host: '${NOPE}'\n    decision: deny\n",
               "p.yaml:5:12: error: undefined variable '${NOPE}' (set it with --var NOPE=VALUE)");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    hosts: x.com\n    decision: deny\n",
               "p.yaml:5:5: error: unknown key 'hosts' in rule; did you mean 'host'?");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    ports: 22\n    decision: deny\n",
               "p.yaml:5:5: error: unknown key 'ports' in rule; did you mean 'port'?");
}

TEST(NetLoader, HostListsExpand) {
  Policy p = load_ok(R"(version: 1
lists:
  forges: [github.com, "*.github.com", "@mirrors"]
  mirrors: [10.20.0.0/16]
rules:
  - {id: a, action: net.connect, host: ["@forges", gitlab.com], decision: allow}
)");
  std::vector<std::string> hosts;
  for (const auto& h : p.rules[0].hosts) hosts.push_back(h.text);
  EXPECT_EQ(hosts, (std::vector<std::string>{"github.com", "*.github.com", "10.20.0.0/16", "gitlab.com"}));
  expect_error("version: 1\nlists:\n  forges: [github.com]\n" + kHead.substr(11) +
                   "  - {id: a, action: net.connect, host: ['@forge'], decision: allow}\n",
               "p.yaml:5:41: error: unknown list '@forge'; did you mean 'forges'?");
  expect_error("version: 1\nlists:\n  forges: ['git hub.com']\n" + kHead.substr(11) +
                   "  - {id: a, action: net.connect, host: ['@forges'], decision: allow}\n",
               "p.yaml:5:41: error: list '@forges' has 'git hub.com': ' ' cannot appear in a host name (letters, "
               "digits, '-', '_' and '*'; write an internationalized name in its xn-- form)");
}

// ---------------------------------------------------------------- deciding

Event net_event(Action a, NetProto proto, const std::string& addr, uint16_t port, std::vector<std::string> hosts = {},
                std::vector<std::string> chain = {}) {
  Event e;
  e.action = a;
  IpAddr ipa = ip(addr);
  e.net = make_net_object(proto, ipa, port);
  std::string shown = ipa.family == 6 ? "[" + ipa.text() + "]" : ipa.text();
  e.path = std::string(net_proto_name(proto)) + ":" + shown + ":" + std::to_string(port);
  e.net.hosts = hosts;
  e.net.names = hosts;
  e.net.names.insert(e.net.names.end(), chain.begin(), chain.end());
  auto p = std::make_shared<ProcessInfo>();
  p->pid = 7;
  p->comm = "node";
  p->exe = "/usr/bin/node";
  e.proc = p;
  return e;
}

const char* const kNetPolicy = R"(version: 1
default: allow
rules:
  - id: no-metadata
    action: net.*
    host: [169.254.169.254, "fd00:ec2::254", metadata.google.internal]
    decision: deny
  - id: no-evil
    action: [net.connect, net.send]
    host: ["*.evil.example"]
    decision: deny
  - id: registries
    action: net.connect
    host: [registry.npmjs.org, "*.github.com"]
    port: 443
    decision: allow
  - id: local-dev
    action: [net.connect, net.bind, net.listen]
    host: [127.0.0.0/8, "::1"]
    port: ["3000-3999", "8000-8999"]
    decision: allow
  - id: unknown-https
    action: net.connect
    port: 443
    when: not net.resolved
    decision: ask
  - id: other
    action: [net.connect, net.send]
    host: ["0.0.0.0/0", "::/0"]
    decision: ask
)";

TEST(NetDecide, AddressesBlocksAndMappedAddresses) {
  Policy p = load_ok(kNetPolicy);
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "169.254.169.254", 80)).rule_id, "no-metadata");
  // The same host written as an IPv4-mapped IPv6 address by an AF_INET6 socket.
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "::ffff:169.254.169.254", 80)).rule_id,
            "no-metadata");
  EXPECT_EQ(decide(p, net_event(Action::NetSend, NetProto::Udp, "fd00:ec2::254", 53)).rule_id, "no-metadata");
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "127.0.0.1", 3000)).rule_id, "local-dev");
  EXPECT_EQ(decide(p, net_event(Action::NetListen, NetProto::Tcp, "::1", 8999)).rule_id, "local-dev");
  EXPECT_EQ(decide(p, net_event(Action::NetBind, NetProto::Tcp, "127.0.0.1", 9000)).decision, Decision::Allow);
  EXPECT_EQ(decide(p, net_event(Action::NetBind, NetProto::Tcp, "127.0.0.1", 9000)).rule_id, "");
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "192.0.2.1", 22)).rule_id, "other");
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "2001:db8::1", 22)).rule_id, "other");
}

TEST(NetDecide, NamesComeFromTheSessionsResolutions) {
  Policy p = load_ok(kNetPolicy);
  // Resolved by this session: the name rule holds on that address only.
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org"})).rule_id,
            "registries");
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "140.82.112.3", 443, {"api.GitHub.com"})).rule_id,
            "other")
      << "names arrive normalized; an unnormalized one matches nothing";
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "140.82.112.3", 443, {"api.github.com"})).rule_id,
            "registries");
  // The same address with no name the session resolved: not the registry.
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443)).rule_id, "unknown-https");
  // The port is part of the rule.
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 80, {"registry.npmjs.org"})).rule_id,
            "other");
  // A resolved name the rules do not list.
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "93.184.216.34", 443, {"example.com"})).rule_id,
            "other");
  EXPECT_EQ(
      decide(p, net_event(Action::NetConnect, NetProto::Tcp, "10.1.1.1", 80, {"metadata.google.internal"})).rule_id,
      "no-metadata");
}

TEST(NetDecide, CnameChainsReachDenialsButNotAllowances) {
  Policy p = load_ok(kNetPolicy);
  // innocent.test -> CNAME x.evil.example -> 198.51.100.9: the denial holds.
  auto e = net_event(Action::NetConnect, NetProto::Tcp, "198.51.100.9", 443, {"innocent.test"}, {"x.evil.example"});
  EXPECT_EQ(decide(p, e).rule_id, "no-evil");
  // x.attacker.test -> CNAME registry.npmjs.org: only the name asked for can
  // allow, so this falls through to the ask.
  e = net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"x.attacker.test"}, {"registry.npmjs.org"});
  EXPECT_EQ(decide(p, e).rule_id, "other");
  // registry.npmjs.org -> CNAME its CDN name: allowed by the name asked.
  e = net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org"}, {"cdn.cloudflare.test"});
  EXPECT_EQ(decide(p, e).rule_id, "registries");
  // Two names for one address (a shared CDN address): one denied name is enough to deny.
  e = net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org", "a.evil.example"});
  EXPECT_EQ(decide(p, e).rule_id, "no-evil");
}

TEST(NetDecide, HostAndPortRulesNeverMatchUnixSocketsOrOtherActions) {
  Policy p = load_ok(kNetPolicy + std::string(R"(  - id: unix-by-path
    action: net.connect
    path: ["unix:/run/docker.sock"]
    decision: deny
)"));
  Event u;
  u.action = Action::NetConnect;
  u.path = "unix:/run/docker.sock";
  u.net.proto = NetProto::Unix;
  EXPECT_EQ(decide(p, u).rule_id, "unix-by-path");
  Event f;
  f.action = Action::FileWrite;
  f.path = "/tmp/x";
  EXPECT_EQ(decide(p, f).rule_id, "");
  // A net event whose producer gave no object: its address is read from
  // its path (names are then unknown).
  Event bare;
  bare.action = Action::NetConnect;
  bare.path = "tcp:[::ffff:169.254.169.254]:80";
  EXPECT_EQ(decide(p, bare).rule_id, "no-metadata");
  bare.path = "tcp:127.0.0.1:8000";
  EXPECT_EQ(decide(p, bare).rule_id, "local-dev");
  bare.path = "unix:/run/docker.sock";
  EXPECT_EQ(decide(p, bare).rule_id, "unix-by-path");
}

TEST(NetDecide, CombinedWithProcessAndWhen) {
  Policy p = load_ok(R"(version: 1
default: deny
rules:
  - id: curl-to-forge
    action: net.connect
    host: ["*.example.org"]
    port: 443
    process: [curl]
    when: 'net.proto == "tcp" and net.port == 443 and "www.example.org" in net.host'
    decision: allow
  - id: dns
    action: net.send
    port: 53
    when: net.addr == "127.0.0.53"
    decision: allow
  - id: loopback-by-field
    action: net.connect
    when: 'net.addr startswith "127." and net.port >= 1024 and net.names matches "*.test"'
    decision: allow
)");
  auto e = net_event(Action::NetConnect, NetProto::Tcp, "93.184.216.34", 443, {"www.example.org"});
  EXPECT_EQ(decide(p, e).decision, Decision::Deny) << "node is not curl";
  auto curl = std::make_shared<ProcessInfo>(*e.proc);
  curl->comm = "curl";
  curl->names = {"curl"};  // its identity (policy/identity.h)
  e.proc = curl;
  EXPECT_EQ(decide(p, e).rule_id, "curl-to-forge");
  e.net.hosts = {"api.example.org"};
  e.net.names = e.net.hosts;
  EXPECT_EQ(decide(p, e).decision, Decision::Deny) << "the when: names www.example.org";
  EXPECT_EQ(decide(p, net_event(Action::NetSend, NetProto::Udp, "127.0.0.53", 53)).rule_id, "dns");
  EXPECT_EQ(decide(p, net_event(Action::NetSend, NetProto::Udp, "127.0.0.54", 53)).decision, Decision::Deny);
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "127.0.0.1", 8080, {}, {"svc.test"})).rule_id,
            "loopback-by-field");
  EXPECT_EQ(decide(p, net_event(Action::NetConnect, NetProto::Tcp, "127.0.0.1", 80, {}, {"svc.test"})).decision,
            Decision::Deny);
}

TEST(NetDecide, SelfProtectionCoversDatagramsToTheControlSocket) {
  Policy p = load_ok("version: 1\ndefault: allow\n");
  add_self_protection(p, SelfProtection{{}, {"/run/cottonbox"}});
  Event e;
  e.action = Action::NetSend;
  e.path = "unix:/run/cottonbox/ctl.sock";
  e.net.proto = NetProto::Unix;
  Verdict v = decide(p, e);
  EXPECT_EQ(v.decision, Decision::Deny);
  EXPECT_TRUE(v.builtin);
}

// ---------------------------------------------------------------- taint

const char* const kTaintPolicy = R"(version: 1
default: allow
lists:
  secrets: ["${HOME}/.ssh/**", "${HOME}/.aws/**", "**/.env", "@keyrings"]
  keyrings: ["${HOME}/.local/share/keyrings/**"]
  registries: [registry.npmjs.org]
rules:
  - id: exfil
    action: [net.connect, net.send]
    when: 'read(@secrets) and not (net.host contains "registry.npmjs.org")'
    decision: ask
  - id: keyring-readers
    action: net.connect
    when: read(@keyrings)
    decision: deny
)";

TEST(Taint, ListsBecomeBitsAndPathsMapToThem) {
  Policy p = load_ok(kTaintPolicy);
  ASSERT_EQ(p.taints.size(), 2u);
  EXPECT_EQ(p.taints[0].name, "secrets");
  EXPECT_EQ(p.taints[1].name, "keyrings");
  EXPECT_EQ(p.taints[0].paths.size(), 4u) << "@keyrings is expanded inside @secrets";
  EXPECT_EQ(taint_bits(p, "/home/u/.ssh/id_ed25519"), 1u);
  EXPECT_EQ(taint_bits(p, "/home/u/.aws/credentials"), 1u);
  EXPECT_EQ(taint_bits(p, "/home/u/p/.env"), 1u);
  EXPECT_EQ(taint_bits(p, "/home/u/.local/share/keyrings/login.keyring"), 3u);
  EXPECT_EQ(taint_bits(p, "/home/u/p/src/main.c"), 0u);
  EXPECT_EQ(taint_bits(p, "/home/u/.sshx/key"), 0u);
  EXPECT_EQ(taint_bits(load_ok("version: 1\n"), "/home/u/.ssh/id_rsa"), 0u);
}

TEST(Taint, ReadTestsTheEventsBits) {
  Policy p = load_ok(kTaintPolicy);
  auto e = net_event(Action::NetConnect, NetProto::Tcp, "203.0.113.5", 443, {"paste.example"});
  EXPECT_EQ(decide(p, e).rule_id, "");
  e.read_taint = 1;  // secrets
  EXPECT_EQ(decide(p, e).rule_id, "exfil");
  e.net.hosts = {"registry.npmjs.org"};
  EXPECT_EQ(decide(p, e).rule_id, "");
  e.read_taint = 2;  // keyrings alone
  EXPECT_EQ(decide(p, e).rule_id, "keyring-readers");
  EXPECT_EQ(expr_to_string(*p.rules[1].when), "read(@keyrings)");
  EXPECT_EQ(expr_to_string(*p.rules[0].when), "(read(@secrets) and (not net.host contains \"registry.npmjs.org\"))");
}

TEST(Taint, EveryErrorAtItsPlace) {
  expect_error(kHead + "  - {id: a, action: net.connect, when: 'read(@secret)', decision: ask}\n",
               "p.yaml:3:46: error: unknown list '@secret'");
  expect_error("version: 1\nlists:\n  secrets: [x]\n" + kHead.substr(11) +
                   "  - {id: a, action: net.connect, when: 'read(@secrets)', decision: ask}\n",
               "p.yaml:3:13: error: list 'secrets' is tested with read(@secrets), so its items are path patterns; "
               "'x' must be absolute or start with '*'");
  expect_error("version: 1\nlists:\n  secrets: ['~/.ssh/**']\n" + kHead.substr(11) +
                   "  - {id: a, action: net.connect, when: 'read(@secrets)', decision: ask}\n",
               "p.yaml:3:13: error: list 'secrets' is tested with read(@secrets), so its items are path patterns; "
               "'~/.ssh/**' must be absolute or start with '*' (write ${HOME} for '~')");
  expect_error("version: 1\nlists:\n  secrets: ['/a/[b']\n" + kHead.substr(11) +
                   "  - {id: a, action: net.connect, when: 'read(@secrets)', decision: ask}\n",
               "p.yaml:3:17: error: bad pattern '/a/[b': unclosed '[' at offset 3");
  expect_error(kHead + "  - {id: a, action: net.connect, when: 'read secrets', decision: ask}\n",
               "p.yaml:3:46: error: expected '(' after 'read', as in read(@secrets), found 'secrets'");
  expect_error(kHead + "  - {id: a, action: net.connect, when: 'read(\"/x\")', decision: ask}\n",
               "p.yaml:3:46: error: read(...) takes a list of path patterns, as in read(@secrets); found a string");
  expect_error("version: 1\nlists:\n  s: [/x]\n" + kHead.substr(11) +
                   "  - {id: a, action: net.connect, when: 'read(@s', decision: ask}\n",
               "p.yaml:5:48: error: expected ')' to close read(, found the end of the expression");
  expect_error("version: 1\nlists:\n  s: [/x]\n" + kHead.substr(11) +
                   "  - {id: a, action: net.connect, when: 'read(@s) == 1', decision: ask}\n",
               "p.yaml:5:41: error: 'read(@s)' is a boolean; use it alone or with 'not'");
}

TEST(Taint, ParseExprWithoutAPolicyRefusesRead) {
  std::map<std::string, std::vector<std::string>> lists = {{"s", {"/x"}}};
  auto r = parse_expr("read(@s)", lists, {});
  EXPECT_FALSE(r.expr);
  EXPECT_EQ(r.error.message, "read(@...) is only available in a policy's rules");
  std::vector<std::string> taints;
  auto bad = parse_expr("read(@s) and nope", lists, {}, &taints);
  EXPECT_FALSE(bad.expr);
  EXPECT_TRUE(taints.empty()) << "a failed expression leaves no list behind";
  auto ok = parse_expr("read(@s) or read(@s)", lists, {}, &taints);
  EXPECT_TRUE(ok.expr);
  EXPECT_EQ(taints, (std::vector<std::string>{"s"}));
}

TEST(NetExpr, FieldsOnEventsWithoutANetworkObject) {
  Policy p = load_ok(R"(version: 1
default: allow
rules:
  - {id: a, action: file.write, when: 'net.port == 0 and net.addr == "" and net.proto == "" and not net.resolved', decision: deny}
)");
  Event f;
  f.action = Action::FileWrite;
  f.path = "/tmp/x";
  EXPECT_EQ(decide(p, f).rule_id, "a");
}

}  // namespace
}  // namespace cb

namespace cb {
namespace {

TEST(NetObjectFromPath, ReadsWhatTheSupervisorWrites) {
  NetObject t = net_object_from_path("tcp:203.0.113.7:443");
  EXPECT_EQ(t.proto, NetProto::Tcp);
  EXPECT_EQ(t.addr_text, "203.0.113.7");
  EXPECT_EQ(t.port, 443);
  NetObject u = net_object_from_path("udp:[2001:db8::1]:53");
  EXPECT_EQ(u.proto, NetProto::Udp);
  EXPECT_EQ(u.addr_text, "2001:db8::1");
  EXPECT_EQ(u.port, 53);
  EXPECT_EQ(net_object_from_path("tcp:[::ffff:10.0.0.1]:80").addr_text, "10.0.0.1");
  EXPECT_EQ(net_object_from_path("unix:/run/x.sock").proto, NetProto::Unix);
  EXPECT_FALSE(net_object_from_path("unix:@abstract").ip());
  for (const char* bad : {"", "/etc/passwd", "tcp:", "tcp:1.2.3.4", "tcp:1.2.3.4:", "tcp:1.2.3.4:99999",
                          "tcp:1.2.3.4:8x", "tcp:host.example:443", "family:10", "udp:[::1]:123456"})
    EXPECT_EQ(net_object_from_path(bad).proto, NetProto::None) << bad;
}

}  // namespace
}  // namespace cb
