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
