// The GUI protocol's lines: every message survives encode -> decode ->
// encode unchanged, bytes stay exact, and bad lines are refused politely.
#include "proto/protocol.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace cb::proto {
namespace {

using nlohmann::json;

constexpr int64_t kTs = 1795985482'123456789;

EventRow sample_event() {
  EventRow r;
  r.seq = 42;
  r.ev.ts_ns = kTs;
  r.ev.pid = 4001;
  r.ev.tid = 4002;
  r.ev.action = Action::FileDelete;
  r.ev.syscall = "unlinkat";
  r.ev.syscall_nr = 263;
  r.ev.path = "/home/u/proj/build/x.o";
  r.ev.flags = 0;
  auto p = std::make_shared<ProcessInfo>();
  p->pid = 4001;
  p->ppid = 4000;
  p->proc_id = 7;
  p->comm = "tar";
  p->exe = "/usr/bin/tar";
  r.ev.proc = p;
  r.verdict.decision = Decision::Ask;
  r.verdict.rule_id = "ask-mass-delete";
  r.verdict.message = "many files at once";
  r.allowed = false;
  r.layer = Layer::Notify;
  r.result_errno = EPERM;
  r.count = 1;
  return r;
}

db::SessionSummary sample_session() {
  db::SessionSummary s;
  s.id = 3;
  s.start.uuid = "0b0e7b9e-6a7b-4f7d-9e39-1c2d3e4f5a6b";
  s.start.name = "agent";
  s.start.argv = {"claude", "--print", "fix the build"};
  s.start.cwd = "/home/u/proj";
  s.start.uid = 1000;
  s.start.user = "u";
  s.start.hostname = "box";
  s.start.policy_files = {"/usr/share/cottonbox/rules/default.yaml"};
  s.start.policy_hash = "abc123";
  s.start.started_ns = kTs;
  s.start.observe = true;
  s.start.tracer = "seccomp";
  s.start.ask_mode = "gui";
  s.start.supervisor_pid = 999;
  s.start.boot_id = "boot";
  s.degraded = {"no SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: slower notifications"};
  return s;
}

AskMsg sample_ask() {
  AskMsg a;
  a.ask_id = 5;
  a.session = 3;
  a.session_name = "agent";
  a.row = sample_event();
  a.chain = {{4001, "tar", {"tar", "--remove-files", "-cf", "/tmp/b.tar", "build"}},
             {4000, "sh", {"sh", "-c", "tar --remove-files -cf /tmp/b.tar build"}},
             {3999, "claude", {"claude"}}};
  a.summary = "delete 1 file";
  a.count = 1;
  a.asked_ns = kTs;
  a.deadline_ns = kTs + 60'000'000'000;
  return a;
}

std::vector<Message> every_message() {
  ProcessRow pr;
  pr.proc_id = 7;
  pr.parent_proc_id = 6;
  pr.pid = 4001;
  pr.ppid = 4000;
  pr.uid = 1000;
  pr.comm = "tar";
  pr.exe = "/usr/bin/tar";
  pr.argv = {"tar", "x"};
  pr.cwd = "/home/u/proj";
  pr.started_ns = kTs;
  ApprovalRow ap{42, kTs, kTs + 5, "gui", "allow-always", "- id: x\n  action: file.delete\n"};
  Answer always{5, true, Scope::Always, "  - id: u1\n    action: file.delete\n", "alice", false};
  Answer timeout{6, false, Scope::Once, "", "", true};
  return {
      Hello{kVersion, "cottonbox 0.1.0", sample_session()},
      EventMsg{3, sample_event()},
      ProcessMsg{3, pr},
      ExecMsg{{7, kTs, "python3", "/usr/bin/python3.11", {"python3", "-c", "import os"}}},
      ExitMsg{{7, kTs, 0, 0}},
      ExitMsg{{8, kTs, -1, 9}},
      ApprovalMsg{ap},
      DegradedMsg{"no Landlock"},
      DroppedMsg{1234},
      sample_ask(),
      AskUpdate{5, 240, "delete 240 files under build/"},
      AskCancel{5, "timeout"},
      EndMsg{3, {kTs, 0, 0, SessionState::Ended}},
      EndMsg{3, {kTs, 137, 9, SessionState::Aborted}},
      Welcome{kVersion, "cottonbox-gui 0.1.0", "gui"},
      Answer{5, false, Scope::Tree, "", "", false},
      always,
      timeout,
  };
}

TEST(Protocol, EveryMessageRoundTrips) {
  for (const auto& m : every_message()) {
    std::string line = encode(m);
    SCOPED_TRACE(line);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    auto back = decode(line);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(back->index(), m.index());
    EXPECT_EQ(type_name(*back), type_name(m));
    EXPECT_EQ(encode(*back), line);
  }
}

TEST(Protocol, EventsUseTheSharedEventShape) {
  json j = json::parse(encode(EventMsg{3, sample_event()}));
  EXPECT_EQ(j["type"], "event");
  const json& e = j["event"];
  EXPECT_EQ(e["session"], 3);
  EXPECT_EQ(e["action"], "file.delete");
  EXPECT_EQ(e["decision"], "deny");
  EXPECT_EQ(e["verdict"], "ask");
  EXPECT_EQ(e["rule"], "ask-mass-delete");
  EXPECT_EQ(e["comm"], "tar");
  EXPECT_EQ(e["ts"], "2026-11-29T20:51:22.123456789Z");
}

TEST(Protocol, NetworkEventsCarryTheirHost) {
  EventMsg m{3, sample_event()};
  m.row.ev.action = Action::NetConnect;
  m.row.ev.path = "tcp:104.16.0.35:443";
  m.row.ev.net = make_net_object(NetProto::Tcp, *IpAddr::parse("104.16.0.35"), 443);
  m.row.ev.net.hosts = {"registry.npmjs.org"};
  m.row.ev.net.names = {"registry.npmjs.org", "r.cdn.test"};
  std::string line = encode(m);
  json j = json::parse(line);
  EXPECT_EQ(j["event"]["net"]["addr"], "104.16.0.35");
  EXPECT_EQ(j["event"]["net"]["port"], 443);
  EXPECT_EQ(j["event"]["net"]["hosts"][0], "registry.npmjs.org");
  auto back = decode(line);
  ASSERT_TRUE(back) << back.error().message;
  const NetObject& n = std::get<EventMsg>(*back).row.ev.net;
  EXPECT_EQ(n.proto, NetProto::Tcp);
  EXPECT_EQ(n.addr_text, "104.16.0.35");
  EXPECT_EQ(n.port, 443);
  EXPECT_EQ(n.hosts, m.row.ev.net.hosts);
  EXPECT_EQ(n.names, m.row.ev.net.names);
  EXPECT_EQ(encode(*back), line);
  j["event"]["net"]["addr"] = "not-an-address";
  auto bad = decode(j.dump());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("\"event.net.addr\" must be an IP address"), std::string::npos)
      << bad.error().message;
}

TEST(Protocol, AskCarriesEverythingAPromptShows) {
  json j = json::parse(encode(sample_ask()));
  EXPECT_EQ(j["type"], "ask");
  EXPECT_EQ(j["ask_id"], 5);
  EXPECT_EQ(j["summary"], "delete 1 file");
  EXPECT_EQ(j["rule"]["id"], "ask-mass-delete");
  EXPECT_EQ(j["rule"]["message"], "many files at once");
  ASSERT_EQ(j["chain"].size(), 3u);
  EXPECT_EQ(j["chain"][0]["argv"][1], "--remove-files");
  EXPECT_EQ(j["chain"][2]["comm"], "claude");
  EXPECT_EQ(j["deadline_ns"], kTs + 60'000'000'000);
  EXPECT_EQ(j["event"]["path"], "/home/u/proj/build/x.o");

  auto back = decode(j.dump());
  ASSERT_TRUE(back);
  const auto& a = std::get<AskMsg>(*back);
  EXPECT_EQ(a.row.verdict.rule_id, "ask-mass-delete");
  EXPECT_EQ(a.row.ev.proc->comm, "tar");
  EXPECT_EQ(a.row.ev.proc->proc_id, 7u);
  EXPECT_EQ(a.chain[1].argv[2], "tar --remove-files -cf /tmp/b.tar build");
}

TEST(Protocol, AnAskMayCarryWhyTheRuleAsks) {
  AskMsg m = sample_ask();
  EXPECT_FALSE(json::parse(encode(m)).contains("why")) << "absent when the client has none";
  m.why = {{"verdict", "ask"}, {"rule", {{"id", "ask-mass-delete"}, {"location", "/p.yaml:4:5"}}}, {"layer", "notify"}};
  auto back = decode(encode(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<AskMsg>(*back).why, m.why);
  json j = json::parse(encode(sample_ask()));
  j["why"] = "not an object";
  auto bad = decode(j.dump());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("why"), std::string::npos) << bad.error().message;
}

TEST(Protocol, NonUtf8BytesSurviveExactly) {
  EventMsg m{3, sample_event()};
  m.row.ev.path = std::string("/tmp/bad\xff\xfe\nname", 15);
  m.row.ev.target = "/tmp/ok";
  std::string line = encode(m);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  json j = json::parse(line);
  EXPECT_TRUE(j["event"].contains("path_b64"));
  auto back = decode(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(std::get<EventMsg>(*back).row.ev.path, m.row.ev.path);

  AskMsg a = sample_ask();
  a.chain[0].argv[1] = std::string("\x80weird", 6);
  auto ab = decode(encode(a));
  ASSERT_TRUE(ab);
  EXPECT_EQ(std::get<AskMsg>(*ab).chain[0].argv[1], a.chain[0].argv[1]);
}

TEST(Protocol, AnswersMapDecisionAndScope) {
  auto d = [](const char* line) {
    auto m = decode(line);
    EXPECT_TRUE(m) << line << ": " << (m ? "" : m.error().message);
    return m ? std::get<Answer>(*m) : Answer{};
  };
  Answer a = d(R"({"type":"answer","ask_id":9,"decision":"allow","scope":"tree"})");
  EXPECT_EQ(a.ask_id, 9u);
  EXPECT_TRUE(a.allow);
  EXPECT_EQ(a.scope, Scope::Tree);
  a = d(R"({"type":"answer","ask_id":9,"decision":"deny"})");  // scope defaults to once
  EXPECT_FALSE(a.allow);
  EXPECT_EQ(a.scope, Scope::Once);
  a = d(R"({"type":"answer","ask_id":9,"decision":"deny","reason":"timeout"})");
  EXPECT_TRUE(a.timeout);
  a = d(R"({"type":"answer","ask_id":9,"decision":"allow","scope":"always","rule":"- id: x","by":"bot","later":1})");
  EXPECT_EQ(a.rule, "- id: x");
  EXPECT_EQ(a.by, "bot");
}

TEST(Protocol, UnknownTypesAndKeysAreIgnored) {
  auto m = decode(R"({"type":"telemetry","x":[1,2,3]})");
  ASSERT_TRUE(m);
  ASSERT_TRUE(std::holds_alternative<Unknown>(*m));
  EXPECT_EQ(std::get<Unknown>(*m).type, "telemetry");
  m = decode(R"({"type":"welcome","version":1,"name":"gui","features":["x"]})");
  ASSERT_TRUE(m);
  EXPECT_EQ(std::get<Welcome>(*m).name, "gui");
  // A trailing CR (a peer writing CRLF) is tolerated.
  m = decode("{\"type\":\"degraded\",\"reason\":\"r\"}\r");
  ASSERT_TRUE(m);
  EXPECT_EQ(std::get<DegradedMsg>(*m).reason, "r");
}

TEST(Protocol, MalformedLinesAreErrorsNotCrashes) {
  const char* bad[] = {
      "",
      "not json",
      "{\"type\":",
      "[1,2]",
      "\"answer\"",
      "{}",
      R"({"type":7})",
      R"({"type":"answer","decision":"allow"})",
      R"({"type":"answer","ask_id":1,"decision":"maybe"})",
      R"({"type":"answer","ask_id":1,"decision":"allow","scope":"forever"})",
      R"({"type":"answer","ask_id":-1,"decision":"allow"})",
      R"({"type":"answer","ask_id":"1","decision":"allow"})",
      R"({"type":"event"})",
      R"({"type":"event","event":{"action":"file.explode"}})",
      R"({"type":"event","event":{"action":"file.delete","pid":"12"}})",
      R"({"type":"event","event":{"action":"file.delete","path_b64":"%%%"}})",
      R"({"type":"ask","ask_id":1,"event":{"action":"file.delete"},"chain":{}})",
      R"({"type":"ask","ask_id":1,"event":{"action":"file.delete"},"chain":[{"argv":[1]}]})",
      R"({"type":"hello","version":1,"session":[]})",
      R"({"type":"end","state":"exploded"})",
  };
  for (const char* line : bad) {
    auto m = decode(line);
    EXPECT_FALSE(m) << line;
    if (!m) {
      EXPECT_FALSE(m.error().message.empty()) << line;
    }
  }
}

TEST(LineReader, SplitsAcrossReads) {
  LineReader r;
  r.feed("{\"a\":1}\n{\"b\"");
  EXPECT_EQ(r.next(), "{\"a\":1}");
  EXPECT_EQ(r.next(), std::nullopt);
  r.feed(":2}\n\n{\"c\":3}\n");
  EXPECT_EQ(r.next(), "{\"b\":2}");
  EXPECT_EQ(r.next(), "");
  EXPECT_EQ(r.next(), "{\"c\":3}");
  EXPECT_EQ(r.next(), std::nullopt);
  EXPECT_EQ(r.buffered(), 0u);
}

TEST(LineReader, SkipsOversizedLinesWithoutBufferingThem) {
  LineReader r(16);
  r.feed("short\n");
  r.feed(std::string(10, 'x'));
  r.feed(std::string(10, 'y'));  // the line is now longer than 16: dropped
  EXPECT_LE(r.buffered(), 16u);
  r.feed(std::string(1000, 'z'));
  EXPECT_LE(r.buffered(), 16u);
  r.feed("zz\nafter\n");
  EXPECT_EQ(r.next(), "short");
  EXPECT_EQ(r.next(), "after");
  EXPECT_EQ(r.next(), std::nullopt);
  EXPECT_EQ(r.oversized(), 1u);
  // A long line arriving in one piece.
  r.feed(std::string(40, 'q') + "\nok\n");
  EXPECT_EQ(r.next(), "ok");
  EXPECT_EQ(r.oversized(), 2u);
}

TEST(LineReader, ManySmallLinesStayCheap) {
  LineReader r;
  std::string chunk;
  for (int i = 0; i < 1000; ++i) chunk += "{\"type\":\"dropped\",\"events\":" + std::to_string(i) + "}\n";
  int n = 0;
  for (int k = 0; k < 20; ++k) {
    r.feed(chunk);
    while (auto l = r.next()) {
      ASSERT_TRUE(decode(*l));
      ++n;
    }
  }
  EXPECT_EQ(n, 20000);
  EXPECT_EQ(r.buffered(), 0u);
}

TEST(Summary, SaysWhatHappensInWords) {
  Event ev;
  ev.action = Action::FileDelete;
  ev.path = "/home/u/proj/build/x.o";
  EXPECT_EQ(summarize(ev, 1, "/home/u/proj"), "delete 1 file");
  EXPECT_EQ(summarize(ev, 240, "/home/u/proj"), "delete 240 files under build/");
  EXPECT_EQ(summarize(ev, 240, "/elsewhere"), "delete 240 files under /home/u/proj/build/");
  ev.path = "/home/u/proj/x.o";
  EXPECT_EQ(summarize(ev, 3, "/home/u/proj"), "delete 3 files under ./");
  ev.action = Action::FileRename;
  ev.is_dir = true;
  ev.path = "/home/u/proj/src";
  ev.target = "/tmp/x";
  EXPECT_EQ(summarize(ev, 1, "/home/u/proj"), "rename directory src/ to /tmp/x");
  ev.action = Action::FileTruncate;
  ev.is_dir = false;
  EXPECT_EQ(summarize(ev, 1), "truncate 1 file");
  ev.action = Action::NetConnect;
  ev.path = "tcp:10.0.0.1:22";
  EXPECT_EQ(summarize(ev, 1), "connect to tcp:10.0.0.1:22");
}

TEST(Summary, NamesTheHostAndWhatWasReadBefore) {
  Event ev;
  ev.action = Action::NetConnect;
  ev.path = "tcp:203.0.113.9:443";
  ev.net = make_net_object(NetProto::Tcp, *IpAddr::parse("203.0.113.9"), 443);
  ev.net.hosts = {"paste.example"};
  EXPECT_EQ(summarize(ev, 1), "connect to paste.example:443 (203.0.113.9)");
  ev.net.hosts.push_back("other.example");
  EXPECT_EQ(summarize(ev, 1), "connect to paste.example (or 1 more names):443 (203.0.113.9)");
  ev.net.hosts.pop_back();
  ev.taint_reads.push_back({0, "/home/u/.aws/credentials", "python3", 42});
  EXPECT_EQ(summarize(ev, 1),
            "connect to paste.example:443 (203.0.113.9), after python3 read /home/u/.aws/credentials");
  ev.taint_reads.push_back({0, "/home/u/.ssh/id_ed25519", "sh", 41});
  EXPECT_EQ(summarize(ev, 1),
            "connect to paste.example:443 (203.0.113.9), after python3 read /home/u/.aws/credentials and 1 more");
  Event udp;
  udp.action = Action::NetSend;
  udp.path = "udp:[2001:db8::1]:53";
  EXPECT_EQ(summarize(udp, 1), "send to udp:[2001:db8::1]:53");
  udp.action = Action::NetBind;
  EXPECT_EQ(summarize(udp, 1), "bind to udp:[2001:db8::1]:53");
  udp.action = Action::NetListen;
  udp.path = "tcp:127.0.0.1:8080";
  EXPECT_EQ(summarize(udp, 1), "listen on tcp:127.0.0.1:8080");
}

TEST(SocketPath, FollowsXdgRuntimeDir) {
  const char* old = getenv("XDG_RUNTIME_DIR");
  std::string saved = old ? old : "";
  setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
  EXPECT_EQ(default_socket_path(), "/run/user/1000/cottonbox/gui.sock");
  unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(default_socket_path(), "");
  setenv("XDG_RUNTIME_DIR", "relative", 1);
  EXPECT_EQ(default_socket_path(), "");
  if (old)
    setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  else
    unsetenv("XDG_RUNTIME_DIR");
}

}  // namespace
}  // namespace cb::proto
