// The network in the audit trail: each net.* event's object (protocol,
// address, port, the names resolved to the address), the resolver's
// lookups, `cottonbox hosts`, host names in `cottonbox events`, and a
// version 2 file read as it is and upgraded in place.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "db/hosts.h"
#include "db/json.h"
#include "db/report.h"
#include "test_util.h"

namespace cb::db {
namespace {

using namespace test;

constexpr int64_t kStart = 1795985482'000000000;  // 2026-11-29 20:51:22 UTC

void exec_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

int64_t query_int(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

EventRow net_event(Action a, NetProto proto, const char* addr, uint16_t port, std::vector<std::string> hosts,
                   std::vector<std::string> chain, std::shared_ptr<const ProcessInfo> p, int64_t ms) {
  EventRow r = event(0, a, "", std::move(p));
  IpAddr ip = *IpAddr::parse(addr);
  r.ev.net = make_net_object(proto, ip, port);
  r.ev.path = std::string(net_proto_name(proto)) + ":" + (ip.family == 6 ? "[" + ip.text() + "]" : ip.text()) + ":" +
              std::to_string(port);
  r.ev.net.hosts = hosts;
  r.ev.net.names = hosts;
  r.ev.net.names.insert(r.ev.net.names.end(), chain.begin(), chain.end());
  r.ev.syscall = "connect";
  r.ev.ts_ns = kStart + ms * 1'000'000;
  return r;
}

LookupRow lookup(const char* name, bool denied, int64_t ms, uint64_t proc_id = 0) {
  LookupRow l;
  l.ts_ns = kStart + ms * 1'000'000;
  l.proc_id = proc_id;
  l.client = "127.0.0.1:40000";
  l.name = name;
  l.type = 1;
  l.rcode = denied ? 5 : 0;
  l.denied = denied;
  if (!denied) l.addresses = {"104.16.0.35"};
  l.upstream = "127.0.0.53:53";
  return l;
}

class NetStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
  TempDir dir;
  std::string path = dir.path() + "/audit.db";
};

TEST_F(NetStoreTest, TheNetworkObjectRoundTrips) {
  auto node = process(1, 100, "node");
  {
    auto w = open_writer(path);
    int64_t sid = *w->begin_session(session_start("net"));
    w->add_event(sid, net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org"},
                                {"r.cdn.test"}, node, 1));
    w->add_event(sid, net_event(Action::NetSend, NetProto::Udp, "2001:db8::53", 53, {}, {}, node, 2));
    EventRow unix_socket = event(0, Action::NetConnect, "unix:/run/docker.sock", node);
    unix_socket.ev.net.proto = NetProto::Unix;
    w->add_event(sid, unix_socket);
    // A producer that filled no object: the columns come from the path.
    w->add_event(sid, event(0, Action::NetConnect, "tcp:[::ffff:10.0.0.1]:8080", node));
    w->add_event(sid, event(0, Action::FileWrite, "/tmp/tcp:1.2.3.4:80", node));
    ASSERT_TRUE(w->flush());
  }
  EXPECT_EQ(query_int(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(query_int(path, "SELECT count(*) FROM events WHERE net_addr IS NOT NULL"), 3);
  EXPECT_EQ(query_int(path, "SELECT count(*) FROM events WHERE net_proto = 'unix' AND net_addr IS NULL"), 1);
  EXPECT_EQ(query_int(path, "SELECT net_port FROM events WHERE net_addr = '10.0.0.1'"), 8080);
  auto r = open_reader(path);
  auto events = r->events(EventQuery{});
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 5u);
  const NetObject& a = (*events)[0].row.ev.net;
  EXPECT_EQ(a.proto, NetProto::Tcp);
  EXPECT_EQ(a.addr_text, "104.16.0.35");
  EXPECT_EQ(a.port, 443);
  EXPECT_EQ(a.hosts, (std::vector<std::string>{"registry.npmjs.org"}));
  EXPECT_EQ(a.names, (std::vector<std::string>{"registry.npmjs.org", "r.cdn.test"}));
  EXPECT_EQ((*events)[1].row.ev.net.addr_text, "2001:db8::53");
  EXPECT_EQ((*events)[1].row.ev.net.proto, NetProto::Udp);
  EXPECT_TRUE((*events)[1].row.ev.net.hosts.empty());
  EXPECT_EQ((*events)[2].row.ev.net.proto, NetProto::Unix);
  EXPECT_FALSE((*events)[2].row.ev.net.ip());
  EXPECT_EQ((*events)[3].row.ev.net.addr_text, "10.0.0.1");
  EXPECT_EQ((*events)[4].row.ev.net.proto, NetProto::None);

  auto j = event_json((*events)[0]);
  EXPECT_EQ(j["net"]["proto"], "tcp");
  EXPECT_EQ(j["net"]["addr"], "104.16.0.35");
  EXPECT_EQ(j["net"]["port"], 443);
  EXPECT_EQ(j["net"]["hosts"], nlohmann::json::array({"registry.npmjs.org"}));
  EXPECT_EQ(j["net"]["names"], nlohmann::json::array({"registry.npmjs.org", "r.cdn.test"}));
  auto u = event_json((*events)[2]);
  EXPECT_EQ(u["net"]["addr"], nullptr);
  EXPECT_EQ(u["net"]["port"], nullptr);
  EXPECT_FALSE(event_json((*events)[4]).contains("net"));
}

TEST_F(NetStoreTest, EventsShowTheNames) {
  auto curl = process(1, 100, "curl");
  int64_t sid;
  {
    auto w = open_writer(path);
    sid = *w->begin_session(session_start("net"));
    w->add_event(sid,
                 net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org"}, {}, curl, 1));
    w->add_event(sid, denied(net_event(Action::NetConnect, NetProto::Tcp, "169.254.169.254", 80, {}, {}, curl, 2),
                             "no-metadata"));
    ASSERT_TRUE(w->flush());
  }
  auto r = open_reader(path);
  std::ostringstream out;
  EventQuery q;
  q.session = sid;
  ASSERT_EQ(print_events(*r, q, false, out), 0);
  EXPECT_EQ(out.str(),
            "TIME          PID  COMM  ACTION       DECISION  RULE         PATH\n"
            "20:51:22.001  100  curl  net.connect  allow     -            tcp:104.16.0.35:443 (registry.npmjs.org)\n"
            "20:51:22.002  100  curl  net.connect  DENY      no-metadata  tcp:169.254.169.254:80\n");
}

class HostsTest : public NetStoreTest {
 protected:
  void SetUp() override {
    NetStoreTest::SetUp();
    auto w = open_writer(path);
    SessionStart start = session_start("npm");
    start.started_ns = kStart;
    start.argv = {"npm", "install"};
    sid = *w->begin_session(start);
    auto npm = process(1, 100, "npm");
    auto node = process(2, 101, "node");
    auto py = process(3, 102, "python3");
    for (const auto& p : {npm, node, py}) w->add_process(sid, process_row(*p));
    w->add_lookup(sid, lookup("registry.npmjs.org", false, 1, 1));
    w->add_event(sid,
                 net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org"}, {}, npm, 2));
    w->add_event(sid,
                 net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org"}, {}, npm, 3));
    // The same registry over its IPv6 address, from another process.
    w->add_event(sid, net_event(Action::NetConnect, NetProto::Tcp, "2606:4700::6810:23", 443, {"registry.npmjs.org"},
                                {}, node, 4));
    w->add_event(sid, net_event(Action::NetSend, NetProto::Udp, "127.0.0.1", 8125, {}, {}, node, 5));
    EventRow asked = net_event(Action::NetConnect, NetProto::Tcp, "203.0.113.9", 443, {"paste.example"}, {}, py, 6);
    asked.verdict.decision = Decision::Ask;
    asked.verdict.rule_id = "exfil";
    asked.allowed = false;
    w->add_event(sid, asked);
    w->add_lookup(sid, lookup("evil.example", true, 7, 3));
    w->add_lookup(sid, lookup("evil.example", true, 8, 3));
    ASSERT_TRUE(w->flush());
  }
  int64_t sid = 0;
};

TEST_F(HostsTest, OneRowPerHostAndPort) {
  auto r = open_reader(path);
  auto hosts = r->hosts(sid);
  ASSERT_TRUE(hosts) << hosts.error().message;
  ASSERT_EQ(hosts->size(), 4u);
  const HostContact& reg = (*hosts)[0];
  EXPECT_EQ(reg.host, "registry.npmjs.org");
  EXPECT_EQ(reg.port, 443);
  EXPECT_EQ(reg.proto, "tcp");
  EXPECT_EQ(reg.addresses, (std::vector<std::string>{"104.16.0.35", "2606:4700::6810:23"}));
  ASSERT_EQ(reg.processes.size(), 2u);
  EXPECT_EQ(reg.processes[0].comm, "npm");
  EXPECT_EQ(reg.processes[0].events, 2u);
  EXPECT_EQ(reg.processes[1].comm, "node");
  EXPECT_EQ(reg.events, 3u);
  EXPECT_EQ(reg.denied, 0u);
  EXPECT_EQ(reg.first_ns, kStart + 2'000'000);
  EXPECT_EQ(reg.last_ns, kStart + 4'000'000);
  EXPECT_EQ(reg.lookups, 1u);
  const HostContact& statsd = (*hosts)[1];
  EXPECT_EQ(statsd.host, "127.0.0.1");
  EXPECT_EQ(statsd.proto, "udp");
  EXPECT_EQ(statsd.actions, (std::vector<std::string>{"net.send"}));
  const HostContact& paste = (*hosts)[2];
  EXPECT_EQ(paste.denied, 1u);
  EXPECT_EQ(paste.asked, 1u);
  const HostContact& evil = (*hosts)[3];
  EXPECT_EQ(evil.host, "evil.example");
  EXPECT_EQ(evil.proto, "dns");
  EXPECT_EQ(evil.lookups, 2u);
  EXPECT_EQ(evil.lookups_refused, 2u);
  EXPECT_EQ(evil.events, 0u);
  EXPECT_EQ(evil.first_ns, kStart + 7'000'000);
  EXPECT_EQ(evil.last_ns, kStart + 8'000'000);

  auto lookups = r->lookups(sid);
  ASSERT_TRUE(lookups);
  ASSERT_EQ(lookups->size(), 3u);
  EXPECT_EQ((*lookups)[0].row.addresses, (std::vector<std::string>{"104.16.0.35"}));
  EXPECT_EQ((*lookups)[0].row.upstream, "127.0.0.53:53");
  EXPECT_EQ((*lookups)[0].row.proc_id, 1u);
  EXPECT_TRUE((*lookups)[1].row.denied);
  EXPECT_EQ((*lookups)[1].row.rcode, 5);
}

TEST_F(HostsTest, TheTableAndTheJson) {
  auto r = open_reader(path);
  std::ostringstream out;
  ASSERT_EQ(print_hosts(*r, sid, false, out), 0);
  EXPECT_EQ(out.str(),
            "session 1: [npm] npm install  (running)\n"
            "HOST                PORT  PROTO  ADDRESSES                        PROCESSES              FIRST         "
            "LAST          EVENTS  DENIED  LOOKUPS\n"
            "registry.npmjs.org   443  tcp    104.16.0.35, 2606:4700::6810:23  npm[100]×2, node[101]  "
            "20:51:22.002  20:51:22.004       3       0  1\n"
            "127.0.0.1           8125  udp    127.0.0.1                        node[101]              "
            "20:51:22.005  20:51:22.005       1       0  -\n"
            "paste.example        443  tcp    203.0.113.9                      python3[102]           "
            "20:51:22.006  20:51:22.006       1       1  -\n"
            "evil.example           -  dns    -                                python3[102]           "
            "20:51:22.007  20:51:22.008       0       0  2 (2 refused)\n");
  std::ostringstream js;
  ASSERT_EQ(print_hosts(*r, sid, true, js), 0);
  std::istringstream in(js.str());
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["host"], "registry.npmjs.org");
  EXPECT_EQ(rows[0]["port"], 443);
  EXPECT_EQ(rows[0]["session"], sid);
  EXPECT_EQ(rows[0]["addresses"].size(), 2u);
  EXPECT_EQ(rows[0]["processes"][0]["comm"], "npm");
  EXPECT_EQ(rows[0]["processes"][0]["events"], 2);
  EXPECT_EQ(rows[0]["first"], "2026-11-29T20:51:22.002000000Z");
  EXPECT_EQ(rows[3]["proto"], "dns");
  EXPECT_EQ(rows[3]["port"], nullptr);
  EXPECT_EQ(rows[3]["lookups_refused"], 2);
}

TEST_F(HostsTest, NoSuchSessionAndNoHosts) {
  auto r = open_reader(path);
  std::ostringstream out;
  EXPECT_EQ(print_hosts(*r, 99, false, out), kExitFailure);
  int64_t quiet;
  {
    auto w = open_writer(path);
    quiet = *w->begin_session(session_start("quiet"));
    w->add_event(quiet, event(0, Action::FileWrite, "/tmp/x"));
    ASSERT_TRUE(w->flush());
  }
  std::ostringstream none;
  EXPECT_EQ(print_hosts(*r, quiet, false, none), 0);
  EXPECT_NE(none.str().find("no hosts contacted\n"), std::string::npos) << none.str();
}

// The live view's fold (HostTally) gives what the reader gives, whatever
// order the events and lookups come in: lookups before their connects (the
// usual order), after them, or mixed.
TEST_F(HostsTest, TheTallyIsTheSameInAnyOrder) {
  auto r = open_reader(path);
  auto expected = r->hosts(sid);
  ASSERT_TRUE(expected);
  EventQuery q;
  q.session = sid;
  auto events = r->events(q);
  auto lookups = r->lookups(sid);
  ASSERT_TRUE(events && lookups);
  auto same = [&](const std::vector<HostContact>& got) {
    ASSERT_EQ(got.size(), expected->size());
    for (size_t i = 0; i < got.size(); ++i) {
      const HostContact &a = got[i], &b = (*expected)[i];
      EXPECT_EQ(a.host, b.host);
      EXPECT_EQ(a.port, b.port);
      EXPECT_EQ(a.proto, b.proto);
      EXPECT_EQ(a.names, b.names);
      EXPECT_EQ(a.addresses, b.addresses);
      EXPECT_EQ(a.events, b.events);
      EXPECT_EQ(a.denied, b.denied);
      EXPECT_EQ(a.lookups, b.lookups) << a.host;
      EXPECT_EQ(a.lookups_refused, b.lookups_refused) << a.host;
      EXPECT_EQ(a.first_ns, b.first_ns);
      EXPECT_EQ(a.last_ns, b.last_ns);
      EXPECT_EQ(a.processes.size(), b.processes.size());
    }
  };
  HostTally lookups_first, events_first, mixed;
  for (const auto& l : *lookups) lookups_first.add(l.row);
  for (const auto& e : *events) lookups_first.add(e.row), events_first.add(e.row);
  for (const auto& l : *lookups) events_first.add(l.row);
  for (size_t i = 0; i < std::max(events->size(), lookups->size()); ++i) {
    if (i < lookups->size()) mixed.add((*lookups)[lookups->size() - 1 - i].row);
    if (i < events->size()) mixed.add((*events)[i].row);
  }
  same(lookups_first.rows());
  same(events_first.rows());
  same(mixed.rows());
  // Bounded: the first two hosts are kept, the third's event is counted.
  HostTally small(2);
  for (const auto& e : *events) small.add(e.row);
  ASSERT_EQ(small.rows().size(), 2u);
  EXPECT_EQ(small.rows()[1].host, "127.0.0.1");
  EXPECT_EQ(small.dropped(), 1u);  // the asked connect to paste.example
}

// "Who contacted this host?": EventQuery::host reads a host as `host:` in
// rules does (names, patterns, addresses, blocks; IPv4-mapped addresses are
// the IPv4 host) and matches the address and every name the session
// resolved to it, the CNAME chain's too.
TEST_F(NetStoreTest, WhoContactedByNamePatternAddressAndBlock) {
  auto curl = process(1, 100, "curl"), node = process(2, 101, "node");
  int64_t a, b;
  {
    auto w = open_writer(path);
    a = *w->begin_session(session_start("a"));
    w->add_event(a, net_event(Action::NetConnect, NetProto::Tcp, "104.16.0.35", 443, {"registry.npmjs.org"},
                              {"registry.npmjs.org.cdn.cloudflare.net"}, curl, 1));
    w->add_event(a, net_event(Action::NetConnect, NetProto::Tcp, "2606:4700::6810:23", 443, {"registry.npmjs.org"}, {},
                              node, 2));
    // Connected through an IPv6 socket to the IPv4-mapped address: the IPv4 host.
    w->add_event(a, net_event(Action::NetConnect, NetProto::Tcp, "::ffff:10.1.2.3", 8080, {}, {}, node, 3));
    w->add_event(
        a, denied(net_event(Action::NetConnect, NetProto::Tcp, "169.254.169.254", 80, {}, {}, curl, 4), "no-metadata"));
    w->add_event(a, event(0, Action::FileWrite, "/tmp/tcp:10.1.2.3:8080", curl));  // a file, not a host
    // A local address, not a host contacted.
    w->add_event(a, net_event(Action::NetBind, NetProto::Tcp, "10.1.2.3", 9000, {}, {}, node, 4));
    EventRow unix_socket = event(0, Action::NetConnect, "unix:/run/docker.sock", node);
    unix_socket.ev.net.proto = NetProto::Unix;
    w->add_event(a, unix_socket);
    b = *w->begin_session(session_start("b"));
    w->add_event(b, net_event(Action::NetSend, NetProto::Udp, "10.1.200.1", 53, {}, {}, node, 5));
    w->add_event(b, net_event(Action::NetConnect, NetProto::Tcp, "140.82.112.3", 22, {"github.com"}, {}, curl, 6));
    ASSERT_TRUE(w->flush());
  }
  auto r = open_reader(path);
  auto who = [&](const std::string& host, std::optional<int64_t> session = std::nullopt, int64_t limit = 0) {
    EventQuery q;
    q.host = host;
    q.session = session;
    q.limit = limit;
    auto events = r->events(q);
    EXPECT_TRUE(events) << host << ": " << events.error().message;
    std::vector<std::string> out;
    if (events)
      for (const auto& e : *events) out.push_back(e.row.ev.net.addr_text + ":" + std::to_string(e.row.ev.net.port));
    return out;
  };
  using V = std::vector<std::string>;
  // A name: every address the session resolved it to, in any case, with a final dot.
  EXPECT_EQ(who("registry.npmjs.org"), (V{"104.16.0.35:443", "2606:4700::6810:23:443"}));
  EXPECT_EQ(who("Registry.NPMJS.org."), (V{"104.16.0.35:443", "2606:4700::6810:23:443"}));
  // A name on the CNAME chain: the connection it led to.
  EXPECT_EQ(who("*.cloudflare.net"), V{"104.16.0.35:443"});
  // Patterns: below a domain (not the domain itself), within a label, any name.
  EXPECT_EQ(who("*.npmjs.org"), (V{"104.16.0.35:443", "2606:4700::6810:23:443"}));
  EXPECT_EQ(who("*.github.com"), V{});
  EXPECT_EQ(who("git*.com"), V{"140.82.112.3:22"});
  EXPECT_EQ(who("*"), (V{"104.16.0.35:443", "2606:4700::6810:23:443", "140.82.112.3:22"}));
  // Addresses: exact, in brackets, and the mapped spelling of an IPv4 address.
  EXPECT_EQ(who("169.254.169.254"), V{"169.254.169.254:80"});
  EXPECT_EQ(who("[2606:4700::6810:23]"), V{"2606:4700::6810:23:443"});
  EXPECT_EQ(who("10.1.2.3"), V{"10.1.2.3:8080"});
  EXPECT_EQ(who("::ffff:10.1.2.3"), V{"10.1.2.3:8080"});
  // Blocks, across sessions or in one; ::ffff:10.0.0.0/104 is 10.0.0.0/8.
  EXPECT_EQ(who("10.1.0.0/16"), (V{"10.1.2.3:8080", "10.1.200.1:53"}));
  EXPECT_EQ(who("::ffff:10.0.0.0/104"), (V{"10.1.2.3:8080", "10.1.200.1:53"}));
  EXPECT_EQ(who("10.0.0.0/8", b), V{"10.1.200.1:53"});
  EXPECT_EQ(who("2606:4700::/32"), V{"2606:4700::6810:23:443"});
  EXPECT_EQ(who("0.0.0.0/0", a), (V{"104.16.0.35:443", "10.1.2.3:8080", "169.254.169.254:80"}));
  // The limit counts matches, not rows read.
  EXPECT_EQ(who("10.0.0.0/8", std::nullopt, 1), V{"10.1.2.3:8080"});
  // Only what reaches a host: the bind is there, but not as a contact.
  EventQuery binds;
  binds.action = "net.bind";
  ASSERT_EQ(r->events(binds)->size(), 1u);
  // An action filter that names no contact finds nothing.
  EventQuery files;
  files.host = "10.1.2.3";
  files.action = "file.*";
  ASSERT_TRUE(r->events(files));
  EXPECT_TRUE(r->events(files)->empty());
  // The chain of the denied one is there for the view.
  EventQuery denials;
  denials.host = "169.254.169.254";
  auto d = r->events(denials);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->size(), 1u);
  EXPECT_FALSE((*d)[0].row.allowed);
  EXPECT_EQ((*d)[0].row.ev.proc->comm, "curl");
  // Mistakes are errors that say what to write.
  for (const char* bad : {"example.com:443", "10.0.0.1/8", "010.0.0.1", "a..b", ""}) {
    EventQuery q;
    q.host = bad;
    auto e = r->events(q);
    ASSERT_FALSE(e) << bad;
    EXPECT_NE(e.error().message.find("bad host"), std::string::npos) << e.error().message;
  }
}

TEST(HostQuery, TheMatcherAlone) {
  auto p = [](const char* text) {
    auto h = parse_host_query(text);
    EXPECT_TRUE(h) << text;
    return *h;
  };
  auto obj = [](const char* addr, std::vector<std::string> names = {}) {
    NetObject n = make_net_object(NetProto::Tcp, *IpAddr::parse(addr), 443);
    n.hosts = names;
    n.names = names;
    return n;
  };
  EXPECT_TRUE(contacted(p(" example.com "), obj("203.0.113.7", {"example.com"})));
  EXPECT_FALSE(contacted(p("example.com"), obj("203.0.113.7", {"www.example.com"})));
  EXPECT_TRUE(contacted(p("*.example.com"), obj("203.0.113.7", {"a.b.example.com"})));
  EXPECT_FALSE(contacted(p("*.example.com"), obj("203.0.113.7", {"example.com"})));
  EXPECT_TRUE(contacted(p("203.0.113.0/24"), obj("203.0.113.7")));
  EXPECT_TRUE(contacted(p("::ffff:203.0.113.7"), obj("203.0.113.7")));
  EXPECT_TRUE(contacted(p("203.0.113.7"), obj("::ffff:203.0.113.7")));  // the event's address folded too
  EXPECT_FALSE(contacted(p("::203.0.113.7"), obj("203.0.113.7")));      // IPv4-compatible: another host
  EXPECT_FALSE(contacted(p("*"), obj("203.0.113.7")));                  // no name resolved
  NetObject unix_socket;
  unix_socket.proto = NetProto::Unix;
  EXPECT_FALSE(contacted(p("*"), unix_socket));
  EXPECT_FALSE(contacted(p("0.0.0.0/0"), unix_socket));
}

// The layout a release wrote before the network columns (db/schema.cpp at
// version 2), verbatim.
const char* const kVersion2 = R"sql(
CREATE TABLE sessions ( id INTEGER PRIMARY KEY, uuid TEXT NOT NULL, name TEXT NOT NULL DEFAULT '', argv TEXT NOT NULL DEFAULT '[]', cwd BLOB, uid INTEGER NOT NULL, user TEXT NOT NULL DEFAULT '', hostname TEXT NOT NULL DEFAULT '', policy_files TEXT NOT NULL DEFAULT '[]', policy_hash TEXT NOT NULL DEFAULT '', started_ns INTEGER NOT NULL, ended_ns INTEGER, exit_status INTEGER, exit_signal INTEGER, state TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'ended', 'aborted')), degraded TEXT NOT NULL DEFAULT '[]', observe INTEGER NOT NULL DEFAULT 0, tracer TEXT NOT NULL DEFAULT '', ask_mode TEXT NOT NULL DEFAULT '', supervisor_pid INTEGER NOT NULL, boot_id TEXT NOT NULL DEFAULT '', events_lost INTEGER NOT NULL DEFAULT 0, n_events INTEGER NOT NULL DEFAULT 0, n_denials INTEGER NOT NULL DEFAULT 0, n_asks INTEGER NOT NULL DEFAULT 0, last_event_ns INTEGER, first_event_id INTEGER, last_event_id INTEGER );
CREATE TABLE processes ( session INTEGER NOT NULL, proc_id INTEGER NOT NULL, parent_proc_id INTEGER NOT NULL DEFAULT 0, pid INTEGER, ppid INTEGER, uid INTEGER, comm TEXT, exe BLOB, argv BLOB, cwd BLOB, started_ns INTEGER, exec_ns INTEGER, ended_ns INTEGER, exit_status INTEGER, exit_signal INTEGER, UNIQUE (session, proc_id) );
CREATE TABLE events ( id INTEGER PRIMARY KEY, session INTEGER NOT NULL, seq INTEGER NOT NULL, ts_ns INTEGER NOT NULL, pid INTEGER NOT NULL, tid INTEGER NOT NULL, proc_id INTEGER, comm TEXT, action TEXT NOT NULL, syscall TEXT, path BLOB, target BLOB, aliases BLOB, flags INTEGER NOT NULL, is_dir INTEGER NOT NULL, target_pid INTEGER NOT NULL, decision TEXT NOT NULL CHECK (decision = 'allow' OR decision = 'deny'), verdict TEXT NOT NULL CHECK (verdict = 'allow' OR verdict = 'deny' OR verdict = 'ask' OR verdict = 'log'), rule TEXT, builtin INTEGER NOT NULL, message TEXT, source TEXT NOT NULL, layer TEXT NOT NULL, errno INTEGER, enforced INTEGER NOT NULL, count INTEGER NOT NULL );
CREATE TABLE touched_paths ( path BLOB NOT NULL, session INTEGER NOT NULL, first_id INTEGER NOT NULL );
CREATE TABLE approvals ( session INTEGER NOT NULL, event_seq INTEGER NOT NULL, asked_ns INTEGER NOT NULL, answered_ns INTEGER NOT NULL, answered_by TEXT NOT NULL, answer TEXT NOT NULL, rule_written TEXT, UNIQUE (session, event_seq) );
)sql";

TEST_F(NetStoreTest, AVersion2FileIsReadAsItIsAndUpgradedByTheFirstWriter) {
  exec_sql(path, kVersion2);
  exec_sql(path,
           "INSERT INTO sessions (id, uuid, argv, uid, started_ns, supervisor_pid, state, first_event_id,"
           " last_event_id, n_events) VALUES (1, 'old', '[\"curl\"]', 0, 1, 1, 'ended', 1, 1, 1);"
           "INSERT INTO events (id, session, seq, ts_ns, pid, tid, action, path, flags, is_dir, target_pid, decision,"
           " verdict, builtin, source, layer, enforced, count) VALUES (1, 1, 1, 5, 7, 7, 'net.connect',"
           " CAST('tcp:93.184.216.34:443' AS BLOB), 0, 0, 0, 'allow', 'allow', 0, 'seccomp', 'notify', 1, 1);"
           "PRAGMA user_version = 2;");
  {
    // Read as it is: the address comes from the path, names are unknown.
    auto r = open_reader(path);
    EXPECT_EQ(r->schema_version(), 2);
    auto events = r->events(EventQuery{});
    ASSERT_TRUE(events) << events.error().message;
    ASSERT_EQ(events->size(), 1u);
    EXPECT_EQ((*events)[0].row.ev.net.addr_text, "93.184.216.34");
    EXPECT_TRUE((*events)[0].row.ev.net.hosts.empty());
    auto hosts = r->hosts(1);
    ASSERT_TRUE(hosts) << hosts.error().message;
    ASSERT_EQ(hosts->size(), 1u);
    EXPECT_EQ((*hosts)[0].host, "93.184.216.34");
    auto lookups = r->lookups(1);
    ASSERT_TRUE(lookups);
    EXPECT_TRUE(lookups->empty());
  }
  EXPECT_EQ(query_int(path, "PRAGMA user_version"), 2) << "a reader never writes";
  {
    auto w = open_writer(path);
    int64_t sid = *w->begin_session(session_start("new"));
    w->add_event(sid, net_event(Action::NetConnect, NetProto::Tcp, "93.184.216.34", 443, {"example.com"}, {},
                                process(1, 9, "curl"), 1));
    w->add_lookup(sid, lookup("example.com", false, 0));
    ASSERT_TRUE(w->flush());
  }
  EXPECT_EQ(query_int(path, "PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(query_int(path, "SELECT count(*) FROM dns_lookups"), 1);
  auto r = open_reader(path);
  auto events = r->events(EventQuery{});
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_TRUE((*events)[0].row.ev.net.hosts.empty()) << "the old row has no names";
  EXPECT_EQ((*events)[1].row.ev.net.hosts, (std::vector<std::string>{"example.com"}));
}

TEST_F(NetStoreTest, AnOlderVersionIsRefusedWithItsReason) {
  exec_sql(path, "CREATE TABLE t (x); PRAGMA user_version = 1;");
  auto r = Reader::open(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, path +
                                   " has schema version 1, which this build cannot upgrade; move the file aside (a "
                                   "new one is created) or choose another file with --db");
}

}  // namespace
}  // namespace cb::db
