// Schema 6: each process image's identity (how it was found, or why there
// is none) stored and read back exactly, and a file the previous release
// wrote (tests/fixtures/v5_identity_session.sql, a real session) read as it
// is and upgraded in place.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <sstream>
#include <string>

#include "db/json.h"
#include "db/store.h"
#include "test_util.h"

namespace cb::db {
namespace {

using namespace test;

std::string query_text(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string out = "<none>";
  if (sqlite3_step(s) == SQLITE_ROW)
    out =
        sqlite3_column_type(s, 0) == SQLITE_NULL ? "<null>" : reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

void exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(FIXTURES_DIR) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_FALSE(ss.str().empty()) << name;
  return ss.str();
}

std::shared_ptr<ProcessInfo> image(uint64_t proc_id, std::string comm, std::string exe, std::vector<std::string> names,
                                   IdentityFacts facts) {
  auto p = std::make_shared<ProcessInfo>(*process(proc_id, static_cast<int32_t>(100 + proc_id), comm));
  p->exe = std::move(exe);
  p->names = std::move(names);
  p->identity = std::move(facts);
  return p;
}

TEST(Schema6, IdentitiesAreStoredAndReadBackExactly) {
  TempDir dir;
  std::string path = dir.path() + "/audit.db";
  auto w = open_writer(path);
  auto sid = w->begin_session(session_start("s"));
  ASSERT_TRUE(sid);
  const FileId git_file{65024, 247417, 1759839728, 5};
  const FileId copy_file{65024, 11591751, 1796194700, 107134165};
  auto git = image(1, "git", "/usr/bin/git", {"git", "vcs"}, {IdentityCheck::Trusted, git_file, ""});
  // A copy of rm called git, under a directory whose name is not UTF-8.
  std::string odd = "/tmp/x\xff/bin/git";
  auto copy = image(2, "git", odd, {}, {IdentityCheck::NotTrusted, copy_file, odd + " is no file the policy trusts"});
  auto preloaded = image(3, "git", "/usr/bin/git", {},
                         {IdentityCheck::Disqualified, git_file,
                          "it was started with LD_PRELOAD set: the dynamic loader runs code that is not its file's"});
  auto unknown = image(4, "x", "", {}, {});
  w->add_process(*sid, process_row(*git));
  w->add_process(*sid, process_row(*copy, 1));
  w->add_process(*sid, process_row(*preloaded, 1));
  int seq = 0;
  for (const auto& p : {git, copy, preloaded, unknown})
    for (int i = 0; i < 3; ++i) {
      ++seq;
      w->add_event(*sid, event(seq, Action::FileDelete, "/w/.git/f" + std::to_string(seq), p));
    }
  // Process 3 execs the real git, clean this time: the processes row follows.
  auto clean = image(3, "git", "/usr/bin/git", {"git"}, {IdentityCheck::Trusted, git_file, ""});
  w->exec_process(*sid, ProcessExec{3, now_ns(), "git", "/usr/bin/git", {"git", "gc"}, clean->names, clean->identity});
  w->add_event(*sid, event(++seq, Action::FileDelete, "/w/.git/after-exec", clean));
  ASSERT_TRUE(w->flush());

  // One images row per image, its identity readable with plain SQL.
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM images"), "5");
  EXPECT_EQ(query_text(path, "SELECT json_extract(identity, '$.check') FROM images WHERE proc_id = 2"), "not-trusted");
  EXPECT_EQ(query_text(path, "SELECT json_extract(identity, '$.names[1]') FROM images WHERE proc_id = 1"), "vcs");

  auto r = open_reader(path);
  auto got = r->events(EventQuery{});
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 13u);
  for (size_t i = 0; i < got->size(); ++i) {
    const StoredEvent& e = (*got)[i];
    const ProcessInfo& want = i < 3 ? *git : i < 6 ? *copy : i < 9 ? *preloaded : i < 12 ? *unknown : *clean;
    ASSERT_TRUE(e.row.ev.proc);
    EXPECT_TRUE(e.identity_recorded) << i;
    EXPECT_EQ(e.row.ev.proc->names, want.names) << i;
    EXPECT_EQ(e.row.ev.proc->identity, want.identity) << i;
    EXPECT_EQ(e.row.ev.proc->comm, want.comm) << i;
    EXPECT_EQ(e.row.ev.proc->exe, want.exe) << i;
  }
  // The JSON every reader of the trail gets: the identity, or why none.
  nlohmann::json j = event_json((*got)[0]);
  EXPECT_EQ(j["identity"], (nlohmann::json{"git", "vcs"}));
  EXPECT_FALSE(j.contains("no_identity"));
  j = event_json((*got)[3]);
  EXPECT_FALSE(j.contains("identity"));
  ASSERT_TRUE(j.contains("no_identity_b64")) << "the exact bytes of a path that is not UTF-8";
  EXPECT_EQ(j["comm"], "git");

  // The processes table: each process's latest image.
  auto procs = r->processes(*sid);
  ASSERT_TRUE(procs);
  ASSERT_EQ(procs->size(), 3u);
  EXPECT_TRUE((*procs)[0].identity_recorded);
  EXPECT_EQ((*procs)[0].row.names, git->names);
  EXPECT_EQ((*procs)[1].row.names, std::vector<std::string>{});
  EXPECT_EQ((*procs)[1].row.identity, copy->identity);
  EXPECT_EQ((*procs)[2].row.names, std::vector<std::string>{"git"}) << "after its exec";
  EXPECT_EQ((*procs)[2].row.identity.check, IdentityCheck::Trusted);
  nlohmann::json pj = process_json((*procs)[1]);
  EXPECT_TRUE(pj["identity"].is_array() && pj["identity"].empty()) << pj;
  auto chain = r->process_chain(*sid, 3);
  ASSERT_TRUE(chain);
  ASSERT_EQ(chain->size(), 2u);
  EXPECT_EQ((*chain)[1].row.names, git->names);
}

// A real session the previous release recorded (the fixture says how):
// read as it is, nothing recorded is made up (the process named git by its
// command name has no identity), and the first writer upgrades the file.
TEST(Schema6, AVersion5FileIsReadAsItIsAndUpgradedByTheFirstWriter) {
  TempDir dir;
  std::string path = dir.path() + "/audit.db";
  exec(path, fixture("v5_identity_session.sql"));
  EXPECT_EQ(query_text(path, "PRAGMA user_version"), "5");
  {
    auto r = open_reader(path);
    EXPECT_EQ(r->schema_version(), 5);
    auto got = r->events(EventQuery{});
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_EQ(got->size(), 22u);
    const StoredEvent& fake = (*got)[2];  // the copy of rm called git, denied
    EXPECT_EQ(fake.row.ev.path, "/tmp/cb-v5-fixture/w/.git/COMMIT_EDITMSG");
    ASSERT_TRUE(fake.row.ev.proc);
    EXPECT_EQ(fake.row.ev.proc->comm, "git");
    EXPECT_EQ(fake.row.ev.proc->exe, "/tmp/cb-v5-fixture/bin/git");
    for (const auto& e : *got) {
      EXPECT_TRUE(e.image_recorded);
      EXPECT_FALSE(e.identity_recorded);
      if (e.row.ev.proc) {
        EXPECT_TRUE(e.row.ev.proc->names.empty()) << "never the command name";
      }
    }
    auto procs = r->processes(1);
    ASSERT_TRUE(procs);
    ASSERT_FALSE(procs->empty());
    EXPECT_FALSE(procs->front().identity_recorded);
    EXPECT_TRUE(process_json(procs->front())["identity"].is_null());
  }
  EXPECT_EQ(query_text(path, "PRAGMA user_version"), "5") << "a reader never writes";

  ASSERT_TRUE(Writer::create_files(path));
  {
    auto w = open_writer(path);
    auto sid = w->begin_session(session_start("after"));
    ASSERT_TRUE(sid);
    auto git = image(1, "git", "/usr/bin/git", {"git"}, {IdentityCheck::Trusted, FileId{1, 2, 3, 4}, ""});
    w->add_process(*sid, process_row(*git));
    w->add_event(*sid, event(1, Action::FileDelete, "/w/.git/index.lock", git));
    ASSERT_TRUE(w->flush());
  }
  EXPECT_EQ(query_text(path, "PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM pragma_table_info('images') WHERE name = 'identity'"), "1");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM pragma_table_info('processes') WHERE name = 'identity'"), "1");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM images WHERE identity IS NULL AND session = 1"),
            query_text(path, "SELECT count(*) FROM images WHERE session = 1"))
      << "the old rows stay what they were";
  auto r = open_reader(path);
  auto got = r->events(EventQuery{});
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 23u);
  EXPECT_FALSE((*got)[2].identity_recorded);
  EXPECT_TRUE(got->back().identity_recorded);
  EXPECT_EQ(got->back().row.ev.proc->names, std::vector<std::string>{"git"});
  auto old_procs = r->processes(1);
  ASSERT_TRUE(old_procs);
  EXPECT_FALSE(old_procs->front().identity_recorded);
}

}  // namespace
}  // namespace cb::db
