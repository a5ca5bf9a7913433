// The stub resolver end to end with real clients and a real upstream:
// dnsmasq serves a test zone on a loopback address, the resolver serves
// port 53 on another, and glibc's getaddrinfo (getent), Python, Node (its
// getaddrinfo and its own c-ares) and dig ask it through a resolv.conf
// bound over /etc/resolv.conf in a private mount namespace, the way a
// session will.  Root: port 53 and the bind mount.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>

#include "net/resolver.h"
#include "tests/net/test_server.h"
#include "tests/support/host_features.h"

namespace cb::net {
namespace {

bool have(const char* tool) {
  std::string cmd = std::string("command -v ") + tool + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

#define REQUIRE_TOOL(t) \
  if (!have(t)) GTEST_SKIP() << "host lacks " t

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Ran {
  int status = -1;
  std::string out;
};

// Runs `argv` (in a private mount namespace with `resolv_conf` over
// /etc/resolv.conf when given), with its stdout and stderr.
Ran run(const std::vector<std::string>& argv, const std::string& resolv_conf = "") {
  std::string cmd;
  for (const auto& a : argv) cmd += quote(a) + " ";
  if (!resolv_conf.empty())
    cmd = "unshare -m sh -c " + quote("mount --bind " + quote(resolv_conf) + " /etc/resolv.conf && exec \"$@\"") +
          " sh " + cmd;
  cmd = "timeout 30 " + cmd + " 2>&1";
  Ran r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

class ResolverClients : public ::testing::Test {
 protected:
  void SetUp() override {
    CB_REQUIRE_HOST(cb::test::root());
    REQUIRE_TOOL("dnsmasq");
    REQUIRE_TOOL("unshare");
    // Addresses of this run's own: two runs side by side do not meet.
    std::string net = "127.83." + std::to_string(getpid() % 200 + 20) + ".";
    upstream_ = *Endpoint::parse(net + "2:5353");
    char tmpl[] = "/tmp/cb-net-XXXXXX";
    ASSERT_TRUE(mkdtemp(tmpl));
    dir_ = tmpl;
    {
      std::ofstream hosts(dir_ + "/hosts");
      for (int i = 1; i <= 40; ++i) hosts << "127.1.1." << i << " big.cbtest\n";
    }
    std::vector<std::string> args = {"dnsmasq",
                                     "-C",
                                     "/dev/null",
                                     "-k",
                                     "--no-resolv",
                                     "--no-hosts",
                                     "--addn-hosts=" + dir_ + "/hosts",
                                     "--local=/cbtest/",
                                     "--listen-address=" + upstream_.addr.text(),
                                     "--bind-interfaces",
                                     "--port=5353",
                                     "--user=root",
                                     "--group=root",
                                     "--pid-file=",
                                     "--host-record=web.cbtest,127.1.0.10,fd00:cb::10",
                                     "--cname=alias.cbtest,web.cbtest",
                                     "--host-record=evil.cbtest,127.1.0.67",
                                     "--host-record=x.evil.cbtest,127.1.0.66",
                                     "--cname=innocent.cbtest,x.evil.cbtest",
                                     "--log-facility=/dev/null"};
    dnsmasq_ = fork();
    if (dnsmasq_ == 0) {
      std::vector<char*> av;
      for (auto& a : args) av.push_back(a.data());
      av.push_back(nullptr);
      execvp("dnsmasq", av.data());
      _exit(127);
    }
    // Ready when it answers.
    bool up = false;
    for (int i = 0; i < 100 && !up; ++i) {
      up = test::ask_udp(upstream_, test::query("web.cbtest"), 100).has_value();
      if (!up) usleep(50 * 1000);  // refused at once until it listens
    }
    ASSERT_TRUE(up) << "dnsmasq did not start on " << upstream_.text();

    ResolverOptions o;
    o.listen = {*Endpoint::parse(net + "1:53")};
    o.upstreams = {upstream_};
    o.judge = [](const Lookup& l) {
      auto denied = [](const std::string& n) { return n == "evil.cbtest" || n.ends_with(".evil.cbtest"); };
      if (denied(l.name)) return LookupVerdict::Refuse;
      if (l.answer)
        for (const auto& c : l.answer->chain)
          if (denied(c)) return LookupVerdict::Refuse;
      return LookupVerdict::Allow;
    };
    o.on_lookup = [this](const LookupRecord& r) {
      std::lock_guard lk(mu_);
      records_.push_back(r);
    };
    auto r = Resolver::start(std::move(o), map_);
    ASSERT_TRUE(r) << r.error().message;
    server_ = (*r)->listening()[0];
    resolver_ = std::make_unique<ResolverThread>(std::move(*r));
    resolv_conf_ = dir_ + "/resolv.conf";
    std::ofstream(resolv_conf_) << session_resolv_conf(server_, "options timeout:2 attempts:2\n");
  }

  void TearDown() override {
    resolver_.reset();
    if (dnsmasq_ > 0) {
      kill(dnsmasq_, SIGTERM);
      waitpid(dnsmasq_, nullptr, 0);
    }
    if (!dir_.empty()) std::system(("rm -rf " + quote(dir_)).c_str());
  }

  std::vector<std::string> names_of(const char* addr) {
    NetObject n = make_net_object(NetProto::Tcp, *IpAddr::parse(addr), 443);
    map_.annotate(n);
    return n.names;
  }
  std::vector<std::string> hosts_of(const char* addr) {
    NetObject n = make_net_object(NetProto::Tcp, *IpAddr::parse(addr), 443);
    map_.annotate(n);
    return n.hosts;
  }
  std::vector<LookupRecord> records() {
    std::lock_guard lk(mu_);
    return records_;
  }

  Endpoint upstream_, server_;
  std::string dir_, resolv_conf_;
  pid_t dnsmasq_ = -1;
  NameMap map_;
  std::unique_ptr<ResolverThread> resolver_;
  std::mutex mu_;
  std::vector<LookupRecord> records_;
};

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST_F(ResolverClients, GlibcGetaddrinfoThroughACname) {
  REQUIRE_TOOL("getent");
  Ran r = run({"getent", "ahosts", "alias.cbtest"}, resolv_conf_);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "127.1.0.10")) << r.out;
  EXPECT_TRUE(contains(r.out, "fd00:cb::10")) << r.out;
  // The session knows both addresses by the name asked and its chain.
  EXPECT_EQ(hosts_of("127.1.0.10"), (std::vector<std::string>{"alias.cbtest"}));
  EXPECT_EQ(names_of("127.1.0.10"), (std::vector<std::string>{"alias.cbtest", "web.cbtest"}));
  EXPECT_EQ(hosts_of("fd00:cb::10"), (std::vector<std::string>{"alias.cbtest"}));
  std::set<uint16_t> types;
  for (const auto& rec : records()) types.insert(rec.type);
  EXPECT_EQ(types, (std::set<uint16_t>{dns_type::A, dns_type::AAAA}));
}

TEST_F(ResolverClients, PythonGetaddrinfo) {
  REQUIRE_TOOL("python3");
  Ran r =
      run({"python3", "-c", "import socket\nprint(sorted({a[4][0] for a in socket.getaddrinfo('web.cbtest', 443)}))"},
          resolv_conf_);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "['127.1.0.10', 'fd00:cb::10']")) << r.out;
  EXPECT_EQ(hosts_of("127.1.0.10"), (std::vector<std::string>{"web.cbtest"}));
}

TEST_F(ResolverClients, NodeLookupAndCaresResolve) {
  REQUIRE_TOOL("node");
  Ran r = run({"node", "-e",
               "const dns = require('dns');"
               "dns.lookup('alias.cbtest', {all: true}, (e, a) => {"
               "  console.log('lookup', e ? e.code : a.map(x => x.address).sort().join(','));"
               "  dns.resolve4('web.cbtest', (e2, b) => {"
               "    console.log('resolve4', e2 ? e2.code : b.join(','));"
               "    dns.resolve4('evil.cbtest', (e3) => console.log('evil', e3 ? e3.code : 'resolved'));"
               "  });"
               "});"},
              resolv_conf_);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "lookup 127.1.0.10,fd00:cb::10")) << r.out;
  EXPECT_TRUE(contains(r.out, "resolve4 127.1.0.10")) << r.out;
  EXPECT_TRUE(contains(r.out, "evil EREFUSED")) << r.out;
  EXPECT_EQ(names_of("127.1.0.10"), (std::vector<std::string>{"alias.cbtest", "web.cbtest"}));
}

TEST_F(ResolverClients, DigOverTcpAndUdp) {
  REQUIRE_TOOL("dig");
  std::string at = "@" + server_.addr.text();
  Ran tcp = run({"dig", "+tcp", "+short", at, "alias.cbtest"});
  EXPECT_EQ(tcp.status, 0) << tcp.out;
  EXPECT_EQ(tcp.out, "web.cbtest.\n127.1.0.10\n");
  EXPECT_GE(resolver_->resolver().stats().tcp_queries, 1u);
  Ran udp = run({"dig", "+short", at, "AAAA", "web.cbtest"});
  EXPECT_EQ(udp.out, "fd00:cb::10\n");
  Ran nx = run({"dig", at, "nope.cbtest"});
  EXPECT_TRUE(contains(nx.out, "status: NXDOMAIN")) << nx.out;
}

TEST_F(ResolverClients, TruncationSendsGlibcToTcp) {
  REQUIRE_TOOL("getent");
  Ran r = run({"getent", "ahostsv4", "big.cbtest"}, resolv_conf_);
  EXPECT_EQ(r.status, 0) << r.out;
  std::set<std::string> seen;
  for (int i = 1; i <= 40; ++i)
    if (contains(r.out, "127.1.1." + std::to_string(i) + " ")) seen.insert(std::to_string(i));
  EXPECT_EQ(seen.size(), 40u) << r.out;
  auto stats = resolver_->resolver().stats();
  EXPECT_GE(stats.truncated, 1u) << "glibc asks without EDNS: 40 records do not fit 512 bytes";
  EXPECT_GE(stats.tcp_queries, 1u);
  EXPECT_EQ(map_.addresses_of("big.cbtest").size(), 40u);
}

TEST_F(ResolverClients, DeniedNamesAreRefusedForEveryClient) {
  REQUIRE_TOOL("getent");
  Ran g = run({"getent", "ahosts", "evil.cbtest"}, resolv_conf_);
  EXPECT_EQ(g.status, 2) << g.out;  // "key not found"
  Ran chain = run({"getent", "ahosts", "innocent.cbtest"}, resolv_conf_);
  EXPECT_EQ(chain.status, 2) << "a CNAME into a denied name: " << chain.out;
  if (have("python3")) {
    Ran p = run({"python3", "-c",
                 "import socket\ntry:\n  socket.getaddrinfo('x.evil.cbtest', 80)\n  print('resolved')\n"
                 "except socket.gaierror as e:\n  print('refused', e.errno)"},
                resolv_conf_);
    EXPECT_TRUE(contains(p.out, "refused")) << p.out;
  }
  if (have("dig")) {
    Ran d = run({"dig", "@" + server_.addr.text(), "evil.cbtest"});
    EXPECT_TRUE(contains(d.out, "status: REFUSED")) << d.out;
  }
  EXPECT_TRUE(names_of("127.1.0.66").empty());
  EXPECT_TRUE(names_of("127.1.0.67").empty());
  bool any_denied = false;
  for (const auto& rec : records()) any_denied |= rec.denied && rec.name == "innocent.cbtest";
  EXPECT_TRUE(any_denied);
}

}  // namespace
}  // namespace cb::net
