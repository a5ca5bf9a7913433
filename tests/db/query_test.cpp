// EventQuery: the filters of `cottonbox events` and the GUI's review.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "db/store.h"
#include "test_util.h"

namespace cb::db {
namespace {

using namespace test;

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    a = *w->begin_session(session_start("a"));
    b = *w->begin_session(session_start("b"));
    auto bash = process(1, 100, "bash");
    auto rm = process(2, 101, "rm");
    auto tar = process(3, 102, "tar");
    w->add_process(a, process_row(*bash));
    w->add_process(a, process_row(*rm, 1));
    w->add_process(a, process_row(*tar, 1));
    auto add = [&](int64_t s, EventRow e) { w->add_event(s, std::move(e)); };
    add(a, event(1, Action::FileRead, "/proj/src/a.c", bash));
    add(a, event(2, Action::FileWrite, "/proj/src/a.c", bash));
    add(a, denied(event(3, Action::FileDelete, "/proj/src/a.c", rm), "protect"));
    EventRow out = denied(event(4, Action::FileRename, "/proj/src/b.c", tar), "protect");
    out.ev.target = "/tmp/b.c";
    add(a, out);
    EventRow in = event(5, Action::FileRename, "/tmp/x", tar);
    in.ev.target = "/proj/src/x";
    add(a, in);
    add(a, event(6, Action::NetConnect, "tcp:127.0.0.1:80", bash));
    EventRow asked = event(7, Action::FileDelete, "/proj/src/deep/dir/c.o", rm);
    asked.verdict = Verdict{Decision::Ask, "ask-mass-delete", "", false};
    add(a, asked);
    EventRow logged = event(8, Action::FileTruncate, "/proj/README", bash);
    logged.verdict = Verdict{Decision::Log, "log-truncate", "", false};
    add(a, logged);
    add(a, event(9, Action::ProcExec, "/usr/bin/rm", bash));
    add(a, denied(event(10, Action::FileDelete, "/proj", rm), "protect"));
    auto other = process(1, 200, "python3");
    w->add_process(b, process_row(*other));
    add(b, event(1, Action::FileDelete, "/proj/src/a.c", other));
    add(b, event(2, Action::FileRead, "/home/u/.ssh/id_rsa", other));
    ASSERT_TRUE(w->flush());
    r = open_reader(path);
    ASSERT_TRUE(r);
  }

  // "session:seq" of each matching event, in order.
  std::vector<std::string> query(EventQuery q) {
    auto events = r->events(q);
    EXPECT_TRUE(events) << events.error().message;
    std::vector<std::string> out;
    if (!events) return out;
    for (const auto& e : *events) out.push_back((e.session == a ? "a" : "b") + std::to_string(e.row.seq));
    return out;
  }
  using V = std::vector<std::string>;

  TempDir dir;
  std::string path = dir.path() + "/audit.db";
  int64_t a = 0, b = 0;
  std::unique_ptr<Reader> r;
};

TEST_F(QueryTest, SessionFilter) {
  EXPECT_EQ(query({.session = b}), (V{"b1", "b2"}));
  EXPECT_EQ(query({}).size(), 12u);
  EXPECT_EQ(query({.session = 999}), V{});
}

TEST_F(QueryTest, ActionByNameAndByGroup) {
  EXPECT_EQ(query({.session = a, .action = "file.delete"}), (V{"a3", "a7", "a10"}));
  // file.mutate: every file action but reading.
  EXPECT_EQ(query({.session = a, .action = "file.mutate"}), (V{"a2", "a3", "a4", "a5", "a7", "a8", "a10"}));
  EXPECT_EQ(query({.session = a, .action = "file.*"}).size(), 8u);
  EXPECT_EQ(query({.session = a, .action = "net.*"}), (V{"a6"}));
  EXPECT_EQ(query({.action = "*"}).size(), 12u);
  auto bad = r->events({.action = "file.destroy"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown action 'file.destroy'"), std::string::npos);
  EXPECT_NE(bad.error().message.find("file.mutate"), std::string::npos);  // the known names
  // Even when nothing else would match.
  EXPECT_FALSE(r->events({.session = 999, .action = "file.destroy"}));
  EXPECT_FALSE(r->events({.action = "file.destroy", .path_glob = "/nowhere/**"}));
}

TEST_F(QueryTest, DecisionMatchesTheOutcomeAskAndLogMatchTheVerdict) {
  EXPECT_EQ(query({.session = a, .decision = "deny"}), (V{"a3", "a4", "a10"}));
  EXPECT_EQ(query({.session = a, .decision = "allow"}).size(), 7u);
  EXPECT_EQ(query({.session = a, .decision = "ask"}), (V{"a7"}));
  EXPECT_EQ(query({.session = a, .decision = "log"}), (V{"a8"}));
  auto bad = r->events({.decision = "maybe"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown decision 'maybe'"), std::string::npos);
}

TEST_F(QueryTest, PathGlobMatchesPathOrTargetAcrossSessions) {
  // "**" crosses directories, and "dir/**" includes dir itself.
  EXPECT_EQ(query({.path_glob = "/proj/**"}), (V{"a1", "a2", "a3", "a4", "a5", "a7", "a8", "a10", "b1"}));
  // "*" stays within one component.
  EXPECT_EQ(query({.path_glob = "/proj/src/*.c"}), (V{"a1", "a2", "a3", "a4", "b1"}));
  // The target of a rename into the tree counts, as does one out of it.
  EXPECT_EQ(query({.path_glob = "/proj/src/x"}), (V{"a5"}));
  EXPECT_EQ(query({.path_glob = "/tmp/*"}), (V{"a4", "a5"}));
  // No literal prefix at all.
  EXPECT_EQ(query({.path_glob = "**/*.o"}), (V{"a7"}));
  EXPECT_EQ(query({.path_glob = "**/.ssh/**"}), (V{"b2"}));
  // "Who touched this file?"
  EXPECT_EQ(query({.path_glob = "/proj/src/a.c"}), (V{"a1", "a2", "a3", "b1"}));
  EXPECT_EQ(query({.path_glob = "/nowhere/**"}), V{});
}

TEST_F(QueryTest, FiltersCombine) {
  EXPECT_EQ(query({.session = b, .path_glob = "/proj/**"}), (V{"b1"}));
  EXPECT_EQ(query({.action = "file.delete", .decision = "allow", .path_glob = "/proj/**"}), (V{"a7", "b1"}));
  EXPECT_EQ(query({.session = a, .pid = 101}), (V{"a3", "a7", "a10"}));
  EXPECT_EQ(query({.session = a, .proc_id = 3}), (V{"a4", "a5"}));
  EXPECT_EQ(query({.pid = 200}), (V{"b1", "b2"}));
}

TEST_F(QueryTest, PagingWithAfterIdAndLimit) {
  std::vector<std::string> all;
  int64_t after = 0;
  for (int page = 0; page < 10; ++page) {
    auto events = r->events({.after_id = after, .limit = 5});
    ASSERT_TRUE(events);
    if (events->empty()) break;
    EXPECT_LE(events->size(), 5u);
    for (const auto& e : *events) all.push_back((e.session == a ? "a" : "b") + std::to_string(e.row.seq));
    after = events->back().id;
  }
  EXPECT_EQ(all, query({}));
  // With a glob the limit counts matches, not rows looked at.
  EXPECT_EQ(query({.path_glob = "/proj/**", .limit = 2}), (V{"a1", "a2"}));
  auto first = r->events({.path_glob = "/proj/**", .limit = 1});
  ASSERT_TRUE(first);
  EXPECT_EQ(query({.path_glob = "/proj/**", .after_id = first->back().id, .limit = 2}), (V{"a2", "a3"}));
}

TEST_F(QueryTest, ABadGlobIsAnError) {
  auto bad = r->events({.path_glob = "/proj/[abc"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("bad path glob '/proj/[abc'"), std::string::npos) << bad.error().message;
}

TEST_F(QueryTest, AnUnknownStoredActionIsAnErrorNeverAnotherAction) {
  // As a newer cottonbox would write it.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE events SET action = 'net.teleport' WHERE seq = 6", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto all = r->events({});
  ASSERT_FALSE(all) << "read as some other action";
  EXPECT_NE(all.error().message.find("unknown action 'net.teleport'"), std::string::npos) << all.error().message;
}

}  // namespace
}  // namespace cb::db
