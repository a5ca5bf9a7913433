// The Hosts tab under QAbstractItemModelTester (fatal): the host table read
// from a real audit database written by db::Writer, sorted as a user sorts
// it; the live model fed by the event model's batches, bounded; and "who
// contacted this host?" by name, pattern, address, block and IPv4-mapped
// address, in one session, across sessions, and live.
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <fstream>

#include "gui/auditdb.h"
#include "gui/eventmodel.h"
#include "gui/hostmodel.h"
#include "gui/hostspanel.h"
#include "gui/processtreemodel.h"
#include "gui/sessionhub.h"
#include "gui/sessionpage.h"
#include "gui_tests.h"

namespace cb::gui::test {
namespace {

using Tester = QAbstractItemModelTester;
constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

EventRow netEvent(uint64_t seq, const char* addr, uint16_t port, std::vector<std::string> hosts,
                  std::shared_ptr<const ProcessInfo> p, int64_t ts, NetProto proto = NetProto::Tcp,
                  bool denied = false) {
  EventRow r = makeEvent(seq, Action::NetConnect, "", std::move(p), denied ? Decision::Deny : Decision::Allow, !denied,
                         denied ? "no-metadata" : "");
  IpAddr ip = *IpAddr::parse(addr);
  r.ev.net = make_net_object(proto, ip, port);
  r.ev.path = std::string(net_proto_name(proto)) + ":" + (ip.family == 6 ? "[" + ip.text() + "]" : ip.text()) + ":" +
              std::to_string(port);
  r.ev.net.hosts = hosts;
  r.ev.net.names = hosts;
  r.ev.syscall = "connect";
  r.ev.ts_ns = ts;
  return r;
}

LookupRow lookupRow(const char* name, bool denied, int64_t ts, uint64_t procId) {
  LookupRow l;
  l.ts_ns = ts;
  l.proc_id = procId;
  l.client = "127.0.0.1:40000";
  l.name = name;
  l.type = 1;
  l.rcode = denied ? 5 : 0;
  l.denied = denied;
  if (!denied) l.addresses = {"104.16.0.35"};
  return l;
}

std::string bootId() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(f, s);
  return s;
}

struct NetDb {
  std::string path;
  int64_t a = 0, b = 0;
};

// Session a: npm and its children reach the registry, a statsd port, a
// service by an IPv4-mapped address, and (denied) the metadata service;
// evil.example is refused at resolution.  Session b: one address in 10/8.
NetDb writeNetSessions(const QTemporaryDir& dir) {
  NetDb d;
  d.path = (dir.path() + QStringLiteral("/audit.db")).toStdString();
  auto w = db::Writer::open(d.path);
  if (!w) qFatal("%s", w.error().message.c_str());
  SessionStart ss;
  ss.uuid = "uuid-net";
  ss.name = "npm";
  ss.argv = {"npm", "install"};
  ss.cwd = "/p";
  ss.started_ns = nowNs() - 10'000'000'000;
  ss.supervisor_pid = getpid();
  ss.boot_id = bootId();
  d.a = *(*w)->begin_session(ss);
  auto npm = proc(1, 100, "npm"), node = proc(2, 101, "node"), curl = proc(3, 102, "curl");
  (*w)->add_process(d.a, ProcessRow{1, 0, 100, 99, 0, "npm", "/usr/bin/npm", {"npm", "install"}, "/p", ss.started_ns});
  (*w)->add_process(d.a, ProcessRow{2, 1, 101, 100, 0, "node", "/usr/bin/node", {"node", "x.js"}, "/p", ss.started_ns});
  (*w)->add_process(d.a, ProcessRow{3, 1, 102, 100, 0, "curl", "/usr/bin/curl", {"curl", "-s"}, "/p", ss.started_ns});
  int64_t t = ss.started_ns;
  (*w)->add_lookup(d.a, lookupRow("registry.npmjs.org", false, t + 1'000'000, 1));
  (*w)->add_event(d.a, netEvent(1, "104.16.0.35", 443, {"registry.npmjs.org"}, npm, t + 2'000'000));
  (*w)->add_event(d.a, netEvent(2, "104.16.0.35", 443, {"registry.npmjs.org"}, npm, t + 3'000'000));
  (*w)->add_event(d.a, netEvent(3, "2606:4700::6810:23", 443, {"registry.npmjs.org"}, node, t + 4'000'000));
  (*w)->add_event(d.a, netEvent(4, "127.0.0.1", 8125, {}, node, t + 5'000'000, NetProto::Udp));
  (*w)->add_event(d.a, netEvent(5, "169.254.169.254", 80, {}, curl, t + 6'000'000, NetProto::Tcp, true));
  (*w)->add_event(d.a, netEvent(6, "::ffff:10.1.2.3", 8080, {}, node, t + 7'000'000));
  (*w)->add_event(d.a, makeEvent(7, Action::FileWrite, "/p/notes", npm));
  (*w)->add_lookup(d.a, lookupRow("evil.example", true, t + 8'000'000, 3));
  (*w)->add_lookup(d.a, lookupRow("evil.example", true, t + 9'000'000, 3));
  if (!(*w)->end_session(d.a, SessionEnd{t + 10'000'000, 0, 0, SessionState::Ended})) qFatal("end_session");
  ss.uuid = "uuid-net-b";
  ss.name = "fetch";
  d.b = *(*w)->begin_session(ss);
  (*w)->add_process(d.b, ProcessRow{1, 0, 200, 199, 0, "curl", "/usr/bin/curl", {"curl"}, "/p", ss.started_ns});
  (*w)->add_event(d.b, netEvent(1, "10.1.200.1", 443, {}, proc(1, 200, "curl"), t + 11'000'000));
  if (!(*w)->end_session(d.b, SessionEnd{t + 12'000'000, 0, 0, SessionState::Ended})) qFatal("end_session");
  return d;
}

QString cell(const QAbstractItemModel& m, int row, int column) { return m.data(m.index(row, column)).toString(); }

int rowOfHost(const HostModel& m, const QString& host) {
  for (int r = 0; r < m.rowCount(); ++r)
    if (cell(m, r, HostModel::HostColumn) == host) return r;
  return -1;
}

QStringList column(const QAbstractItemModel& m, int c) {
  QStringList out;
  for (int r = 0; r < m.rowCount(); ++r) out << cell(m, r, c);
  return out;
}

}  // namespace

void ModelsTest::hostModelReviewsWhatTheDatabaseSays() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  NetDb d = writeNetSessions(dir);
  AuditDatabase adb;
  QString error;
  QVERIFY2(adb.open(QString::fromStdString(d.path), &error), qPrintable(error));

  HostModel m;
  Tester t1(&m, kFatal);
  QSortFilterProxyModel sorted;
  sorted.setSortRole(HostModel::SortKeyRole);
  sorted.setSourceModel(&m);
  Tester t2(&sorted, kFatal);
  m.setHosts(adb.hosts(d.a, &error));
  QVERIFY2(error.isEmpty(), qPrintable(error));
  // What `cottonbox hosts` prints: four hosts and ports, then the refused name.
  QCOMPARE(
      column(m, HostModel::HostColumn),
      (QStringList{QStringLiteral("registry.npmjs.org"), QStringLiteral("127.0.0.1"), QStringLiteral("169.254.169.254"),
                   QStringLiteral("10.1.2.3"), QStringLiteral("evil.example")}));
  int reg = rowOfHost(m, QStringLiteral("registry.npmjs.org"));
  QCOMPARE(cell(m, reg, HostModel::PortColumn), QStringLiteral("443"));
  QCOMPARE(cell(m, reg, HostModel::ProtoColumn), QStringLiteral("tcp"));
  QCOMPARE(cell(m, reg, HostModel::AddressesColumn), QStringLiteral("104.16.0.35, 2606:4700::6810:23"));
  QCOMPARE(cell(m, reg, HostModel::ProcessesColumn), QStringLiteral("npm[100]×2, node[101]"));
  QCOMPARE(cell(m, reg, HostModel::EventsColumn), QStringLiteral("3"));
  QCOMPARE(cell(m, reg, HostModel::DeniedColumn), QStringLiteral("0"));
  QCOMPARE(cell(m, reg, HostModel::LookupsColumn), QStringLiteral("1"));
  QCOMPARE(m.queryFor(reg), QStringLiteral("registry.npmjs.org"));
  int udp = rowOfHost(m, QStringLiteral("127.0.0.1"));
  QCOMPARE(cell(m, udp, HostModel::ProtoColumn), QStringLiteral("udp"));
  QCOMPARE(cell(m, udp, HostModel::LookupsColumn), QStringLiteral("–"));
  int meta = rowOfHost(m, QStringLiteral("169.254.169.254"));
  QCOMPARE(cell(m, meta, HostModel::DeniedColumn), QStringLiteral("1"));
  QVERIFY(m.data(m.index(meta, 0), Qt::BackgroundRole).isValid());  // tinted as a denial
  QVERIFY(!m.data(m.index(reg, 0), Qt::BackgroundRole).isValid());
  QCOMPARE(m.queryFor(rowOfHost(m, QStringLiteral("10.1.2.3"))), QStringLiteral("10.1.2.3"));
  int evil = rowOfHost(m, QStringLiteral("evil.example"));
  QCOMPARE(cell(m, evil, HostModel::ProtoColumn), QStringLiteral("dns"));
  QCOMPARE(cell(m, evil, HostModel::PortColumn), QStringLiteral("–"));
  QCOMPARE(cell(m, evil, HostModel::ProcessesColumn), QStringLiteral("curl[102]"));
  QCOMPARE(cell(m, evil, HostModel::LookupsColumn), QStringLiteral("2 (2 refused)"));

  // Sorted as a user clicks the headers: numbers as numbers, times as times.
  sorted.sort(HostModel::EventsColumn, Qt::DescendingOrder);
  QCOMPARE(cell(sorted, 0, HostModel::HostColumn), QStringLiteral("registry.npmjs.org"));
  sorted.sort(HostModel::PortColumn, Qt::AscendingOrder);
  QCOMPARE(column(sorted, HostModel::PortColumn),
           (QStringList{QStringLiteral("–"), QStringLiteral("80"), QStringLiteral("443"), QStringLiteral("8080"),
                        QStringLiteral("8125")}));
  sorted.sort(HostModel::HostColumn, Qt::AscendingOrder);
  QCOMPARE(cell(sorted, 0, HostModel::HostColumn), QStringLiteral("10.1.2.3"));
  QCOMPARE(cell(sorted, 4, HostModel::HostColumn), QStringLiteral("registry.npmjs.org"));
  sorted.sort(HostModel::LastColumn, Qt::DescendingOrder);
  QCOMPARE(cell(sorted, 0, HostModel::HostColumn), QStringLiteral("evil.example"));
  sorted.sort(HostModel::DeniedColumn, Qt::DescendingOrder);
  QCOMPARE(cell(sorted, 0, HostModel::HostColumn), QStringLiteral("169.254.169.254"));

  // Another session; then none.
  m.setHosts(adb.hosts(d.b, &error));
  QCOMPARE(column(m, HostModel::HostColumn), QStringList{QStringLiteral("10.1.200.1")});
  m.clear();
  QCOMPARE(sorted.rowCount(), 0);
}

void ModelsTest::hostModelFollowsLiveBatches() {
  EventModel events;
  ProcessTreeModel procs;
  procs.setLive(true);
  procs.addProcess(ProcessRow{3, 0, 300, 1, 0, "curl", "/usr/bin/curl", {"curl"}, "/p", nowNs()});
  HostModel m(4);
  Tester t1(&m, kFatal);
  QSortFilterProxyModel sorted;
  sorted.setSortRole(HostModel::SortKeyRole);
  sorted.setDynamicSortFilter(true);
  sorted.setSourceModel(&m);
  sorted.sort(HostModel::EventsColumn, Qt::DescendingOrder);
  Tester t2(&sorted, kFatal);
  QTableView view;  // as in the app: a view must never see a row that is gone
  view.setModel(&sorted);
  view.resize(900, 300);
  view.show();
  m.follow(&events, &procs);
  QVERIFY(m.isLive());
  QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
  QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);

  auto curl = proc(3, 300, "curl");
  const int64_t past = nowNs() - 5'000'000'000;
  uint64_t seq = 0;
  auto enqueue = [&](const char* addr, uint16_t port, std::vector<std::string> hosts) {
    ++seq;
    events.enqueue(EventItem{0, 1, netEvent(seq, addr, port, hosts, curl, past + int64_t(seq)), std::nullopt});
  };
  // A burst of connects is one insert, not one per event; files are not hosts.
  for (int i = 0; i < 100; ++i) enqueue("127.0.0.1", 8000, {"localhost"});
  enqueue("10.0.0.1", 443, {});
  events.enqueue(EventItem{0, 1, makeEvent(++seq, Action::FileWrite, "/p/x", curl), std::nullopt});
  events.flush();
  QCOMPARE(m.rowCount(), 2);
  QCOMPARE(inserted.count(), 1);
  QCOMPARE(cell(m, 0, HostModel::EventsColumn), QStringLiteral("100"));
  // The next batch updates the row in place and appends the new host.
  for (int i = 0; i < 50; ++i) enqueue("127.0.0.1", 8000, {"localhost"});
  enqueue("::1", 8000, {});
  events.flush();
  QCOMPARE(m.rowCount(), 3);
  QCOMPARE(inserted.count(), 2);
  QVERIFY(changed.count() >= 1);
  QCOMPARE(cell(m, 0, HostModel::HostColumn), QStringLiteral("localhost"));
  QCOMPARE(cell(m, 0, HostModel::EventsColumn), QStringLiteral("150"));
  QCOMPARE(cell(m, 2, HostModel::HostColumn), QStringLiteral("::1"));
  QCOMPARE(cell(sorted, 0, HostModel::HostColumn), QStringLiteral("localhost"));  // re-sorted live

  // Lookups come from the database as it commits them: each counted once.
  std::vector<db::StoredLookup> lookups{{1, lookupRow("localhost", false, past, 3)},
                                        {1, lookupRow("evil.example", true, past + 1, 3)}};
  m.addLookups(lookups);
  m.addLookups(lookups);
  QCOMPARE(cell(m, 0, HostModel::LookupsColumn), QStringLiteral("1"));
  int evil = rowOfHost(m, QStringLiteral("evil.example"));
  QVERIFY(evil >= 0);
  QCOMPARE(cell(m, evil, HostModel::ProcessesColumn), QStringLiteral("curl[300]"));  // named by the process tree
  QCOMPARE(cell(m, evil, HostModel::LookupsColumn), QStringLiteral("1 (1 refused)"));

  // Bounded: a fourth host is kept, the fifth and sixth are counted.
  enqueue("192.0.2.1", 443, {});
  enqueue("192.0.2.2", 443, {});
  enqueue("192.0.2.3", 443, {});
  events.flush();
  QCOMPARE(m.rowCount(), 5);
  QCOMPARE(m.dropped(), uint64_t(2));
  QVERIFY(rowOfHost(m, QStringLiteral("192.0.2.1")) >= 0);
  QCOMPARE(rowOfHost(m, QStringLiteral("192.0.2.3")), -1);
  QCoreApplication::processEvents();

  // The same fold as the database's: a refused name that a connection then
  // reaches (a shared address) leaves the refused rows for that host's.
  enqueue("127.0.0.1", 8000, {"localhost", "evil.example"});
  events.flush();
  QCOMPARE(rowOfHost(m, QStringLiteral("evil.example")), -1);
  QCOMPARE(m.rowCount(), 4);
  QCOMPARE(cell(m, 0, HostModel::LookupsColumn), QStringLiteral("2 (1 refused)"));

  // Back to review: the live feed stops.
  m.setHosts({});
  QVERIFY(!m.isLive());
  enqueue("127.0.0.1", 8000, {"localhost"});
  events.flush();
  QCOMPARE(m.rowCount(), 0);
}

void ModelsTest::hostsPanelAsksWhoContacted() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  NetDb d = writeNetSessions(dir);
  AuditDatabase adb;
  QString error;
  QVERIFY2(adb.open(QString::fromStdString(d.path), &error), qPrintable(error));
  auto sessions = adb.sessions(&error);
  QVERIFY(sessions && sessions->size() == 2);

  SessionPage page(&adb);
  HostsPanel* panel = page.hostsPanel();
  Tester t1(panel->whoContactedModel(), kFatal), t2(panel->sortedHosts(), kFatal);
  page.resize(1200, 800);
  page.show();
  page.showStored(sessions->front());
  page.setTab(SessionPage::HostsTab);
  QTRY_COMPARE(panel->hostModel()->rowCount(), 5);
  Tester t3(panel->hostModel(), kFatal);

  WhoTouchedModel* who = panel->whoContactedModel();
  auto ask = [&](const char* host, bool all = false) {
    panel->whoContacted(QString::fromUtf8(host), all);
    return who->rowCount();
  };
  QCOMPARE(ask("registry.npmjs.org"), 3);
  QCOMPARE(cell(*who, 0, WhoTouchedModel::PathColumn), QStringLiteral("tcp:104.16.0.35:443  (registry.npmjs.org)"));
  QCOMPARE(cell(*who, 0, WhoTouchedModel::ProcessColumn), QStringLiteral("npm (pid 100)"));
  QCOMPARE(cell(*who, 2, WhoTouchedModel::ProcessColumn), QStringLiteral("node (pid 101)"));
  // Expand a row: the process that connected and its parents, nearest first.
  QModelIndex nodeRow = who->index(2, 0);
  QCOMPARE(who->rowCount(nodeRow), 2);
  QCOMPARE(who->data(who->index(1, WhoTouchedModel::ProcessColumn, nodeRow)).toString(),
           QStringLiteral("npm (pid 100)"));
  QCOMPARE(ask("*.npmjs.org"), 3);
  QCOMPARE(ask("*.example"), 0);  // refused at resolution: no connection
  QCOMPARE(ask("10.0.0.0/8"), 1);
  QCOMPARE(ask("10.0.0.0/8", true), 2);  // every session
  QCOMPARE(cell(*who, 1, WhoTouchedModel::SessionColumn), QStringLiteral("#%1").arg(d.b));
  QCOMPARE(ask("::ffff:10.1.2.3"), 1);
  QCOMPARE(ask("[2606:4700::6810:23]"), 1);
  // A denial: its chain is open at once.
  QCOMPARE(ask("169.254.169.254"), 1);
  QCOMPARE(cell(*who, 0, WhoTouchedModel::DecisionColumn), QStringLiteral("denied"));
  QVERIFY(panel->whoView()->isExpanded(who->index(0, 0)));
  // A mistake leaves the last answer as it was.
  QCOMPARE(ask("example.com:443"), 1);

  // Double-clicking a host asks about it.
  QSortFilterProxyModel* sorted = panel->sortedHosts();
  for (int r = 0; r < sorted->rowCount(); ++r)
    if (cell(*sorted, r, HostModel::HostColumn) == QStringLiteral("127.0.0.1"))
      emit panel->hostView()->doubleClicked(sorted->index(r, HostModel::HostColumn));
  QCOMPARE(who->rowCount(), 1);
  QCOMPARE(cell(*who, 0, WhoTouchedModel::PathColumn), QStringLiteral("udp:127.0.0.1:8125"));

  // Live, not in the open database: the panel follows the live model and
  // searches the events in memory.
  proto::Hello hello;
  hello.session.id = 99;
  hello.session.start.uuid = "uuid-live";
  hello.session.start.argv = {"curl", "http://localhost:8000/"};
  hello.session.state = SessionState::Running;
  LiveSession live(1, hello);
  live.apply(proto::ProcessMsg{99, ProcessRow{1, 0, 500, 1, 0, "curl", "/usr/bin/curl", {"curl"}, "/p", nowNs()}});
  auto curl = proc(1, 500, "curl");
  for (uint64_t i = 0; i < 3; ++i)
    live.apply(proto::EventMsg{99, netEvent(i + 1, "127.0.0.1", 8000, {"localhost"}, curl, nowNs() - 1'000'000'000)});
  live.eventModel()->flush();
  page.showLive(&live, std::nullopt);
  QCOMPARE(panel->hostModel(), live.hostModel());
  QCOMPARE(panel->hostModel()->rowCount(), 1);
  QCOMPARE(cell(*panel->hostModel(), 0, HostModel::EventsColumn), QStringLiteral("3"));
  QCOMPARE(ask("localhost"), 3);
  QCOMPARE(who->rowCount(who->index(0, 0)), 1);  // curl, from the live process tree
  QCOMPARE(ask("127.0.0.0/8"), 3);
  QCOMPARE(ask("::ffff:127.0.0.1"), 3);
  QCOMPARE(ask("10.0.0.0/8"), 0);
}

}  // namespace cb::gui::test
