// What `cottonbox sessions|events|tree` print.
#include "db/report.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"

namespace cb::db {
namespace {

using namespace test;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Captures std::cerr for the lifetime of the object.
class CaptureStderr {
 public:
  CaptureStderr() : old_(std::cerr.rdbuf(buf_.rdbuf())) {}
  ~CaptureStderr() { std::cerr.rdbuf(old_); }
  std::string text() const { return buf_.str(); }

 private:
  std::ostringstream buf_;
  std::streambuf* old_;
};

constexpr int64_t kStart = 1795985482'000000000;  // 2026-11-29 20:51:22 UTC

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    SessionStart start = session_start("build");
    start.started_ns = kStart;
    sid = *w->begin_session(start);

    auto sh = process(1, 100, "sh", {"sh", "-c", "make all"});
    auto make = process(2, 101, "make", {"make", "all"});
    auto cc = process(3, 102, "cc", {"cc", "-c", "a b.c"});
    auto rm = process(4, 103, "rm", {"rm", "-rf", "x\ny"});
    int64_t t = kStart;
    using P = std::pair<std::shared_ptr<const ProcessInfo>, int>;
    for (const auto& [p, parent] : {P{sh, 0}, P{make, 1}, P{cc, 2}, P{rm, 1}}) {
      ProcessRow row = process_row(*p, static_cast<uint64_t>(parent));
      row.started_ns = ++t;
      w->add_process(sid, row);
    }
    w->exit_process(sid, ProcessExit{1, kStart + 9, 0, 0});
    w->exit_process(sid, ProcessExit{2, kStart + 8, 2, 0});
    w->exit_process(sid, ProcessExit{3, kStart + 7, -1, 9});
    w->exit_process(sid, ProcessExit{4, kStart + 6, 1, 0});

    uint64_t seq = 0;
    auto at = [&](EventRow e, int64_t ms) {
      e.ev.ts_ns = kStart + ms * 1'000'000;
      e.seq = ++seq;
      return e;
    };
    for (int i = 0; i < 10; ++i) w->add_event(sid, at(event(0, Action::FileWrite, "/p/o", make), 1));
    w->add_event(sid, at(denied(event(0, Action::FileDelete, "/p/src/a.c", make), "protect"), 2));
    w->add_event(sid, at(denied(event(0, Action::FileDelete, "/p/src/b.c", make), "protect"), 3));
    w->add_event(sid, at(event(0, Action::FileCreate, "/p/a.o", cc), 4));
    // A name built to forge a line of output, and to recolor the terminal.
    EventRow forged = denied(
        event(0, Action::FileDelete, "/p/x\n20:51:22.999  666  rm  file.delete  allow  -  /p/safe", rm), "protect");
    w->add_event(sid, at(forged, 5));
    w->add_event(sid, at(denied(event(0, Action::FileDelete, "/p/\x1b[31mred\xff", rm), "protect"), 6));
    EventRow mv = denied(event(0, Action::FileRename, "/p/src", rm), "protect");
    mv.ev.target = "/tmp/src";
    w->add_event(sid, at(mv, 7));
    EventRow asked = event(0, Action::FileDelete, "/p/build", rm);
    asked.verdict = Verdict{Decision::Ask, "ask-delete", "", false};
    w->add_event(sid, at(asked, 8));
    ASSERT_TRUE(w->end_session(sid, SessionEnd{kStart + 3'500'000'000, 2, 0, SessionState::Ended}));
    r = open_reader(path);
    ASSERT_TRUE(r);
  }

  std::string events_text(EventQuery q) {
    std::ostringstream out;
    EXPECT_EQ(print_events(*r, q, false, out), 0);
    return out.str();
  }

  TempDir dir;
  std::string path = dir.path() + "/audit.db";
  int64_t sid = 0;
  std::unique_ptr<Reader> r;
};

TEST_F(ReportTest, EventsTextEscapesWhatCouldForgeOrRecolorALine) {
  std::string text = events_text({.session = sid, .action = "file.delete"});
  auto ls = lines(text);
  // A header and one line per event: the newline in a name made no line.
  ASSERT_EQ(ls.size(), 1u + 5u) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find("\xff"), std::string::npos);
  EXPECT_NE(text.find("/p/x\\n20:51:22.999  666"), std::string::npos) << text;
  EXPECT_NE(text.find("/p/\\x1b[31mred\\xff"), std::string::npos) << text;
}

TEST_F(ReportTest, EventsTextIsAnAlignedTable) {
  auto ls = lines(events_text({.session = sid, .action = "file.rename"}));
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(ls[0], "TIME          PID  COMM  ACTION       DECISION  RULE     PATH");
  EXPECT_EQ(ls[1], "20:51:22.007  103  rm    file.rename  DENY      protect  /p/src → /tmp/src");

  ls = lines(events_text({.session = sid, .decision = "ask"}));
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_NE(ls[1].find("ask→allow  ask-delete"), std::string::npos) << ls[1];
  ls = lines(events_text({.session = sid, .pid = 102}));
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_NE(ls[1].find("allow     -     /p/a.o"), std::string::npos) << ls[1];  // default rule
}

TEST_F(ReportTest, EventsJsonIsOneObjectPerLine) {
  std::ostringstream out;
  ASSERT_EQ(print_events(*r, {.session = sid}, true, out), 0);
  auto ls = lines(out.str());
  ASSERT_EQ(ls.size(), 17u);
  for (const auto& l : ls) {
    auto j = nlohmann::json::parse(l);
    EXPECT_EQ(j["session"], sid);
    for (auto key : {"ts", "pid", "comm", "action", "syscall", "path", "target", "decision", "rule", "source"})
      EXPECT_TRUE(j.contains(key)) << key;
  }
  auto red = nlohmann::json::parse(ls[14]);
  EXPECT_TRUE(red.contains("path_b64"));
}

TEST_F(ReportTest, EventsOfAMissingSessionOrWithABadFilterExit125) {
  CaptureStderr err;
  std::ostringstream out;
  EXPECT_EQ(print_events(*r, {.session = 42}, false, out), 125);
  EXPECT_EQ(err.text(), "cottonbox: no session 42 in " + path + "\n");
  EXPECT_EQ(print_events(*r, {.action = "file.nuke"}, true, out), 125);
  EXPECT_NE(err.text().find("cottonbox: unknown action 'file.nuke'"), std::string::npos);
  EXPECT_EQ(out.str(), "");
}

TEST_F(ReportTest, TreeShowsArgvExitAndCounts) {
  std::ostringstream out;
  ASSERT_EQ(print_tree(*r, sid, false, out), 0);
  EXPECT_EQ(out.str(),
            "session 1: [build] sh -c 'make all'  (ended 2)\n"
            "100 sh -c 'make all'  exit 0  0 actions\n"
            "├─ 101 make all  exit 2  12 actions, 2 denied\n"
            "│  └─ 102 cc -c 'a b.c'  killed by SIGKILL  1 action\n"
            "└─ 103 rm -rf $'x\\ny'  exit 1  4 actions, 3 denied\n");
}

TEST_F(ReportTest, TreeJsonHasDepths) {
  std::ostringstream out;
  ASSERT_EQ(print_tree(*r, sid, true, out), 0);
  auto ls = lines(out.str());
  ASSERT_EQ(ls.size(), 4u);
  std::vector<int> depths;
  for (const auto& l : ls) depths.push_back(nlohmann::json::parse(l)["depth"]);
  EXPECT_EQ(depths, (std::vector<int>{0, 1, 2, 1}));
  EXPECT_EQ(nlohmann::json::parse(ls[1])["denials"], 2);
}

TEST_F(ReportTest, TreeOfAMissingSessionExits125) {
  CaptureStderr err;
  std::ostringstream out;
  EXPECT_EQ(print_tree(*r, 42, false, out), 125);
  EXPECT_EQ(err.text(), "cottonbox: no session 42 in " + path + "\n");
}

TEST_F(ReportTest, LostRecordsAreNoted) {
  r.reset();
  {
    auto w = open_writer(path);
    w->set_events_lost(sid, 7);
  }
  r = open_reader(path);
  std::ostringstream tree;
  ASSERT_EQ(print_tree(*r, sid, false, tree), 0);
  EXPECT_NE(tree.str().find("note: session 1 lost 7 tracer records"), std::string::npos);
  EXPECT_NE(events_text({.session = sid}).find("lost 7 tracer records"), std::string::npos);
  std::ostringstream sessions;
  ASSERT_EQ(print_sessions(*r, false, sessions), 0);
  auto ls = lines(sessions.str());
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_NE(ls[0].find("LOST"), std::string::npos);
  EXPECT_NE(ls[1].find("   7  [build]"), std::string::npos) << ls[1];
}

TEST_F(ReportTest, SessionsTableShowsStatesAndMarks) {
  r.reset();
  {
    auto w = open_writer(path);
    SessionStart running = session_start("live");
    running.started_ns = kStart;
    running.observe = true;
    int64_t live = *w->begin_session(running);
    w->add_degraded(live, "no ebpf");
    SessionStart killed = session_start("killed");
    killed.started_ns = kStart;
    int64_t k = *w->begin_session(killed);
    ASSERT_TRUE(w->end_session(k, SessionEnd{kStart + 125'000'000'000, 137, 9, SessionState::Ended}));
    SessionStart gone = session_start("gone");
    gone.started_ns = kStart;
    gone.boot_id = "another boot";
    ASSERT_TRUE(w->begin_session(gone));
  }
  r = open_reader(path);
  std::ostringstream out;
  ASSERT_EQ(print_sessions(*r, false, out), 0);
  auto ls = lines(out.str());
  ASSERT_EQ(ls.size(), 5u) << out.str();
  // Columns line up: every start time sits under STARTED.
  size_t col = ls[0].find("STARTED");
  ASSERT_NE(col, std::string::npos);
  for (size_t i = 1; i < ls.size(); ++i) EXPECT_EQ(ls[i].find("2026-11-29"), col) << ls[i];
  EXPECT_NE(ls[1].find("ended 2 "), std::string::npos) << ls[1];
  EXPECT_NE(ls[1].find("2026-11-29 20:51:22"), std::string::npos) << ls[1];
  EXPECT_NE(ls[1].find("3.5s"), std::string::npos) << ls[1];
  EXPECT_NE(ls[1].find("[build] sh -c 'make all'"), std::string::npos) << ls[1];
  EXPECT_NE(ls[2].find("running DEGRADED OBSERVE"), std::string::npos) << ls[2];
  EXPECT_NE(ls[3].find("ended SIGKILL"), std::string::npos) << ls[3];
  EXPECT_NE(ls[3].find("2m05s"), std::string::npos) << ls[3];
  EXPECT_NE(ls[4].find("aborted"), std::string::npos) << ls[4];

  std::ostringstream json;
  ASSERT_EQ(print_sessions(*r, true, json), 0);
  auto js = lines(json.str());
  ASSERT_EQ(js.size(), 4u);
  EXPECT_EQ(nlohmann::json::parse(js[3])["state"], "aborted");
  EXPECT_EQ(nlohmann::json::parse(js[0])["denials"], 5);
}

TEST(ShellQuote, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(shell_quote("make"), "make");
  EXPECT_EQ(shell_quote("--out=/a/b.c"), "--out=/a/b.c");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("a\nb"), "$'a\\nb'");
  EXPECT_EQ(shell_quote("it's\n"), "$'it\\'s\\n'");
  EXPECT_EQ(shell_quote("\xff"), "$'\\xff'");
  EXPECT_EQ(shell_join({"rm", "-rf", "my dir"}), "rm -rf 'my dir'");
}

TEST(EscapeForTerminal, ShowsInvisibleAndReorderingCharacters) {
  EXPECT_EQ(escape_for_terminal("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(escape_for_terminal("a\\b"), "a\\\\b");
  EXPECT_EQ(escape_for_terminal("a\tb\r"), "a\\tb\\r");
  EXPECT_EQ(escape_for_terminal("x\xe2\x80\xaetxt.exe"), "x\\u202etxt.exe");  // RTL override
  EXPECT_EQ(escape_for_terminal("\xc2\x85"), "\\xc2\\x85");                   // C1 control
  EXPECT_EQ(escape_for_terminal("\x7f"), "\\x7f");
}

}  // namespace
}  // namespace cb::db
