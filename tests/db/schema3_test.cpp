// Schema 3: what a replay needs, stored and read back exactly, and a
// version 2 file (the layout the last release wrote) upgraded in place.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "db/store.h"
#include "test_util.h"

namespace cb::db {
namespace {

using namespace test;

// The version 2 layout, as db/schema.cpp wrote it before schema 3.
constexpr const char* kVersion2 = R"sql(
CREATE TABLE sessions (
  id             INTEGER PRIMARY KEY,
  uuid           TEXT NOT NULL,
  name           TEXT NOT NULL DEFAULT '',
  argv           TEXT NOT NULL DEFAULT '[]',
  cwd            BLOB,
  uid            INTEGER NOT NULL,
  user           TEXT NOT NULL DEFAULT '',
  hostname       TEXT NOT NULL DEFAULT '',
  policy_files   TEXT NOT NULL DEFAULT '[]',
  policy_hash    TEXT NOT NULL DEFAULT '',
  started_ns     INTEGER NOT NULL,
  ended_ns       INTEGER,
  exit_status    INTEGER,
  exit_signal    INTEGER,
  state          TEXT NOT NULL DEFAULT 'running'
                 CHECK (state IN ('running', 'ended', 'aborted')),
  degraded       TEXT NOT NULL DEFAULT '[]',
  observe        INTEGER NOT NULL DEFAULT 0,
  tracer         TEXT NOT NULL DEFAULT '',
  ask_mode       TEXT NOT NULL DEFAULT '',
  supervisor_pid INTEGER NOT NULL,
  boot_id        TEXT NOT NULL DEFAULT '',
  events_lost    INTEGER NOT NULL DEFAULT 0,
  -- Kept up to date by the writer with each batch, so that listing sessions
  -- never scans the events table.  Sums of events.count.
  n_events       INTEGER NOT NULL DEFAULT 0,
  n_denials      INTEGER NOT NULL DEFAULT 0,
  n_asks         INTEGER NOT NULL DEFAULT 0,
  last_event_ns  INTEGER,
  first_event_id INTEGER,
  last_event_id  INTEGER
);

CREATE TABLE processes (
  session        INTEGER NOT NULL,
  proc_id        INTEGER NOT NULL,
  parent_proc_id INTEGER NOT NULL DEFAULT 0,
  pid            INTEGER,
  ppid           INTEGER,
  uid            INTEGER,
  comm           TEXT,
  exe            BLOB,
  argv           BLOB,
  cwd            BLOB,
  started_ns     INTEGER,
  exec_ns        INTEGER,
  ended_ns       INTEGER,
  exit_status    INTEGER,
  exit_signal    INTEGER,
  UNIQUE (session, proc_id)  -- also serves "the processes of a session"
);

CREATE TABLE events (
  id         INTEGER PRIMARY KEY,
  session    INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  ts_ns      INTEGER NOT NULL,
  pid        INTEGER NOT NULL,
  tid        INTEGER NOT NULL,
  proc_id    INTEGER,
  comm       TEXT,
  action     TEXT NOT NULL,
  syscall    TEXT,
  path       BLOB,
  target     BLOB,
  aliases    BLOB,
  flags      INTEGER NOT NULL,
  is_dir     INTEGER NOT NULL,
  target_pid INTEGER NOT NULL,
  -- Not "IN (...)": SQLite builds an ephemeral index for an IN list on each
  -- run of a statement, which cost the writer a fifth of its time.
  decision   TEXT NOT NULL CHECK (decision = 'allow' OR decision = 'deny'),
  verdict    TEXT NOT NULL CHECK (verdict = 'allow' OR verdict = 'deny' OR
                                  verdict = 'ask' OR verdict = 'log'),
  rule       TEXT,
  builtin    INTEGER NOT NULL,
  message    TEXT,
  source     TEXT NOT NULL,
  layer      TEXT NOT NULL,
  errno      INTEGER,
  enforced   INTEGER NOT NULL,
  count      INTEGER NOT NULL
);

-- Paths and targets of events, once per session (mostly): first_id is the
-- first event that named the path there.
CREATE TABLE touched_paths (
  path     BLOB NOT NULL,
  session  INTEGER NOT NULL,
  first_id INTEGER NOT NULL
);

CREATE TABLE approvals (
  session      INTEGER NOT NULL,
  event_seq    INTEGER NOT NULL,
  asked_ns     INTEGER NOT NULL,
  answered_ns  INTEGER NOT NULL,
  answered_by  TEXT NOT NULL,
  answer       TEXT NOT NULL,
  rule_written TEXT,
  UNIQUE (session, event_seq)
);
)sql";

int64_t count(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  int64_t n = -1;
  if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  sqlite3_close(db);
  return n;
}

void exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_close(db);
}

TEST(Schema3, ImagesCountsFacetsAndThePolicyAreStoredExactly) {
  TempDir dir;
  std::string path = dir.path() + "/audit.db";
  auto w = open_writer(path);
  SessionStart ss = session_start("s");
  PolicySnapshot snap;
  snap.files = {{"/p/a.yaml", "version: 1\nrules: []\n"}, {"/p/b\xff.yaml", std::string("x\0y", 3)}};
  snap.vars = {{"CWD", "/w"}, {"HOME", "/h"}};
  snap.protected_files = {"/db", "/db-wal"};
  snap.protected_dirs = {"/run/u/cottonbox"};
  ss.policy = snap;
  auto sid = w->begin_session(ss);
  ASSERT_TRUE(sid);

  auto shell = std::make_shared<ProcessInfo>(*process(1, 100, "sh", {"sh", "-c", "rm x"}));
  shell->ancestors = {"bash", "claude"};
  shell->cwd = "/w";
  shell->exe = "/bin/sh";
  shell->uid = 1000;
  auto after_exec = std::make_shared<ProcessInfo>(*shell);
  after_exec->comm = "rm";
  after_exec->exe = "/usr/bin/rm";
  after_exec->argv = {"rm", "x"};
  for (int i = 0; i < 40; ++i) {
    EventRow r = event(i + 1, Action::FileWrite, "/w/f" + std::to_string(i), i < 20 ? shell : after_exec);
    r.ev.proc_deletes = static_cast<uint32_t>(i);
    if (i == 7) r.facets = {FacetRow{Action::FileDelete, "/w/\xfe", "", {"/alias"}, true, 0}};
    w->add_event(*sid, std::move(r));
  }
  ASSERT_TRUE(w->flush());
  // One row per process image, however many events point at it.
  EXPECT_EQ(count(path, "SELECT count(*) FROM images"), 2);
  EXPECT_EQ(count(path, "SELECT count(*) FROM policies"), 1);

  auto r = open_reader(path);
  EXPECT_EQ(r->schema_version(), kSchemaVersion);
  auto got = r->events(EventQuery{});
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 40u);
  for (size_t i = 0; i < got->size(); ++i) {
    const StoredEvent& e = (*got)[i];
    EXPECT_TRUE(e.image_recorded);
    EXPECT_TRUE(e.deletes_recorded);
    EXPECT_TRUE(e.facets_recorded);
    EXPECT_EQ(e.row.ev.proc_deletes, i);
    ASSERT_TRUE(e.row.ev.proc);
    const ProcessInfo& p = *e.row.ev.proc;
    EXPECT_EQ(p.comm, i < 20 ? "sh" : "rm");
    EXPECT_EQ(p.exe, i < 20 ? "/bin/sh" : "/usr/bin/rm");
    EXPECT_EQ(p.argv, i < 20 ? shell->argv : after_exec->argv);
    EXPECT_EQ(p.ancestors, shell->ancestors);
    EXPECT_EQ(p.cwd, "/w");
    EXPECT_EQ(p.uid, 1000u);
    EXPECT_EQ(e.row.facets.size(), i == 7 ? 1u : 0u);
  }
  const FacetRow& f = (*got)[7].row.facets.at(0);
  EXPECT_EQ(f.action, Action::FileDelete);
  EXPECT_EQ(f.path, "/w/\xfe");
  EXPECT_EQ(f.aliases, std::vector<std::string>{"/alias"});
  EXPECT_TRUE(f.is_dir);

  auto one = r->event((*got)[30].id);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->row.ev.path, "/w/f30");
  EXPECT_FALSE(r->event(99999));
  EXPECT_EQ(*r->last_event_id(), (*got).back().id);

  auto pol = r->policy(*sid);
  ASSERT_TRUE(pol);
  ASSERT_TRUE(*pol);
  EXPECT_EQ((*pol)->files, snap.files);
  EXPECT_EQ((*pol)->vars, snap.vars);
  EXPECT_EQ((*pol)->protected_files, snap.protected_files);
  EXPECT_EQ((*pol)->protected_dirs, snap.protected_dirs);
  EXPECT_EQ(policy_snapshot_hash(**pol), policy_snapshot_hash(snap));
}

TEST(Schema3, AVersion2FileIsReadAsItIsAndUpgradedByTheFirstWriter) {
  TempDir dir;
  std::string path = dir.path() + "/audit.db";
  exec(path, std::string(kVersion2) + "PRAGMA user_version = 2;");
  exec(path,
       "INSERT INTO sessions (id, uuid, uid, started_ns, supervisor_pid, state, first_event_id, last_event_id,"
       " n_events) VALUES (1, 'u', 0, 1, 1, 'ended', 1, 1, 1);"
       "INSERT INTO processes (session, proc_id, pid, comm, exe, argv) VALUES (1, 5, 50, 'rm', '/usr/bin/rm',"
       " CAST('rm' || char(0) || 'x' || char(0) AS BLOB));"
       "INSERT INTO events (id, session, seq, ts_ns, pid, tid, proc_id, comm, action, path, flags, is_dir,"
       " target_pid, decision, verdict, rule, builtin, source, layer, enforced, count)"
       " VALUES (1, 1, 1, 2, 50, 50, 5, 'rm', 'file.delete', CAST('/w/x' AS BLOB), 0, 0, 0, 'deny', 'deny',"
       " 'protect', 0, 'seccomp', 'notify', 1, 1);");
  {
    auto r = open_reader(path);  // read-only: nothing changes
    EXPECT_EQ(r->schema_version(), 2);
    auto got = r->events(EventQuery{});
    ASSERT_TRUE(got);
    ASSERT_EQ(got->size(), 1u);
    EXPECT_FALSE(got->front().image_recorded);
    EXPECT_FALSE(got->front().deletes_recorded);
    ASSERT_TRUE(got->front().row.ev.proc);
    EXPECT_EQ(got->front().row.ev.proc->exe, "/usr/bin/rm");
    auto pol = r->policy(1);
    ASSERT_TRUE(pol);
    EXPECT_FALSE(*pol);
  }
  EXPECT_EQ(count(path, "PRAGMA user_version"), 2);
  ASSERT_TRUE(Writer::create_files(path));  // an older audit database is ours: companions are made
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  EXPECT_EQ(count(path, "PRAGMA user_version"), kSchemaVersion);
  auto sid = w->begin_session(session_start("after"));
  ASSERT_TRUE(sid);
  auto p = process(1, 10, "sh");
  w->add_event(*sid, event(1, Action::FileWrite, "/w/y", p));
  ASSERT_TRUE(w->flush());
  auto r = open_reader(path);
  auto got = r->events(EventQuery{});
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 2u);
  EXPECT_FALSE((*got)[0].image_recorded) << "the old row stays what it was";
  EXPECT_EQ((*got)[0].row.verdict.rule_id, "protect");
  EXPECT_TRUE((*got)[1].image_recorded);
  EXPECT_TRUE((*got)[1].deletes_recorded);
}

}  // namespace
}  // namespace cb::db
