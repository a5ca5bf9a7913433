// The writer and reader against real SQLite files: what goes in comes out,
// byte for byte, from any number of threads, on every exit path.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "db/store.h"
#include "test_util.h"

namespace cb::db {
namespace {

using namespace test;

// The raw `state` column, bypassing the Reader's liveness check.
std::string raw_state(const std::string& path, int64_t session) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT state FROM sessions WHERE id = ?", -1, &s, nullptr);
  sqlite3_bind_int64(s, 1, session);
  std::string state =
      sqlite3_step(s) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0)) : "(none)";
  sqlite3_finalize(s);
  sqlite3_close(db);
  return state;
}

void exec_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

class StoreTest : public ::testing::Test {
 protected:
  TempDir dir;
  // Below directories that do not exist yet: open() must create them.
  std::string path = dir.path() + "/data/cottonbox/audit.db";
};

TEST_F(StoreTest, OpenCreatesPrivateDirectoryAndFile) {
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  struct stat st;
  ASSERT_EQ(stat((dir.path() + "/data/cottonbox").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(w->path(), path);
}

TEST_F(StoreTest, RoundTripOfSessionProcessesEventsAndApprovals) {
  int64_t sid;
  SessionStart start = session_start("round-trip");
  start.observe = true;
  start.tracer = "seccomp,ebpf";
  start.ask_mode = "tty";
  auto root = process(1, 4000, "sh", {"sh", "-c", "rm -rf src"});
  auto rm = process(2, 4001, "rm", {"rm", "-rf", "src"});
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    auto id = w->begin_session(start);
    ASSERT_TRUE(id) << id.error().message;
    sid = *id;
    w->add_process(sid, process_row(*root));
    w->add_process(sid, process_row(*rm, /*parent=*/1));
    w->exec_process(sid, ProcessExec{2, start.started_ns + 5, "rm", "/usr/bin/rm", {"rm", "-rf", "src"}});

    EventRow e = denied(event(7, Action::FileRename, "/home/u/proj/src", rm), "protect-src");
    e.ev.target = "/tmp/gone";
    e.ev.aliases = {"/home/u/proj/hardlink", "/home/u/other"};
    e.ev.flags = 0x1234'5678'9abc'def0ull;  // high bit set: stored bit-for-bit
    e.ev.is_dir = true;
    e.ev.target_pid = 99;
    e.ev.tid = 4002;
    e.ev.syscall = "renameat2";
    e.ev.syscall_nr = 316;
    e.ev.source = Source::Ebpf;
    e.verdict.decision = Decision::Ask;
    e.verdict.message = "source tree is protected";
    e.verdict.builtin = true;
    e.enforced = false;
    e.layer = Layer::Landlock;
    e.count = 3;
    w->add_event(sid, e);
    EventRow unknown_errno = event(8, Action::FileWrite, "/home/u/proj/out.o", rm);
    unknown_errno.result_errno = -1;
    w->add_event(sid, unknown_errno);
    w->add_approval(sid,
                    ApprovalRow{7, start.started_ns + 10, start.started_ns + 2'000'000'010, "tty", "deny-once", ""});
    w->exit_process(sid, ProcessExit{2, start.started_ns + 20, 1, 0});
    w->exit_process(sid, ProcessExit{1, start.started_ns + 30, -1, 9});
    SessionEnd end{start.started_ns + 40, 137, 9, SessionState::Ended};
    ASSERT_TRUE(w->end_session(sid, end));
    WriterStats st = w->stats();
    EXPECT_EQ(st.queued, st.committed);
    EXPECT_EQ(st.errors, 0u);
  }

  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto s = r->session(sid);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->state, SessionState::Ended);
  EXPECT_EQ(s->start.uuid, start.uuid);
  EXPECT_EQ(s->start.name, "round-trip");
  EXPECT_EQ(s->start.argv, start.argv);
  EXPECT_EQ(s->start.cwd, start.cwd);
  EXPECT_EQ(s->start.uid, 1000u);
  EXPECT_EQ(s->start.user, "u");
  EXPECT_EQ(s->start.hostname, "box");
  EXPECT_EQ(s->start.policy_files, start.policy_files);
  EXPECT_EQ(s->start.policy_hash, "abc123");
  EXPECT_EQ(s->start.started_ns, start.started_ns);
  EXPECT_TRUE(s->start.observe);
  EXPECT_EQ(s->start.tracer, "seccomp,ebpf");
  EXPECT_EQ(s->start.ask_mode, "tty");
  EXPECT_EQ(s->start.supervisor_pid, getpid());
  EXPECT_EQ(s->start.boot_id, start.boot_id);
  ASSERT_TRUE(s->end);
  EXPECT_EQ(s->end->ended_ns, start.started_ns + 40);
  EXPECT_EQ(s->end->exit_status, 137);
  EXPECT_EQ(s->end->exit_signal, 9);
  EXPECT_EQ(s->events, 4u);  // 3 folded into one row, plus one
  EXPECT_EQ(s->denials, 3u);
  EXPECT_EQ(s->asks, 3u);
  EXPECT_EQ(s->processes, 2u);

  auto events = r->events(EventQuery{.session = sid});
  ASSERT_TRUE(events) << events.error().message;
  ASSERT_EQ(events->size(), 2u);
  const StoredEvent& got = (*events)[0];
  EXPECT_GT(got.id, 0);
  EXPECT_EQ(got.session, sid);
  const EventRow& row = got.row;
  EXPECT_EQ(row.seq, 7u);
  EXPECT_EQ(row.ev.action, Action::FileRename);
  EXPECT_EQ(row.ev.path, "/home/u/proj/src");
  EXPECT_EQ(row.ev.target, "/tmp/gone");
  EXPECT_EQ(row.ev.aliases, (std::vector<std::string>{"/home/u/proj/hardlink", "/home/u/other"}));
  EXPECT_EQ(row.ev.flags, 0x1234'5678'9abc'def0ull);
  EXPECT_TRUE(row.ev.is_dir);
  EXPECT_EQ(row.ev.target_pid, 99);
  EXPECT_EQ(row.ev.pid, 4001);
  EXPECT_EQ(row.ev.tid, 4002);
  EXPECT_EQ(row.ev.syscall, "renameat2");
  EXPECT_EQ(row.ev.source, Source::Ebpf);
  EXPECT_EQ(row.verdict.decision, Decision::Ask);
  EXPECT_EQ(row.verdict.rule_id, "protect-src");
  EXPECT_EQ(row.verdict.message, "source tree is protected");
  EXPECT_TRUE(row.verdict.builtin);
  EXPECT_FALSE(row.allowed);
  EXPECT_FALSE(row.enforced);
  EXPECT_EQ(row.layer, Layer::Landlock);
  EXPECT_EQ(row.result_errno, EPERM);
  EXPECT_EQ(row.count, 3u);
  // The process as the processes table knows it (after its exec).
  ASSERT_TRUE(row.ev.proc);
  EXPECT_EQ(row.ev.proc->proc_id, 2u);
  EXPECT_EQ(row.ev.proc->pid, 4001);
  EXPECT_EQ(row.ev.proc->ppid, 4000);
  EXPECT_EQ(row.ev.proc->comm, "rm");
  EXPECT_EQ(row.ev.proc->exe, "/usr/bin/rm");
  EXPECT_EQ(row.ev.proc->argv, (std::vector<std::string>{"rm", "-rf", "src"}));
  ASSERT_TRUE(got.approval);
  EXPECT_EQ(got.approval->event_seq, 7u);
  EXPECT_EQ(got.approval->answered_ns - got.approval->asked_ns, 2'000'000'000);
  EXPECT_EQ(got.approval->answered_by, "tty");
  EXPECT_EQ(got.approval->answer, "deny-once");

  const StoredEvent& second = (*events)[1];
  EXPECT_EQ(second.row.result_errno, -1);
  EXPECT_TRUE(second.row.allowed);
  EXPECT_EQ(second.row.verdict.rule_id, "");  // the policy's default
  EXPECT_FALSE(second.approval);
  // Events of one process share one ProcessInfo, as in the supervisor.
  EXPECT_EQ(second.row.ev.proc.get(), row.ev.proc.get());

  auto procs = r->processes(sid);
  ASSERT_TRUE(procs);
  ASSERT_EQ(procs->size(), 2u);
  const StoredProcess& sh = (*procs)[0];
  EXPECT_EQ(sh.row.proc_id, 1u);
  EXPECT_EQ(sh.row.parent_proc_id, 0u);
  EXPECT_EQ(sh.row.argv, root->argv);
  ASSERT_TRUE(sh.exit);
  EXPECT_EQ(sh.exit->exit_status, -1);
  EXPECT_EQ(sh.exit->exit_signal, 9);
  EXPECT_EQ(sh.events, 0u);
  const StoredProcess& p = (*procs)[1];
  EXPECT_EQ(p.row.parent_proc_id, 1u);
  EXPECT_EQ(p.row.pid, 4001);
  EXPECT_EQ(p.row.cwd, "/home/u/proj");
  ASSERT_TRUE(p.exit);
  EXPECT_EQ(p.exit->exit_status, 1);
  EXPECT_EQ(p.exit->exit_signal, 0);
  EXPECT_EQ(p.events, 4u);
  EXPECT_EQ(p.denials, 3u);

  auto chain = r->process_chain(sid, 2);
  ASSERT_TRUE(chain);
  ASSERT_EQ(chain->size(), 2u);
  EXPECT_EQ((*chain)[0].row.proc_id, 2u);
  EXPECT_EQ((*chain)[0].denials, 3u);
  EXPECT_EQ((*chain)[1].row.proc_id, 1u);
}

TEST_F(StoreTest, PathsAndArgvAreByteExact) {
  // Newlines, invalid UTF-8, a lone continuation byte, DEL, an escape.
  const std::string weird_path = std::string("/home/u/a\nb\xff\xfe/\x80x\x7f\x1b[2J");
  const std::string weird_target = std::string("/tmp/\xc3\x28\n");
  const std::vector<std::string> weird_argv = {"rm", std::string("--\xff"), "", "a\nb"};
  const std::string weird_cwd = "/home/u/\xe2\x82";
  int64_t sid;
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    SessionStart s = session_start();
    s.argv = weird_argv;
    s.cwd = weird_cwd;
    s.policy_files = {"/etc/\xff.yaml"};
    sid = *w->begin_session(s);
    auto proc = process(1, 10, std::string("r\xffm"), weird_argv);
    w->add_process(sid, process_row(*proc));
    EventRow e = event(1, Action::FileRename, weird_path, proc);
    e.ev.target = weird_target;
    e.ev.aliases = {std::string("/x\n\xff")};
    w->add_event(sid, e);
    ASSERT_TRUE(w->flush());
  }
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto s = r->session(sid);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->start.argv, weird_argv);
  EXPECT_EQ(s->start.cwd, weird_cwd);
  EXPECT_EQ(s->start.policy_files, std::vector<std::string>{"/etc/\xff.yaml"});
  auto events = r->events(EventQuery{.session = sid});
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  const Event& ev = (*events)[0].row.ev;
  EXPECT_EQ(ev.path, weird_path);
  EXPECT_EQ(ev.target, weird_target);
  EXPECT_EQ(ev.aliases, std::vector<std::string>{std::string("/x\n\xff")});
  ASSERT_TRUE(ev.proc);
  EXPECT_EQ(ev.proc->comm, std::string("r\xffm"));
  EXPECT_EQ(ev.proc->argv, weird_argv);
  auto procs = r->processes(sid);
  ASSERT_TRUE(procs);
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ((*procs)[0].row.argv, weird_argv);
  // And a glob finds it by its exact bytes.
  auto found = r->events(EventQuery{.path_glob = std::string("/home/u/a\nb\xff\xfe/**")});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->size(), 1u);
}

TEST_F(StoreTest, ConcurrentProducersLoseNothing) {
  constexpr int kThreads = 6;
  constexpr int kPerThread = 20'000;
  int64_t sid;
  WriterStats stats;
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    sid = *w->begin_session(session_start());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        auto proc = process(static_cast<uint64_t>(t + 1), 100 + t, "worker");
        w->add_process(sid, process_row(*proc));
        for (int i = 0; i < kPerThread; ++i) {
          uint64_t seq = static_cast<uint64_t>(t) * kPerThread + i;
          EventRow e = event(seq, Action::FileWrite, "/p/" + std::to_string(seq % 977), proc);
          if (i % 10 == 0) e = denied(std::move(e), "r");
          w->add_event(sid, std::move(e));
        }
      });
    }
    for (auto& t : threads) t.join();
    auto flushed = w->flush();
    ASSERT_TRUE(flushed) << flushed.error().message;
    stats = w->stats();
  }
  EXPECT_EQ(stats.queued, 1u + kThreads + kThreads * kPerThread);
  EXPECT_EQ(stats.committed, stats.queued);
  EXPECT_EQ(stats.backlog, 0u);
  EXPECT_EQ(stats.errors, 0u);

  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto s = r->session(sid);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->events, uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(s->denials, uint64_t{kThreads} * kPerThread / 10);
  auto events = r->events(EventQuery{.session = sid});
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), size_t{kThreads} * kPerThread);
  std::set<uint64_t> seqs;
  int64_t last_id = 0;
  for (const auto& e : *events) {
    seqs.insert(e.row.seq);
    EXPECT_GT(e.id, last_id);  // in id order
    last_id = e.id;
  }
  EXPECT_EQ(seqs.size(), size_t{kThreads} * kPerThread);
  EXPECT_EQ(*seqs.rbegin(), uint64_t{kThreads} * kPerThread - 1);
  auto procs = r->processes(sid);
  ASSERT_TRUE(procs);
  ASSERT_EQ(procs->size(), size_t{kThreads});
  for (const auto& p : *procs) EXPECT_EQ(p.events, uint64_t{kPerThread}) << p.row.proc_id;
}

TEST_F(StoreTest, DestructorCommitsWhatIsQueued) {
  int64_t sid;
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    sid = *w->begin_session(session_start());
    for (int i = 0; i < 5000; ++i) w->add_event(sid, event(i, Action::FileDelete, "/x"));
    w->add_degraded(sid, "no-ebpf");
    // No flush: the destructor must write all of it.
  }
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto s = r->session(sid);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->events, 5000u);
  EXPECT_EQ(s->degraded, std::vector<std::string>{"no-ebpf"});
}

TEST_F(StoreTest, RecordsAreCommittedWithinTheIntervalWithoutFlush) {
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  int64_t sid = *w->begin_session(session_start());
  w->add_event(sid, event(1, Action::FileDelete, "/x"));
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  // A live view (GUI, `events` in another terminal) sees it without any flush.
  auto deadline = std::chrono::steady_clock::now() + kCommitInterval * 40;
  uint64_t seen = 0;
  while (seen == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(kCommitInterval / 5);
    seen = r->session(sid)->events;
  }
  EXPECT_EQ(seen, 1u);
}

TEST_F(StoreTest, DegradedReasonsAreKeptOnceAndLostCountIsTheRunningTotal) {
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  int64_t sid = *w->begin_session(session_start());
  w->add_degraded(sid, "io_uring allowed");
  w->add_degraded(sid, "no ebpf");
  w->add_degraded(sid, "io_uring allowed");
  w->set_events_lost(sid, 10);
  w->set_events_lost(sid, 25);
  ASSERT_TRUE(w->flush());
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto s = r->session(sid);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->degraded, (std::vector<std::string>{"io_uring allowed", "no ebpf"}));
  EXPECT_EQ(s->events_lost, 25u);
}

TEST_F(StoreTest, ARecordTheSchemaRefusesDoesNotHoldUpTheOthers) {
  // A verdict outside the vocabulary (a newer producer, memory gone bad)
  // fails the CHECK constraint: that one row is dropped and counted, and the
  // batch around it commits instead of being retried forever.
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  int64_t sid = *w->begin_session(session_start());
  for (int i = 0; i < 40; ++i) {
    EventRow e = event(i, Action::FileWrite, "/f" + std::to_string(i));
    if (i == 20) e.verdict.decision = static_cast<Decision>(9);
    w->add_event(sid, e);
  }
  auto flushed = w->flush();
  ASSERT_TRUE(flushed) << flushed.error().message;
  WriterStats st = w->stats();
  EXPECT_EQ(st.refused, 1u);
  EXPECT_EQ(st.errors, 0u);
  EXPECT_EQ(st.committed + st.refused, st.queued);
  EXPECT_NE(st.last_error.find("CHECK constraint failed"), std::string::npos) << st.last_error;
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto events = r->events(EventQuery{.session = sid});
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 39u);
  EXPECT_EQ((*events)[19].row.ev.path, "/f19");
  EXPECT_EQ((*events)[20].row.ev.path, "/f21");
  // The touched-path index knows the rows that exist, with their ids.
  auto f21 = r->events(EventQuery{.path_glob = "/f21"});
  ASSERT_TRUE(f21);
  ASSERT_EQ(f21->size(), 1u);
  EXPECT_EQ((*f21)[0].id, (*events)[20].id);
}

TEST_F(StoreTest, ExecAndExitBeforeTheForkRecordKeepTheNewerImage) {
  // The eBPF reader and the supervisor are separate producers: the exec may
  // be queued before the fork that created the process.
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  int64_t sid = *w->begin_session(session_start());
  w->exec_process(sid, ProcessExec{5, 100, "python3", "/usr/bin/python3", {"python3", "x.py"}});
  w->exit_process(sid, ProcessExit{5, 200, 3, 0});
  auto forked = process(5, 77, "bash", {"bash"});
  w->add_process(sid, process_row(*forked, 1));
  ASSERT_TRUE(w->flush());
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto procs = r->processes(sid);
  ASSERT_TRUE(procs);
  ASSERT_EQ(procs->size(), 1u);
  const StoredProcess& p = (*procs)[0];
  EXPECT_EQ(p.row.comm, "python3");
  EXPECT_EQ(p.row.argv, (std::vector<std::string>{"python3", "x.py"}));
  EXPECT_EQ(p.row.pid, 77);
  EXPECT_EQ(p.row.parent_proc_id, 1u);
  ASSERT_TRUE(p.exit);
  EXPECT_EQ(p.exit->exit_status, 3);
}

TEST_F(StoreTest, ReaderWorksWhileAWriterIsActiveInAnotherProcess) {
  int to_child[2], to_parent[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(to_parent), 0);
  std::string p = path;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The supervisor: alive and named like one, so its session is "running".
    prctl(PR_SET_NAME, "cottonbox");
    auto w = Writer::open(p);
    if (!w) _exit(10);
    SessionStart s = session_start("live");
    s.supervisor_pid = getpid();
    auto sid = (*w)->begin_session(s);
    if (!sid) _exit(11);
    for (int i = 0; i < 100; ++i) (*w)->add_event(*sid, event(i, Action::FileWrite, "/a"));
    if (!(*w)->flush()) _exit(12);
    int64_t id = *sid;
    char go;
    if (write(to_parent[1], &id, sizeof id) != sizeof id || read(to_child[0], &go, 1) != 1) _exit(13);
    for (int i = 100; i < 150; ++i) (*w)->add_event(*sid, event(i, Action::FileWrite, "/b"));
    if (!(*w)->flush() || write(to_parent[1], &go, 1) != 1 || read(to_child[0], &go, 1) != 1) _exit(14);
    if (!(*w)->end_session(*sid, SessionEnd{now_ns(), 0, 0, SessionState::Ended})) _exit(15);
    w->reset();
    _exit(0);
  }
  int64_t sid = 0;
  ASSERT_EQ(read(to_parent[0], &sid, sizeof sid), static_cast<ssize_t>(sizeof sid));

  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto s = r->session(sid);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->state, SessionState::Running);
  auto first = r->events(EventQuery{.session = sid});
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_EQ(first->size(), 100u);

  char go = 'g';
  ASSERT_EQ(write(to_child[1], &go, 1), 1);
  ASSERT_EQ(read(to_parent[0], &go, 1), 1);
  // A live tail: only what is new since the last id seen.
  auto tail = r->events(EventQuery{.session = sid, .after_id = first->back().id});
  ASSERT_TRUE(tail);
  ASSERT_EQ(tail->size(), 50u);
  EXPECT_EQ(tail->front().row.seq, 100u);
  EXPECT_EQ(tail->front().row.ev.path, "/b");

  ASSERT_EQ(write(to_child[1], &go, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  s = r->session(sid);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, SessionState::Ended);
  EXPECT_EQ(s->events, 150u);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]}) close(fd);
}

TEST_F(StoreTest, RunningSessionsOfDeadSupervisorsBecomeAborted) {
  // A live "supervisor": a child named cottonbox, waiting.
  int hold[2], ready[2];
  ASSERT_EQ(pipe(hold), 0);
  ASSERT_EQ(pipe(ready), 0);
  pid_t live = fork();
  ASSERT_GE(live, 0);
  if (live == 0) {
    prctl(PR_SET_NAME, "cottonbox");
    close(hold[1]);  // so that the parent's close is seen as EOF
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    (void)!read(hold[0], &c, 1);
    _exit(0);
  }
  close(hold[0]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  close(ready[1]);
  // A dead one: a process that has exited and been reaped.
  pid_t dead = fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) _exit(0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  // A killed one its parent has not reaped yet: a zombie still named
  // cottonbox.
  int named[2];
  ASSERT_EQ(pipe(named), 0);
  pid_t zombie = fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) {
    prctl(PR_SET_NAME, "cottonbox");
    if (write(named[1], "n", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  ASSERT_EQ(read(named[0], &c, 1), 1);
  close(named[0]);
  close(named[1]);
  ASSERT_EQ(kill(zombie, SIGKILL), 0);
  siginfo_t si{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(zombie), &si, WEXITED | WNOWAIT), 0);  // dead, not reaped

  int64_t s_live, s_dead, s_other_boot, s_self, s_ended, s_zombie;
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    auto begin = [&](pid_t pid, std::string boot) {
      SessionStart s = session_start();
      s.supervisor_pid = pid;
      s.boot_id = std::move(boot);
      return *w->begin_session(s);
    };
    std::string boot = current_boot_id();
    s_live = begin(live, boot);
    s_dead = begin(dead, boot);
    s_other_boot = begin(live, "00000000-0000-0000-0000-000000000000");
    s_self = begin(getpid(), boot);
    s_ended = begin(dead, boot);
    s_zombie = begin(zombie, boot);
    w->add_event(s_dead, event(1, Action::FileDelete, "/x"));
    ASSERT_TRUE(w->end_session(s_ended, SessionEnd{now_ns(), 0, 0, SessionState::Ended}));
  }

  {
    // The reader says so at once, without writing.
    auto r = open_reader(path);
    ASSERT_TRUE(r);
    auto all = r->sessions();
    ASSERT_TRUE(all);
    std::map<int64_t, SessionState> state;
    for (const auto& s : *all) state[s.id] = s.state;
    EXPECT_EQ(state[s_live], SessionState::Running);
    EXPECT_EQ(state[s_dead], SessionState::Aborted);
    EXPECT_EQ(state[s_other_boot], SessionState::Aborted);
    EXPECT_EQ(state[s_self], SessionState::Running);
    EXPECT_EQ(state[s_ended], SessionState::Ended);
    EXPECT_EQ(state[s_zombie], SessionState::Aborted);
    EXPECT_EQ(raw_state(path, s_dead), "running");
  }

  // The next writer records it.
  ASSERT_TRUE(open_writer(path));
  EXPECT_EQ(raw_state(path, s_dead), "aborted");
  EXPECT_EQ(raw_state(path, s_other_boot), "aborted");
  EXPECT_EQ(raw_state(path, s_live), "running");
  EXPECT_EQ(raw_state(path, s_ended), "ended");
  EXPECT_EQ(raw_state(path, s_zombie), "aborted");
  ASSERT_EQ(waitpid(zombie, nullptr, 0), zombie);
  auto r = open_reader(path);
  auto aborted = r->session(s_dead);
  ASSERT_TRUE(aborted);
  ASSERT_TRUE(aborted->end);
  EXPECT_GT(aborted->end->ended_ns, 0);  // the last event's time

  close(hold[1]);  // the live supervisor exits too
  ASSERT_EQ(waitpid(live, nullptr, 0), live);
  EXPECT_EQ(r->session(s_live)->state, SessionState::Aborted);
}

TEST_F(StoreTest, NewerSchemaIsRefusedWithAClearError) {
  ASSERT_TRUE(open_writer(path));
  exec_sql(path, "PRAGMA user_version = 7");
  auto w = Writer::open(path);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("newer cottonbox"), std::string::npos) << w.error().message;
  EXPECT_NE(w.error().message.find(path), std::string::npos);
  auto r = Reader::open(path);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("newer cottonbox"), std::string::npos) << r.error().message;
}

int64_t user_version(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr);
  int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

UndoRun undo_run(int64_t session) {
  UndoRun run;
  run.session = session;
  run.ts_ns = 1700000000123456789;
  run.uid = 1000;
  run.user = "alice";
  run.command = 7;
  run.path_glob = "/w/src/**";
  run.created = true;
  run.files = {{"/w/src/a.c", "", "restore", true, false, "changed by the session", {}},
               {std::string("/w/src/\xff\n.bin"), "", "conflict", false, false, "changed after the session", {}},
               {"/w/b", "/w/a", "move-back", true, true, "moved back by --force", {"times not restored: EPERM"}}};
  return run;
}

// A database written before the undos table (version 3): read as it is,
// upgraded by the first writer (here the undo's), nothing lost.  (From
// version 2, schema3_test.cpp.)
TEST_F(StoreTest, AVersion3FileIsReadAsItIsAndUpgradedByTheNextWriter) {
  int64_t sid;
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    auto id = w->begin_session(session_start("old"));
    ASSERT_TRUE(id);
    sid = *id;
    w->add_event(sid, event(1, Action::FileDelete, "/w/gone"));
    ASSERT_TRUE(w->end_session(sid, SessionEnd{now_ns(), 0, 0, SessionState::Ended}));
  }
  // What version 3 wrote: everything but the undos table and the network's
  // lookups (its columns stay: an upgrade adds only what is missing).
  exec_sql(path, "DROP TABLE undos; DROP TABLE dns_lookups; PRAGMA user_version = 3");
  ASSERT_EQ(user_version(path), 3);
  {
    auto r = Reader::open(path);
    ASSERT_TRUE(r) << r.error().message;
    auto sessions = (*r)->sessions();
    ASSERT_TRUE(sessions);
    ASSERT_EQ(sessions->size(), 1u);
    EXPECT_EQ((*sessions)[0].start.name, "old");
    auto undos = (*r)->undos(sid);
    ASSERT_TRUE(undos) << undos.error().message;
    EXPECT_TRUE(undos->empty());
  }
  EXPECT_EQ(user_version(path), 3);  // a reader writes nothing

  auto id = record_undo(path, undo_run(sid));
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(user_version(path), kSchemaVersion);
  auto r = open_reader(path);
  auto events = r->events({.session = sid});
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].row.ev.path, "/w/gone");
  auto undos = r->undos(sid);
  ASSERT_TRUE(undos);
  ASSERT_EQ(undos->size(), 1u);
  // And the supervisor's writer opens the upgraded file.
  EXPECT_TRUE(open_writer(path));
}

TEST_F(StoreTest, UndosAreRecordedRunByRunByteForByte) {
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  auto sid = w->begin_session(session_start());
  ASSERT_TRUE(sid);
  ASSERT_TRUE(w->flush());
  UndoRun first = undo_run(*sid);
  UndoRun empty;
  empty.session = *sid;
  empty.ts_ns = 1700000000999999999;
  empty.user = "bob";
  auto a = record_undo(path, first);
  auto b = record_undo(path, empty);
  ASSERT_TRUE(a) << a.error().message;
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*a, 1);
  EXPECT_EQ(*b, 2);
  auto undos = open_reader(path)->undos(*sid);
  ASSERT_TRUE(undos) << undos.error().message;
  ASSERT_EQ(undos->size(), 2u);
  const UndoRun& r = (*undos)[0];
  EXPECT_EQ(r.undo_id, 1);
  EXPECT_EQ(r.ts_ns, first.ts_ns);
  EXPECT_EQ(r.uid, 1000u);
  EXPECT_EQ(r.user, "alice");
  EXPECT_EQ(r.command, std::optional<uint64_t>(7));
  EXPECT_EQ(r.path_glob, "/w/src/**");
  EXPECT_FALSE(r.force);
  EXPECT_TRUE(r.created);
  ASSERT_EQ(r.files.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r.files[i].path, first.files[i].path);
    EXPECT_EQ(r.files[i].target, first.files[i].target);
    EXPECT_EQ(r.files[i].action, first.files[i].action);
    EXPECT_EQ(r.files[i].done, first.files[i].done);
    EXPECT_EQ(r.files[i].forced, first.files[i].forced);
    EXPECT_EQ(r.files[i].reason, first.files[i].reason);
    EXPECT_EQ(r.files[i].notes, first.files[i].notes);
  }
  EXPECT_EQ((*undos)[1].user, "bob");
  EXPECT_FALSE((*undos)[1].command);
  EXPECT_TRUE((*undos)[1].files.empty());
}

TEST_F(StoreTest, AnotherProgramsDatabaseIsLeftAlone) {
  std::filesystem::create_directories(dir.path() + "/data/cottonbox");
  exec_sql(path, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
  auto w = Writer::open(path);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("something else"), std::string::npos) << w.error().message;
  auto r = Reader::open(path);
  ASSERT_FALSE(r);
}

TEST_F(StoreTest, NothingIsMadeBesideAFileThatIsNoDatabase) {
  std::filesystem::create_directories(dir.path() + "/data/cottonbox");
  {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_TRUE(f);
    fputs("somebody's notes, long enough to fill an SQLite header and more besides ...\n", f);
    fclose(f);
  }
  ASSERT_TRUE(Writer::create_files(path));
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    EXPECT_FALSE(std::filesystem::exists(path + suffix)) << suffix;
  auto w = Writer::open(path);
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find("not a database"), std::string::npos) << w.error().message;
}

TEST_F(StoreTest, ReaderOnAMissingFileSaysSo) {
  auto r = Reader::open(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_EQ(r.error().message, "no audit database at " + path);
  EXPECT_FALSE(std::filesystem::exists(path));  // and did not create it
}

TEST_F(StoreTest, MissingSessionIsAnError) {
  ASSERT_TRUE(open_writer(path));
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto s = r->session(42);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "no session 42 in " + path);
}

TEST_F(StoreTest, WalFilesPersistAfterTheWriterCloses) {
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    int64_t sid = *w->begin_session(session_start());
    w->add_event(sid, event(1, Action::FileDelete, "/x"));
    ASSERT_TRUE(w->flush());
    EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
    EXPECT_TRUE(std::filesystem::exists(path + "-shm"));
  }
  // The last connection to close would delete them without PERSIST_WAL.
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
  // Nor does a reader that closes last.
  ASSERT_TRUE(open_reader(path));
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
  EXPECT_TRUE(std::filesystem::exists(path + "-shm"));
}

// A session guards the database and its companions by path from before the
// store opens (it opens while the session launches), so opening must keep
// the very files create_files() made: SQLite's first write to a fresh
// database would otherwise create a rollback journal and delete it.
TEST_F(StoreTest, OpeningAFreshDatabaseKeepsTheFilesMadeBeforeIt) {
  ASSERT_TRUE(Writer::create_files(path));
  std::map<std::string, ino_t> inode;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    struct stat st;
    ASSERT_EQ(stat((path + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << suffix;
    // The database is whole from the start; its companions are empty.
    if (suffix[0])
      EXPECT_EQ(st.st_size, 0) << suffix;
    else
      EXPECT_GT(st.st_size, 0);
    inode[suffix] = st.st_ino;
  }
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    int64_t sid = *w->begin_session(session_start());
    w->add_event(sid, event(1, Action::FileDelete, "/x"));
    ASSERT_TRUE(w->flush());
  }
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    struct stat st;
    ASSERT_EQ(stat((path + suffix).c_str(), &st), 0) << suffix;
    EXPECT_EQ(st.st_ino, inode[suffix]) << suffix << " was replaced";
  }
  struct stat journal;
  ASSERT_EQ(stat((path + "-journal").c_str(), &journal), 0);
  EXPECT_EQ(journal.st_size, 0);
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->sessions().value().size(), 1u);
}

// Made whole before it is given its name: a reader or another writer never
// sees an empty or half-written file, no opener has to switch it to WAL
// (what concurrent starts used to race on), and nothing else is left in the
// directory.
TEST_F(StoreTest, ANewDatabaseAppearsWholeAndInWalMode) {
  ASSERT_TRUE(Writer::create_files(path));
  std::set<std::string> names;
  for (auto& e : std::filesystem::directory_iterator(dir.path() + "/data/cottonbox"))
    names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"audit.db", "audit.db-wal", "audit.db-shm", "audit.db-journal"}));
  // As another program reads it: the schema is there, and the file says WAL.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto one = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string v = sqlite3_step(s) == SQLITE_ROW ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0)) : "";
    sqlite3_finalize(s);
    return v;
  };
  EXPECT_EQ(one("PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(one("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(one("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(
      one("SELECT group_concat(name, ' ') FROM (SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name)"),
      "approvals dns_lookups events images policies processes sessions touched_paths undos");
  sqlite3_close(db);
  // A second call changes nothing.
  struct stat before, after;
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  ASSERT_TRUE(Writer::create_files(path));
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(before.st_size, after.st_size);
}

// An empty file, as an older cottonbox left it (or `touch`), becomes the
// database in place: a session may already guard it by path.
TEST_F(StoreTest, AnEmptyFileIsFilledInPlace) {
  std::filesystem::create_directories(dir.path() + "/data/cottonbox");
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  struct stat before, after;
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  {
    auto w = open_writer(path);
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->begin_session(session_start()));
  }
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(open_reader(path)->sessions().value().size(), 1u);
}

// Many supervisors started at once into one file, new and then existing:
// every one opens the store and records its session (each is a process of
// its own, as `cottonbox run` is).
TEST_F(StoreTest, WritersStartedAtOnceAllRecordTheirSessions) {
  constexpr int kWriters = 24;
  for (int round = 0; round < 2; ++round) {
    int go[2];
    ASSERT_EQ(pipe(go), 0);
    std::vector<pid_t> kids;
    for (int i = 0; i < kWriters; ++i) {
      pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        prctl(PR_SET_NAME, "cottonbox");  // a live supervisor to the others
        close(go[1]);
        char c;
        (void)!read(go[0], &c, 1);  // EOF: all start together
        auto w = Writer::open(path);
        if (!w) {
          fprintf(stderr, "open: %s\n", w.error().message.c_str());
          _exit(10);
        }
        SessionStart s = session_start("swarm-" + std::to_string(i));
        s.supervisor_pid = getpid();
        auto sid = (*w)->begin_session(s);
        if (!sid) {
          fprintf(stderr, "begin: %s\n", sid.error().message.c_str());
          _exit(11);
        }
        (*w)->add_event(*sid, event(1, Action::FileWrite, "/w" + std::to_string(i)));
        if (!(*w)->end_session(*sid, SessionEnd{now_ns(), i % 7, 0, SessionState::Ended})) _exit(12);
        w->reset();
        _exit(0);
      }
      kids.push_back(pid);
    }
    close(go[0]);
    close(go[1]);
    for (pid_t pid : kids) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << ": status " << status;
    }
  }
  auto r = open_reader(path);
  ASSERT_TRUE(r);
  auto all = r->sessions();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u * kWriters);
  std::map<std::string, int> per_name;
  for (const auto& s : *all) {
    ++per_name[s.start.name];
    EXPECT_EQ(s.state, SessionState::Ended) << s.start.name;
    ASSERT_TRUE(s.end);
    EXPECT_EQ(s.end->exit_status, std::stoi(s.start.name.substr(6)) % 7);
    EXPECT_EQ(s.events, 1u);
  }
  for (int i = 0; i < kWriters; ++i) EXPECT_EQ(per_name["swarm-" + std::to_string(i)], 2);
}

// A writer that holds the lock for a while (a large batch, a checkpoint)
// makes a starting session wait for it, not fail.
TEST_F(StoreTest, ASessionStartWaitsForAnotherWritersLock) {
  ASSERT_TRUE(Writer::create_files(path));
  int held[2], committed[2];
  ASSERT_EQ(pipe(held), 0);
  ASSERT_EQ(pipe2(committed, O_NONBLOCK), 0);
  // The holder is a process of its own: SQLite's locks are per process.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) _exit(10);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE; INSERT INTO touched_paths VALUES (x'2f', 0, 0)", nullptr, nullptr,
                     nullptr) != SQLITE_OK)
      _exit(11);
    char c = 'h';
    if (write(held[1], &c, 1) != 1) _exit(12);
    usleep(400 * 1000);
    if (sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) _exit(13);
    c = 'c';
    if (write(committed[1], &c, 1) != 1) _exit(14);
    sqlite3_close(db);
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(held[0], &c, 1), 1);
  auto w = open_writer(path);
  ASSERT_TRUE(w);
  auto sid = w->begin_session(session_start());
  ASSERT_TRUE(sid) << sid.error().message;
  // Recorded only once the holder had let go of the lock.
  EXPECT_EQ(read(committed[0], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  w.reset();
  EXPECT_EQ(open_reader(path)->sessions().value().size(), 1u);
  for (int fd : {held[0], held[1], committed[0], committed[1]}) close(fd);
}

// Every writer's start looks for running sessions whose supervisor is gone:
// through an index, however many sessions the file holds, also in a file
// made before the index existed.
TEST_F(StoreTest, StaleSessionsAreLookedUpThroughAnIndex) {
  ASSERT_TRUE(open_writer(path));
  exec_sql(path, "DROP INDEX sessions_running");
  ASSERT_TRUE(open_writer(path));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "EXPLAIN QUERY PLAN SELECT id, boot_id, supervisor_pid FROM sessions"
                               " WHERE state = 'running'",
                               -1, &s, nullptr),
            SQLITE_OK);
  std::string plan;
  while (sqlite3_step(s) == SQLITE_ROW) plan += reinterpret_cast<const char*>(sqlite3_column_text(s, 3));
  sqlite3_finalize(s);
  sqlite3_close(db);
  EXPECT_NE(plan.find("USING INDEX sessions_running"), std::string::npos) << plan;
}

TEST_F(StoreTest, AFailingDiskLosesNothingAndIsRetried) {
  // RLIMIT_FSIZE makes writes past the limit fail with EFBIG, as a full disk
  // or a quota would; in a child, since the limit is per process.
  std::string p = path;
  int status = run_in_child([&]() -> int {
    signal(SIGXFSZ, SIG_IGN);
    auto w = Writer::open(p);
    if (!w) return 10;
    int64_t sid = *(*w)->begin_session(session_start());
    if (!(*w)->flush()) return 11;
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    struct rlimit small = {256 << 10, rl.rlim_max};
    if (setrlimit(RLIMIT_FSIZE, &small) != 0) return 12;
    constexpr int kEvents = 20'000;
    for (int i = 0; i < kEvents; ++i)
      (*w)->add_event(sid, event(i, Action::FileWrite, "/big/" + std::string(200, 'x') + std::to_string(i)));
    auto failed = (*w)->flush();
    if (failed) return 13;  // it cannot have fit
    if (failed.error().err != EFBIG) return 14;
    WriterStats st = (*w)->stats();
    if (st.errors == 0 || st.committed == st.queued || st.last_error.empty()) return 15;
    if (st.backlog == 0) return 21;  // some wait for the retry (a first batch may have fit)
    // A new session cannot be recorded now: an error, not a hang.
    if ((*w)->begin_session(session_start("late"))) return 22;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 16;
    if (auto f = (*w)->flush(); !f) return fprintf(stderr, "flush: %s\n", f.error().message.c_str()), 17;
    st = (*w)->stats();
    if (st.committed + st.refused != st.queued || st.refused != 1 || st.backlog != 0) return 18;
    w->reset();
    auto r = Reader::open(p);
    if (!r) return 19;
    auto s = (*r)->session(sid);
    if (!s || s->events != kEvents) return 20;
    return 0;
  });
  EXPECT_EQ(status, 0);
}

TEST_F(StoreTest, APermanentlyFailingDiskDoesNotHangTheDestructor) {
  std::string p = path;
  auto t0 = std::chrono::steady_clock::now();
  int status = run_in_child([&]() -> int {
    signal(SIGXFSZ, SIG_IGN);
    auto w = Writer::open(p);
    if (!w) return 10;
    int64_t sid = *(*w)->begin_session(session_start());
    if (!(*w)->flush()) return 11;
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = 64 << 10;
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0) return 12;
    for (int i = 0; i < 20'000; ++i) (*w)->add_event(sid, event(i, Action::FileWrite, "/big/" + std::string(200, 'x')));
    w->reset();  // gives up after a few attempts and says so on stderr
    return 0;
  });
  EXPECT_EQ(status, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST(DefaultDbPath, FollowsXdgDataHomeThenHome) {
  std::string saved_xdg = getenv("XDG_DATA_HOME") ? getenv("XDG_DATA_HOME") : "";
  bool had_xdg = getenv("XDG_DATA_HOME") != nullptr;
  std::string saved_home = getenv("HOME") ? getenv("HOME") : "";
  setenv("HOME", "/home/someone", 1);
  setenv("XDG_DATA_HOME", "/data/xdg", 1);
  EXPECT_EQ(default_db_path(), "/data/xdg/cottonbox/audit.db");
  setenv("XDG_DATA_HOME", "relative/is/ignored", 1);
  EXPECT_EQ(default_db_path(), "/home/someone/.local/share/cottonbox/audit.db");
  unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(default_db_path(), "/home/someone/.local/share/cottonbox/audit.db");
  setenv("HOME", saved_home.c_str(), 1);
  if (had_xdg) setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
}

}  // namespace
}  // namespace cb::db
