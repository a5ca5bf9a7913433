// The JSON shared by the CLI, the GUI export and the socket protocol.
#include "db/json.h"

#include <gtest/gtest.h>

#include "db/bytes.h"
#include "test_util.h"

namespace cb::db {
namespace {

using nlohmann::json;
using namespace test;

// 2026-11-29T20:51:22.123456789Z
constexpr int64_t kTs = 1795985482'123456789;

EventRow sample() {
  EventRow r = denied(event(42, Action::FileRename, "/home/u/proj/src", process(7, 4001, "rm")), "protect-src");
  r.ev.ts_ns = kTs;
  r.ev.tid = 4002;
  r.ev.target = "/tmp/src";
  r.ev.syscall = "renameat2";
  r.verdict.message = "keep the sources";
  r.count = 2;
  return r;
}

TEST(EventJson, HasTheDocumentedFields) {
  json j = event_json(3, sample());
  EXPECT_EQ(j["ts"], "2026-11-29T20:51:22.123456789Z");
  EXPECT_EQ(j["ts_ns"], kTs);
  EXPECT_EQ(j["session"], 3);
  EXPECT_EQ(j["seq"], 42);
  EXPECT_EQ(j["pid"], 4001);
  EXPECT_EQ(j["tid"], 4002);
  EXPECT_EQ(j["proc_id"], 7);
  EXPECT_EQ(j["comm"], "rm");
  EXPECT_EQ(j["exe"], "/usr/bin/rm");
  EXPECT_EQ(j["action"], "file.rename");
  EXPECT_EQ(j["syscall"], "renameat2");
  EXPECT_EQ(j["path"], "/home/u/proj/src");
  EXPECT_EQ(j["target"], "/tmp/src");
  EXPECT_EQ(j["decision"], "deny");
  EXPECT_EQ(j["verdict"], "deny");
  EXPECT_EQ(j["rule"], "protect-src");
  EXPECT_EQ(j["builtin"], false);
  EXPECT_EQ(j["message"], "keep the sources");
  EXPECT_EQ(j["source"], "seccomp");
  EXPECT_EQ(j["layer"], "notify");
  EXPECT_EQ(j["errno"], EPERM);
  EXPECT_EQ(j["enforced"], true);
  EXPECT_EQ(j["count"], 2);
  // Exact bytes only when the text is not already exact.
  EXPECT_FALSE(j.contains("path_b64"));
  EXPECT_FALSE(j.contains("target_b64"));
  EXPECT_FALSE(j.contains("approval"));
  EXPECT_FALSE(j.contains("aliases"));
}

TEST(EventJson, DefaultRuleAndUnknownErrnoAreNull) {
  EventRow r = sample();
  r.verdict = Verdict{};
  r.allowed = true;
  r.result_errno = -1;
  r.ev.proc = nullptr;
  json j = event_json(1, r);
  EXPECT_TRUE(j["rule"].is_null());
  EXPECT_TRUE(j["errno"].is_null());
  EXPECT_TRUE(j["message"].is_null());
  EXPECT_TRUE(j["proc_id"].is_null());
  EXPECT_EQ(j["decision"], "allow");
  EXPECT_EQ(j["verdict"], "allow");
}

TEST(EventJson, InvalidUtf8IsReplacedAndTheExactBytesFollowInBase64) {
  EventRow r = sample();
  r.ev.path = "/home/u/a\nb\xff";
  r.ev.target = "/tmp/\xc3\x28";
  auto p = std::make_shared<ProcessInfo>(*r.ev.proc);
  p->comm = "r\xfem";
  r.ev.proc = p;
  json j = event_json(1, r);
  EXPECT_EQ(j["path"], "/home/u/a\nb\xef\xbf\xbd");
  ASSERT_TRUE(j.contains("path_b64"));
  EXPECT_EQ(base64_decode(j["path_b64"].get<std::string>()), r.ev.path);
  EXPECT_EQ(base64_decode(j["target_b64"].get<std::string>()), r.ev.target);
  EXPECT_EQ(base64_decode(j["comm_b64"].get<std::string>()), "r\xfem");
  // The line is valid JSON that parses back.
  std::string line = j.dump();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(json::parse(line)["path_b64"], j["path_b64"]);
}

TEST(EventJson, StoredEventAddsIdAndApproval) {
  StoredEvent e;
  e.id = 99;
  e.session = 3;
  e.row = sample();
  e.approval = ApprovalRow{42, kTs, kTs + 1'500'000'000, "gui", "allow-once", ""};
  json j = event_json(e);
  EXPECT_EQ(j["id"], 99);
  ASSERT_TRUE(j.contains("approval"));
  EXPECT_EQ(j["approval"]["answered_by"], "gui");
  EXPECT_EQ(j["approval"]["answer"], "allow-once");
  EXPECT_EQ(j["approval"]["wait_ns"], 1'500'000'000);
  EXPECT_EQ(j["approval"]["asked"], "2026-11-29T20:51:22.123456789Z");
  EXPECT_TRUE(j["approval"]["rule_written"].is_null());
}

TEST(Iso8601, NanosecondsAndInstantsBefore1970) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(iso8601_utc(1), "1970-01-01T00:00:00.000000001Z");
  EXPECT_EQ(iso8601_utc(-1), "1969-12-31T23:59:59.999999999Z");
}

TEST(SessionJson, ArgvKeepsItsBytes) {
  SessionSummary s;
  s.id = 5;
  s.start = session_start("x");
  s.start.argv = {"rm", "\xff"};
  s.state = SessionState::Ended;
  s.end = SessionEnd{s.start.started_ns + 1, 0, 0, SessionState::Ended};
  s.degraded = {"no ebpf"};
  s.events_lost = 12;
  json j = session_json(s);
  EXPECT_EQ(j["id"], 5);
  EXPECT_EQ(j["state"], "ended");
  EXPECT_EQ(j["argv"], (json{"rm", "\xef\xbf\xbd"}));
  ASSERT_TRUE(j.contains("argv_b64"));
  EXPECT_EQ(base64_decode(j["argv_b64"][1].get<std::string>()), "\xff");
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_TRUE(j["exit_signal"].is_null());
  EXPECT_EQ(j["degraded"], (json{"no ebpf"}));
  EXPECT_EQ(j["events_lost"], 12);
  EXPECT_FALSE(j.contains("cwd_b64"));

  s.end.reset();
  s.state = SessionState::Running;
  j = session_json(s);
  EXPECT_EQ(j["state"], "running");
  EXPECT_TRUE(j["exit_status"].is_null());
  EXPECT_TRUE(j["ended_ns"].is_null());
}

TEST(ProcessJson, ExitAndCounts) {
  StoredProcess p;
  p.session = 2;
  p.row = process_row(*process(4, 300, "make", {"make", "-j2"}), 1);
  p.exit = ProcessExit{4, 10, -1, 9};
  p.events = 12;
  p.denials = 2;
  json j = process_json(p);
  EXPECT_EQ(j["proc_id"], 4);
  EXPECT_EQ(j["parent_proc_id"], 1);
  EXPECT_EQ(j["argv"], (json{"make", "-j2"}));
  EXPECT_TRUE(j["exit_status"].is_null());
  EXPECT_EQ(j["exit_signal"], 9);
  EXPECT_EQ(j["events"], 12);
  EXPECT_EQ(j["denials"], 2);
  EXPECT_FALSE(j.contains("argv_b64"));
}

}  // namespace
}  // namespace cb::db
