// Every model under QAbstractItemModelTester (fatal): the bounded live event
// table beyond its bound, the filters, the process tree, the session list,
// "who touched"; and forensic review against a real audit database.
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gui/auditdb.h"
#include "gui/eventmodel.h"
#include "gui/processtreemodel.h"
#include "gui/sessionhub.h"
#include "gui/sessionlistmodel.h"
#include "gui/sessionpage.h"
#include "gui/whotouchedmodel.h"
#include "gui_tests.h"

namespace cb::gui::test {
namespace {

using Tester = QAbstractItemModelTester;
constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

EventItem item(uint64_t seq, bool denied = false, const std::string& path = "/p/build/x.o") {
  static auto p = proc(1, 100, "rm");
  return EventItem{0, 1,
                   makeEvent(seq, Action::FileDelete, path, p, denied ? Decision::Deny : Decision::Allow, !denied,
                             denied ? "protect" : ""),
                   std::nullopt};
}

db::StoredProcess stored(uint64_t id, uint64_t parent, int32_t pid, const std::string& comm,
                         std::vector<std::string> argv = {}) {
  db::StoredProcess p;
  p.session = 1;
  p.row.proc_id = id;
  p.row.parent_proc_id = parent;
  p.row.pid = pid;
  p.row.comm = comm;
  p.row.argv = argv.empty() ? std::vector<std::string>{comm} : std::move(argv);
  p.row.started_ns = static_cast<int64_t>(id) * 1000;
  return p;
}

db::SessionSummary summary(int64_t id, const std::string& uuid, int64_t started) {
  db::SessionSummary s;
  s.id = id;
  s.start.uuid = uuid;
  s.start.argv = {"agent", "--task", std::to_string(id)};
  s.start.cwd = "/p";
  s.start.started_ns = started;
  s.state = SessionState::Ended;
  s.end = SessionEnd{started + 5, 0, 0, SessionState::Ended};
  s.events = static_cast<uint64_t>(id) * 10;
  return s;
}

std::string bootId() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(f, s);
  return s;
}

}  // namespace

void ModelsTest::eventModelStaysBoundedWithoutGhostRows() {
  EventModel m(100);
  Tester t1(&m, kFatal);
  EventFilterModel f;
  f.setSourceModel(&m);
  Tester t2(&f, kFatal);
  f.setDecision(QStringLiteral("deny"));
  // A view on top, as in the app: it must never see a row that is gone.
  QTableView view;
  view.setModel(&f);
  view.resize(600, 300);
  view.show();

  uint64_t seq = 0;
  for (int batch = 0; batch < 10; ++batch) {
    for (int i = 0; i < 30; ++i, ++seq) m.enqueue(item(seq, seq % 2 == 1));
    m.flush();
    QCOMPARE(m.rowCount(), static_cast<int>(std::min<uint64_t>(seq, 100)));
    QCoreApplication::processEvents();
  }
  QCOMPARE(m.evicted(), uint64_t(200));
  QCOMPARE(m.item(0).row.seq, uint64_t(200));
  QCOMPARE(m.item(99).row.seq, uint64_t(299));
  QCOMPARE(f.rowCount(), 50);

  // One burst larger than the whole table: only its newest rows remain.
  for (int i = 0; i < 250; ++i, ++seq) m.enqueue(item(seq, true));
  m.flush();
  QCOMPARE(m.rowCount(), 100);
  QCOMPARE(m.item(0).row.seq, uint64_t(450));
  QCOMPARE(m.item(99).row.seq, uint64_t(549));
  QCOMPARE(f.rowCount(), 100);
  QCOMPARE(m.evicted(), uint64_t(450));

  // And back to review: a reset replaces everything.
  std::vector<EventItem> few{item(1), item(2, true)};
  m.reset(std::move(few));
  QCOMPARE(m.rowCount(), 2);
  QCOMPARE(f.rowCount(), 1);
  QCOMPARE(m.evicted(), uint64_t(0));
}

void ModelsTest::eventModelInsertsInBatches() {
  EventModel m;
  Tester t(&m, kFatal);
  QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
  // All older than the hold-back, however long making them takes on a
  // loaded machine: the first timer tick must take every one of them.
  const int64_t past = nowNs() - 1'000'000'000;
  for (uint64_t i = 0; i < 1000; ++i) {
    EventItem e = item(i);
    e.row.ev.ts_ns = past + int64_t(i);
    m.enqueue(std::move(e));
  }
  // Nothing is inserted per event: one batch, on the timer.
  QCOMPARE(m.rowCount(), 0);
  QCOMPARE(m.pending(), size_t(1000));
  QTRY_COMPARE(m.rowCount(), 1000);
  QCOMPARE(inserted.count(), 1);
  QCOMPARE(inserted.at(0).at(1).toInt(), 0);
  QCOMPARE(inserted.at(0).at(2).toInt(), 999);
}

void ModelsTest::eventModelPutsLateEventsInTimeOrder() {
  EventModel m;
  Tester t(&m, kFatal);
  // Long enough that a loaded machine cannot stall past it between the two
  // enqueues below; short enough for QTRY's five seconds.
  m.setHoldBack(1500);
  int64_t now = nowNs();
  auto at = [&](uint64_t seq, int64_t offsetMs) {
    EventItem e = item(seq);
    e.row.ev.ts_ns = now + offsetMs * 1000000;
    return e;
  };
  // The supervisor's events first, the eBPF tracer's a little later.
  m.enqueue(at(1, -10000));
  m.enqueue(at(3, -9998));
  m.enqueue(at(2, -9999));
  m.enqueue(at(5, 0));  // too recent: held back
  QTRY_COMPARE(m.rowCount(), 3);
  QCOMPARE(m.item(0).row.seq, uint64_t(1));
  QCOMPARE(m.item(1).row.seq, uint64_t(2));
  QCOMPARE(m.item(2).row.seq, uint64_t(3));
  m.enqueue(at(4, -1));  // late, but within the hold-back: before 5
  QTRY_COMPARE(m.rowCount(), 5);
  QCOMPARE(m.item(3).row.seq, uint64_t(4));
  QCOMPARE(m.item(4).row.seq, uint64_t(5));
  // Review: the database's rows in time order.
  std::vector<EventItem> v{at(9, 5), at(7, 3), at(8, 3)};
  m.reset(std::move(v));
  QCOMPARE(m.item(0).row.seq, uint64_t(7));
  QCOMPARE(m.item(1).row.seq, uint64_t(8));
  QCOMPARE(m.item(2).row.seq, uint64_t(9));
}

void ModelsTest::eventModelKeepsUpWithABurst() {
  // 5,000 events a second for four seconds of simulated time, into a
  // filtered, visible table that reaches its bound halfway through.
  EventModel m(10000);
  EventFilterModel f;
  f.setSourceModel(&m);
  f.setPath(QStringLiteral("**/*.o"));
  QTableView view;
  view.setModel(&f);
  view.resize(900, 500);
  view.show();
  QElapsedTimer clock;
  clock.start();
  uint64_t seq = 0;
  for (int tick = 0; tick < 100; ++tick) {  // 100 batches of 40 ms
    for (int i = 0; i < 200; ++i, ++seq) m.enqueue(item(seq, seq % 7 == 0, seq % 3 ? "/p/build/x.o" : "/p/src/main.c"));
    m.flush();
    view.scrollToBottom();
    QCoreApplication::processEvents();
  }
  qint64 ms = clock.elapsed();
  qInfo("20,000 events in %lld ms of CPU for 4,000 ms of events", ms);
  QCOMPARE(m.rowCount(), 10000);
  QCOMPARE(m.evicted(), uint64_t(10000));
  QCOMPARE(seq, uint64_t(20000));
  QVERIFY2(ms < 4000, "the live table must keep up with 5,000 events per second");
  for (uint64_t i = 0; i < 30000; ++i, ++seq) m.enqueue(item(seq));
  clock.restart();
  m.flush();
  QCoreApplication::processEvents();
  QCOMPARE(m.rowCount(), 10000);
  QVERIFY(clock.elapsed() < 2000);
}

void ModelsTest::eventFilterMatchesWhatUsersType() {
  EventModel m;
  EventFilterModel f;
  f.setSourceModel(&m);
  Tester t(&f, kFatal);
  auto rm = proc(1, 4001, "rm"), tar = proc(2, 4002, "tar"), py = proc(3, 4003, "python3"), mv = proc(4, 4004, "mv");
  std::vector<EventItem> items;
  items.push_back({0, 1, makeEvent(1, Action::FileDelete, "/p/build/x.o", rm), {}});
  items.push_back(
      {0, 1, makeEvent(2, Action::FileDelete, "/p/src/a.c", tar, Decision::Deny, false, "protect-src"), {}});
  items.push_back({0, 1, makeEvent(3, Action::FileWrite, "/p/notes.txt", py, Decision::Log, true, "log-writes"), {}});
  EventRow ren = makeEvent(4, Action::FileRename, "/p/src", mv, Decision::Ask, true, "ask-rename");
  ren.ev.target = "/tmp/src";
  items.push_back({0, 1, ren, {}});
  items.push_back({0, 1, makeEvent(5, Action::ProcExec, "/usr/bin/make", rm), {}});
  m.reset(std::move(items));
  QCOMPARE(f.rowCount(), 5);
  QVERIFY(!f.isFiltering());

  f.setAction(QStringLiteral("file.delete"));
  QCOMPARE(f.rowCount(), 2);
  f.setAction(QStringLiteral("file.mutate"));
  QCOMPARE(f.rowCount(), 4);
  f.setAction(QStringLiteral("no.such"));
  QCOMPARE(f.rowCount(), 0);
  f.setAction(QString());

  f.setDecision(QStringLiteral("deny"));
  QCOMPARE(f.rowCount(), 1);
  f.setDecision(QStringLiteral("ask"));
  QCOMPARE(f.rowCount(), 1);
  f.setDecision(QStringLiteral("log"));
  QCOMPARE(f.rowCount(), 1);
  f.setDecision(QStringLiteral("allow"));
  QCOMPARE(f.rowCount(), 4);
  f.setDecision(QString());

  f.setProcess(QStringLiteral("ta"));
  QCOMPARE(f.rowCount(), 1);
  f.setProcess(QStringLiteral("4003"));
  QCOMPARE(f.rowCount(), 1);
  f.setProcess(QString());

  f.setPath(QStringLiteral("src"));  // substring of path or target
  QCOMPARE(f.rowCount(), 2);
  f.setPath(QStringLiteral("*.o"));  // a glob, anywhere
  QCOMPARE(f.rowCount(), 1);
  f.setPath(QStringLiteral("/tmp/**"));  // the rename's target
  QCOMPARE(f.rowCount(), 1);
  f.setPath(QStringLiteral("/p/[oops"));
  QVERIFY(!f.pathError().isEmpty());
  QCOMPARE(f.rowCount(), 0);
  f.setPath(QString());

  f.setProcIds({2, 4});
  QCOMPARE(f.rowCount(), 2);
  f.setDecision(QStringLiteral("deny"));
  QCOMPARE(f.rowCount(), 1);
  QVERIFY(f.isFiltering());
  QCOMPARE(f.sourceRows(), std::vector<int>{1});
}

void ModelsTest::eventFilterFollowsLiveInserts() {
  EventModel m(50);
  EventFilterModel f;
  f.setSourceModel(&m);
  Tester t1(&m, kFatal), t2(&f, kFatal);
  f.setPath(QStringLiteral("**/keep/**"));
  uint64_t seq = 0;
  for (int b = 0; b < 12; ++b) {
    for (int i = 0; i < 9; ++i, ++seq) m.enqueue(item(seq, false, seq % 3 ? "/p/build/x" : "/p/keep/y"));
    m.flush();
  }
  QCOMPARE(m.rowCount(), 50);
  int keep = 0;
  for (int r = 0; r < m.rowCount(); ++r) keep += m.item(r).row.ev.path == "/p/keep/y";
  QCOMPARE(f.rowCount(), keep);
}

void ModelsTest::processTreeFromDatabaseAndLive() {
  ProcessTreeModel m;
  Tester t(&m, kFatal);
  m.setProcesses({stored(1, 0, 10, "sh", {"sh", "-c", "make && rm -rf build"}), stored(2, 1, 11, "make"),
                  stored(3, 2, 12, "cc", {"cc", "-c", "x.c"}), stored(4, 1, 13, "rm", {"rm", "-rf", "build"})});
  QCOMPARE(m.rowCount(), 1);
  QModelIndex sh = m.index(0, 0);
  QCOMPARE(m.rowCount(sh), 2);
  QCOMPARE(m.data(m.index(0, ProcessTreeModel::CommandColumn)).toString(),
           QStringLiteral("sh -c 'make && rm -rf build'"));
  auto chain = m.chain(3);
  QCOMPARE(chain.size(), size_t(3));
  QCOMPARE(chain[0]->row.comm, std::string("cc"));
  QCOMPARE(chain[2]->row.comm, std::string("sh"));
  QCOMPARE(m.subtree(1).size(), size_t(4));
  QCOMPARE(m.subtree(2), (std::set<uint64_t>{2, 3}));
  QCOMPARE(m.procIdOf(m.indexOf(4)), uint64_t(4));

  // Live: a child under cc, an orphan at the top, exec, exit, counts.
  m.setLive(true);
  ProcessRow r5 = stored(5, 3, 14, "as").row;
  m.addProcess(r5);
  QCOMPARE(m.rowCount(m.indexOf(3)), 1);
  ProcessRow r9 = stored(9, 42, 99, "daemon").row;
  m.addProcess(r9);
  QCOMPARE(m.rowCount(), 2);
  m.addProcess(r5);  // again: no duplicate
  QCOMPARE(m.rowCount(m.indexOf(3)), 1);
  m.execProcess(ProcessExec{5, nowNs(), "ld", "/usr/bin/ld", {"ld", "-o", "x"}});
  QCOMPARE(m.data(m.indexOf(5)).toString(), QStringLiteral("ld"));
  QCOMPARE(m.data(m.indexOf(5, ProcessTreeModel::ExitColumn)).toString(), QStringLiteral("running"));
  m.exitProcess(ProcessExit{5, nowNs(), 1, 0});
  QCOMPARE(m.data(m.indexOf(5, ProcessTreeModel::ExitColumn)).toString(), QStringLiteral("1"));
  m.exitProcess(ProcessExit{4, nowNs(), -1, 9});
  QCOMPARE(m.data(m.indexOf(4, ProcessTreeModel::ExitColumn)).toString(), QStringLiteral("killed by SIGKILL"));
  QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
  for (int i = 0; i < 500; ++i) m.countEvent(3, i % 5 == 0);
  QTRY_VERIFY(changed.count() >= 1);
  QVERIFY(changed.count() < 5);  // coalesced, not one per event
  QCOMPARE(m.data(m.indexOf(3, ProcessTreeModel::EventsColumn)).toString(), QStringLiteral("500"));
  QCOMPARE(m.data(m.indexOf(3, ProcessTreeModel::DenialsColumn)).toString(), QStringLiteral("100"));
  m.clear();
  QCOMPARE(m.rowCount(), 0);
}

void ModelsTest::sessionListMergesLiveAndStored() {
  SessionListModel m;
  Tester t(&m, kFatal);
  m.setStoredSessions({summary(1, "u1", 100), summary(2, "u2", 200), summary(3, "u3", 300)});
  QCOMPARE(m.rowCount(), 3);
  QCOMPARE(m.row(0).uuid, QStringLiteral("u3"));  // newest first
  QVERIFY(m.data(m.index(0, SessionListModel::SessionColumn)).toString().contains(QStringLiteral("agent --task 3")));
  QCOMPARE(m.data(m.index(0, SessionListModel::ExitColumn)).toString(), QStringLiteral("0"));

  proto::Hello h2;
  h2.session = summary(2, "u2", 200);
  h2.session.state = SessionState::Running;
  h2.session.end.reset();
  LiveSession live2(1, h2);
  m.addLive(&live2);
  QCOMPARE(m.rowCount(), 3);  // the same session, now live
  QCOMPARE(m.stateText(m.row(m.rowOf(QStringLiteral("u2")))), QStringLiteral("running"));
  live2.apply(proto::EndMsg{2, SessionEnd{300, 125, 0, SessionState::Aborted}});
  QCOMPARE(m.stateText(m.row(m.rowOf(QStringLiteral("u2")))), QStringLiteral("aborted"));

  proto::Hello h4;
  h4.session = summary(4, "u4", 400);
  h4.session.start.observe = true;
  h4.session.degraded = {"no Landlock"};
  h4.session.state = SessionState::Running;
  h4.session.end.reset();
  LiveSession live4(2, h4);
  m.addLive(&live4);
  QCOMPARE(m.rowCount(), 4);
  QCOMPARE(m.row(0).uuid, QStringLiteral("u4"));
  QString state = m.data(m.index(0, SessionListModel::StateColumn)).toString();
  QVERIFY2(state.contains(QStringLiteral("OBSERVE")) && state.contains(QStringLiteral("DEGRADED")), qPrintable(state));

  // An ask waiting for its answer is an ask already, not only once answered.
  proto::AskMsg ask;
  ask.ask_id = 7;
  ask.session = 4;
  ask.row = makeEvent(1, Action::FileDelete, "/p/keep/a", proc(4, 13, "rm"), Decision::Ask, false, "ask-keep");
  live4.apply(ask);
  QCOMPARE(live4.asks(), 1u);
  QCOMPARE(m.data(m.index(0, SessionListModel::AsksColumn)).toString(), QStringLiteral("1"));
  QVERIFY(m.data(m.index(0, SessionListModel::StateColumn)).toString().contains(QStringLiteral("1 asking")));
  live4.apply(proto::AskCancel{7, "timeout"});
  EventRow denied = ask.row;
  live4.apply(proto::EventMsg{4, denied});  // the answer's event: still one ask
  QCOMPARE(live4.asks(), 1u);

  // Another database: its sessions replace the stored rows; live ones stay.
  m.setStoredSessions({summary(1, "u1", 100), summary(5, "u5", 50)});
  QCOMPARE(m.rowCount(), 4);  // u4 (live), u2 (live), u1, u5
  QCOMPARE(m.rowOf(QStringLiteral("u3")), -1);
  QVERIFY(m.rowOf(QStringLiteral("u2")) >= 0);
  QCOMPARE(m.row(m.rowCount() - 1).uuid, QStringLiteral("u5"));
  m.setStoredSessions({});
  QCOMPARE(m.rowCount(), 2);
}

void ModelsTest::whoTouchedModelHasChains() {
  WhoTouchedModel m;
  Tester t(&m, kFatal);
  std::vector<Touch> touches(2);
  touches[0].event = EventItem{
      10, 1, makeEvent(1, Action::FileDelete, "/p/keep/a", proc(4, 13, "rm"), Decision::Ask, false, "ask-keep"), {}};
  touches[0].chain = {stored(4, 1, 13, "rm", {"rm", "keep/a"}), stored(1, 0, 10, "sh", {"sh", "-c", "rm keep/a"})};
  touches[1].event = EventItem{11, 2, makeEvent(2, Action::FileWrite, "/p/keep/a", proc(7, 20, "vim")), {}};
  m.setTouches(std::move(touches));
  QCOMPARE(m.rowCount(), 2);
  QCOMPARE(m.rowCount(m.index(0, 0)), 2);
  QCOMPARE(m.rowCount(m.index(1, 0)), 0);
  QCOMPARE(m.data(m.index(0, 0, m.index(0, 0)).siblingAtColumn(WhoTouchedModel::PathColumn)).toString(),
           QStringLiteral("rm keep/a"));
  QCOMPARE(m.touchOf(m.index(1, 0, m.index(0, 0))), 0);
  QCOMPARE(m.data(m.index(0, WhoTouchedModel::DecisionColumn)).toString(), QStringLiteral("asked → denied"));
  m.setTouches({});
  QCOMPARE(m.rowCount(), 0);
}

void ModelsTest::auditDatabaseReviewAndExport() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  std::string path = (dir.path() + QStringLiteral("/audit.db")).toStdString();
  int64_t sid = 0;
  {
    auto w = db::Writer::open(path);
    QVERIFY(w);
    SessionStart ss;
    ss.uuid = "uuid-review";
    ss.name = "review";
    ss.argv = {"sh", "-c", "rm keep/a"};
    ss.cwd = "/p";
    ss.started_ns = nowNs();
    ss.supervisor_pid = getpid();
    ss.boot_id = bootId();
    auto s = (*w)->begin_session(ss);
    QVERIFY(s);
    sid = *s;
    auto sh = proc(1, 10, "sh"), rm = proc(2, 11, "rm");
    (*w)->add_process(sid, ProcessRow{1, 0, 10, 9, 0, "sh", "/bin/sh", {"sh", "-c", "rm keep/a"}, "/p", nowNs()});
    (*w)->add_process(sid, ProcessRow{2, 1, 11, 10, 0, "rm", "/bin/rm", {"rm", "keep/a"}, "/p", nowNs()});
    EventRow denied = makeEvent(1, Action::FileDelete, "/p/keep/a", rm, Decision::Ask, false, "ask-keep");
    (*w)->add_event(sid, denied);
    (*w)->add_event(sid, makeEvent(2, Action::FileWrite, "/p/notes", sh));
    (*w)->add_approval(sid, ApprovalRow{1, nowNs(), nowNs(), "gui", "deny-once", ""});
    QVERIFY((*w)->end_session(sid, SessionEnd{nowNs(), 0, 0, SessionState::Ended}));
  }
  AuditDatabase adb;
  QString error;
  QVERIFY2(adb.open(QString::fromStdString(path), &error), qPrintable(error));
  auto sessions = adb.sessions(&error);
  QVERIFY(sessions && sessions->size() == 1);
  bool truncated = true;
  QCOMPARE(adb.events(sid, 1, &truncated, &error).size(), size_t(1));
  QVERIFY(truncated);
  // Why: the session recorded no policy, so its (missing) files are named.
  auto first = adb.events(sid, 10, &truncated, &error);
  QString why = adb.why(first[0].id, &error);
  QVERIFY2(why.contains(QStringLiteral("event %1 of session %2: rm").arg(first[0].id).arg(sid)), qPrintable(why));
  QVERIFY2(why.contains(QStringLiteral("answered: deny-once by gui")), qPrintable(why));
  QVERIFY(adb.why(999999, &error).isEmpty());
  QVERIFY2(error.contains(QStringLiteral("no event 999999")), qPrintable(error));
  auto touches = adb.whoTouched(sid, "/p/keep/a", 100, &error);
  QCOMPARE(touches.size(), size_t(1));
  QCOMPARE(touches[0].chain.size(), size_t(2));
  QCOMPARE(touches[0].chain[0].row.comm, std::string("rm"));
  QVERIFY(touches[0].event.approval);

  SessionPage page(&adb);
  Tester t1(page.eventModel(), kFatal), t2(page.processModel(), kFatal), t3(page.whoTouchedModel(), kFatal);
  page.showStored(sessions->front());
  QCOMPARE(page.eventModel()->rowCount(), 2);
  QCOMPARE(page.processModel()->rowCount(), 1);
  page.setFilters(QString(), QStringLiteral("deny"), QString(), QString());
  QCOMPARE(page.eventFilter()->rowCount(), 1);
  // Selecting an event shows why it was decided.
  QVERIFY(page.whyText().isEmpty());
  page.eventView()->setCurrentIndex(page.eventFilter()->index(0, 0));
  QVERIFY2(page.whyText().contains(QStringLiteral("/p/keep/a")), qPrintable(page.whyText()));
  QVERIFY2(page.whyText().contains(QStringLiteral("recorded: ask (ask-keep)")), qPrintable(page.whyText()));
  QString out = dir.path() + QStringLiteral("/export.jsonl");
  int n = 0;
  QVERIFY2(page.exportEvents(out, &error, &n), qPrintable(error));
  QCOMPARE(n, 1);
  QFile f(out);
  QVERIFY(f.open(QIODevice::ReadOnly));
  QList<QByteArray> lines = f.readAll().split('\n');
  QCOMPARE(lines.size(), 2);  // one line and the final newline
  auto j = nlohmann::json::parse(lines[0].toStdString());
  QCOMPARE(j["path"].get<std::string>(), std::string("/p/keep/a"));
  QCOMPARE(j["decision"].get<std::string>(), std::string("deny"));
  QCOMPARE(j["rule"].get<std::string>(), std::string("ask-keep"));
  QCOMPARE(j["approval"]["answer"].get<std::string>(), std::string("deny-once"));
  QVERIFY(j.contains("id"));

  page.whoTouched(QStringLiteral("/p/keep/a"), false);
  QCOMPARE(page.whoTouchedModel()->rowCount(), 1);
  QCOMPARE(page.whoTouchedModel()->rowCount(page.whoTouchedModel()->index(0, 0)), 2);
  page.whoTouched(QStringLiteral("/p/"), true);  // a directory: everything below
  QCOMPARE(page.whoTouchedModel()->rowCount(), 2);
  page.whoTouched(QStringLiteral("/p/**"), true, true);  // a glob; changes only
  QCOMPARE(page.whoTouchedModel()->rowCount(), 2);
  {
    // Reads are touches too, unless only changes are asked for.
    auto w = db::Writer::open(path);
    QVERIFY(w);
    (*w)->add_event(sid, makeEvent(3, Action::FileRead, "/p/keep/a", proc(2, 11, "rm")));
    QVERIFY((*w)->flush());
  }
  page.whoTouched(QStringLiteral("/p/keep/a"), false, false);
  QCOMPARE(page.whoTouchedModel()->rowCount(), 2);
  page.whoTouched(QStringLiteral("/p/keep/a"), false, true);
  QCOMPARE(page.whoTouchedModel()->rowCount(), 1);
  page.selectProcess(2);
  QCOMPARE(page.processModel()->procIdOf(page.processModel()->indexOf(2)), uint64_t(2));
}

}  // namespace cb::gui::test
