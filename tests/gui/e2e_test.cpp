// End to end: the app's socket side in this process, the real `cottonbox
// run --ask gui` on a real command, prompts answered through the
// controller; then the files on disk and the audit database.
#include <unistd.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include "gui/guiserver.h"
#include "gui/promptcontroller.h"
#include "gui/sessionhub.h"
#include "gui_tests.h"

namespace cb::gui::test {
namespace {

const QString kCottonbox = QStringLiteral(COTTONBOX_BIN);

void writeFile(const QString& path, const QByteArray& data) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(data);
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const char* kPolicy = R"(version: 1
default: allow
rules:
  - id: ask-keep
    action: file.delete
    path: ["${CWD}/keep/**"]
    decision: ask
    message: "keep/ holds the things to keep"
  - id: ask-scratch
    action: file.delete
    path: ["${CWD}/scratch/**"]
    decision: ask
    message: "scratch files, probably fine"
)";

}  // namespace

void EndToEndTest::init() {
  m_dir = std::make_unique<QTemporaryDir>();
  QVERIFY(m_dir->isValid());
  QDir d(m_dir->path());
  QVERIFY(d.mkpath(QStringLiteral("run")));
  QVERIFY(d.mkpath(QStringLiteral("proj/keep")));
  QVERIFY(d.mkpath(QStringLiteral("proj/scratch")));
  QFile::setPermissions(m_dir->path() + QStringLiteral("/run"),
                        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  writeFile(m_dir->path() + QStringLiteral("/proj/keep/a.txt"), "precious\n");
  writeFile(m_dir->path() + QStringLiteral("/proj/scratch/b.txt"), "scratch\n");
  writeFile(m_dir->path() + QStringLiteral("/policy.yaml"), kPolicy);
  m_oldRuntime = qgetenv("XDG_RUNTIME_DIR");
  qputenv("XDG_RUNTIME_DIR", (m_dir->path() + QStringLiteral("/run")).toLocal8Bit());
}

void EndToEndTest::cleanup() {
  if (m_oldRuntime.isEmpty())
    qunsetenv("XDG_RUNTIME_DIR");
  else
    qputenv("XDG_RUNTIME_DIR", m_oldRuntime);
}

void EndToEndTest::promptsAnsweredThroughTheController() {
  GuiServer server;
  PromptController prompts;
  SessionHub hub(&server, &prompts);
  QVERIFY2(server.listen(), qPrintable(server.errorString()));

  const QString proj = m_dir->path() + QStringLiteral("/proj");
  const QString dbPath = m_dir->path() + QStringLiteral("/audit.db");
  QProcess run;
  run.setWorkingDirectory(proj);
  run.setProcessChannelMode(QProcess::SeparateChannels);
  run.start(kCottonbox,
            {QStringLiteral("run"), QStringLiteral("--ask"), QStringLiteral("gui"), QStringLiteral("--ask-timeout"),
             QStringLiteral("30"), QStringLiteral("--policy"), m_dir->path() + QStringLiteral("/policy.yaml"),
             QStringLiteral("--db"), dbPath, QStringLiteral("--name"), QStringLiteral("e2e"), QStringLiteral("--"),
             QStringLiteral("sh"), QStringLiteral("-c"),
             QStringLiteral("rm keep/a.txt; echo rm1=$?; rm scratch/b.txt; echo rm2=$?")});
  QVERIFY(run.waitForStarted());

  // Answer as a user would: whatever is on screen, by what it asks about.
  QStringList seen;
  QElapsedTimer clock;
  clock.start();
  while (seen.size() < 2 && clock.elapsed() < 20000) {
    QTest::qWait(20);
    if (!prompts.hasCurrent()) continue;
    const auto& a = prompts.current().ask;
    QVERIFY(!a.chain.empty());
    QCOMPARE(a.chain.front().comm, std::string("rm"));
    seen << QString::fromStdString(a.row.verdict.rule_id);
    if (a.row.verdict.rule_id == "ask-keep")
      prompts.denyOnce();
    else
      prompts.allowOnce();
  }
  QVERIFY(run.waitForFinished(20000));
  QByteArray out = run.readAllStandardOutput(), err = run.readAllStandardError();
  QCOMPARE(seen, (QStringList{QStringLiteral("ask-keep"), QStringLiteral("ask-scratch")}));
  QCOMPARE(run.exitCode(), 0);
  QVERIFY2(out.contains("rm1=1") && out.contains("rm2=0"), out.constData());
  QVERIFY2(!err.contains("no GUI"), err.constData());

  // On disk.
  QCOMPARE(readFile(proj + QStringLiteral("/keep/a.txt")), QByteArray("precious\n"));
  QVERIFY(!QFile::exists(proj + QStringLiteral("/scratch/b.txt")));

  // Live, in the GUI.
  QCOMPARE(hub.sessions().size(), size_t(1));
  LiveSession* live = hub.sessions().front();
  QTRY_COMPARE(live->state(), LiveSession::State::Ended);
  QCOMPARE(live->end()->exit_status, 0);
  QCOMPARE(live->summary().start.name, std::string("e2e"));
  QVERIFY(live->asks() >= 2);
  QVERIFY(live->denials() >= 1);
  QVERIFY(live->processModel()->size() >= 2);

  // In the audit database: the denial and the approval, each with its answer.
  auto reader = db::Reader::open(dbPath.toStdString());
  QVERIFY(reader);
  auto sessions = (*reader)->sessions();
  QVERIFY(sessions && sessions->size() == 1);
  QCOMPARE(QString::fromStdString(sessions->front().start.uuid), live->uuid());
  db::EventQuery q;
  q.session = sessions->front().id;
  q.decision = "ask";
  auto events = (*reader)->events(q);
  QVERIFY(events);
  bool denial = false, approval = false;
  for (const auto& e : *events) {
    QVERIFY(e.approval);
    if (e.row.ev.path == (proj + QStringLiteral("/keep/a.txt")).toStdString()) {
      QVERIFY(!e.row.allowed);
      QCOMPARE(e.row.verdict.rule_id, std::string("ask-keep"));
      QCOMPARE(e.approval->answer, std::string("deny-once"));
      QCOMPARE(e.approval->answered_by, std::string("gui"));
      denial = true;
    }
    if (e.row.ev.path == (proj + QStringLiteral("/scratch/b.txt")).toStdString()) {
      QVERIFY(e.row.allowed);
      QCOMPARE(e.row.verdict.rule_id, std::string("ask-scratch"));
      QCOMPARE(e.approval->answer, std::string("allow-once"));
      QCOMPARE(e.approval->answered_by, std::string("gui"));
      approval = true;
    }
  }
  QVERIFY(denial);
  QVERIFY(approval);
}

void EndToEndTest::noGuiFallsBackAndSaysSo() {
  // Nobody listens and there is no terminal: the ask is denied, said once.
  const QString proj = m_dir->path() + QStringLiteral("/proj");
  QProcess run;
  run.setWorkingDirectory(proj);
  run.setStandardInputFile(QProcess::nullDevice());
  run.setProgram(QStringLiteral("setsid"));  // no controlling terminal to fall back to
  run.setArguments({QStringLiteral("-w"), kCottonbox, QStringLiteral("run"), QStringLiteral("--ask"),
                    QStringLiteral("gui"), QStringLiteral("--policy"), m_dir->path() + QStringLiteral("/policy.yaml"),
                    QStringLiteral("--db"), m_dir->path() + QStringLiteral("/audit2.db"), QStringLiteral("--"),
                    QStringLiteral("sh"), QStringLiteral("-c"),
                    QStringLiteral("rm keep/a.txt; rm scratch/b.txt; true")});
  run.start();
  QVERIFY(run.waitForFinished(20000));
  QString err = QString::fromLocal8Bit(run.readAllStandardError());
  QCOMPARE(err.count(QStringLiteral("no GUI is listening")), 1);
  QVERIFY2(err.contains(QStringLiteral("asks are denied")), qPrintable(err));
  QVERIFY(QFile::exists(proj + QStringLiteral("/keep/a.txt")));
  QVERIFY(QFile::exists(proj + QStringLiteral("/scratch/b.txt")));
}

}  // namespace cb::gui::test
