// Takes docs/screenshot-*.png from a real session: the real app (server,
// prompt queue, windows) in this process, the real `cottonbox run --ask gui`
// running docs/examples/demo/agent.sh in a throwaway git project.
//
//   xvfb-run -s "-screen 0 1600x1000x24" build/tests/gui/gui_screenshots docs docs/examples/demo
//
// docs/screenshot-changes.png (the Changes tab) comes from a session of real
// files recorded the way the supervisor records one once it keeps (the real
// Keeper before each change, the rows through db::Writer: see
// tests/keep/recorder.h), since `cottonbox run` does not call the keeper yet:
//
//   xvfb-run -s "-screen 0 1600x1000x24" build/tests/gui/gui_screenshots --changes docs
//
// The Hosts tab of the newest session in a database (a session that made
// connections: see bench/README.md or docs/network.md for one), with "who
// contacted" asked about its first denied host, else its busiest:
//
//   xvfb-run -s "-screen 0 1400x900x24" build/tests/gui/gui_screenshots --hosts DB OUT.png
//
// $COTTONBOX_BIN runs another `cottonbox` than the one built with this.
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QPixmap>
#include <QProcess>
#include <QTableView>
#include <QThread>
#include <QTreeView>
#include <cstdio>
#include <functional>

#include "gui/changespanel.h"
#include "gui/eventmodel.h"
#include "gui/guiserver.h"
#include "gui/hostspanel.h"
#include "gui/mainwindow.h"
#include "gui/promptcontroller.h"
#include "gui/promptwindow.h"
#include "gui/sessionhub.h"
#include "gui/sessionpage.h"
#include "gui/text.h"
#include "tests/keep/recorder.h"

using namespace cb::gui;

namespace {

// $COTTONBOX_BIN picks another build (say, one with the eBPF tracer).
const QString kCottonbox =
    qEnvironmentVariableIsSet("COTTONBOX_BIN") ? qEnvironmentVariable("COTTONBOX_BIN") : QStringLiteral(COTTONBOX_BIN);
const QString kBase = QStringLiteral("/tmp/cottonbox-demo");

bool waitUntil(const std::function<bool()>& done, int ms) {
  QElapsedTimer t;
  t.start();
  while (!done()) {
    if (t.elapsed() > ms) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(10);
  }
  return true;
}

void settle(int ms) {
  waitUntil([] { return false; }, ms);
}

void write(const QString& path, const QByteArray& data) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  if (f.open(QIODevice::WriteOnly)) f.write(data);
}

int sh(const QString& cwd, const QString& script) {
  QProcess p;
  p.setWorkingDirectory(cwd);
  p.start(QStringLiteral("sh"), {QStringLiteral("-c"), script});
  p.waitForFinished(30000);
  return p.exitCode();
}

bool save(QWidget* w, const QString& dir, const char* name) {
  QPixmap pm = w->grab();
  QString path = dir + QStringLiteral("/") + QString::fromLatin1(name);
  bool ok = pm.save(path);
  std::printf("%s %s (%dx%d)\n", ok ? "wrote" : "FAILED", qPrintable(path), pm.width(), pm.height());
  return ok;
}

void fail(const char* what) {
  std::fprintf(stderr, "gui_screenshots: %s\n", what);
  std::exit(1);
}

// The Changes tab: an agent's session over a small project, recorded with
// its keeper; the file a `sed -i` changed selected, its diff shown; then
// the Restore dialog for a selection with a file edited since.
int changesScreenshots(const QString& out) {
  const QString base = QStringLiteral("/tmp/cottonbox-changes-demo");
  QDir(base).removeRecursively();
  const QString proj = base + QStringLiteral("/webapp");
  const QString run = base + QStringLiteral("/run");
  const QString db = base + QStringLiteral("/data/audit.db");
  QDir().mkpath(run);
  QDir().mkpath(base + QStringLiteral("/data"));
  QFile::setPermissions(run, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  qputenv("XDG_RUNTIME_DIR", run.toLocal8Bit());
  qputenv("XDG_CONFIG_HOME", (base + QStringLiteral("/config")).toLocal8Bit());
  write(proj + QStringLiteral("/README.md"),
        "# webapp\n\nA small web service. The colour scheme follows the\nsystem's.\n\n## Running\n\n"
        "    make run\n");
  write(proj + QStringLiteral("/src/app/theme.py"),
        "\"\"\"Colours of the web UI.\"\"\"\n\nDEFAULT_COLOUR = \"#0969da\"\n\n\n"
        "def colour_for(status):\n    if status == \"error\":\n        return \"#b42318\"\n"
        "    if status == \"warning\":\n        return \"#8a5a00\"\n    return DEFAULT_COLOUR\n\n\n"
        "def css(status):\n    return \"color: \" + colour_for(status)\n");
  write(proj + QStringLiteral("/src/app/api.py"),
        "from .theme import colour_for\n\n\ndef index():\n    return {\"colour\": colour_for(\"ok\")}\n");
  write(proj + QStringLiteral("/config/settings.toml"), "[server]\nport = 8080\ndebug = false\nworkers = 4\n");
  for (const char* f : {"old_api.py", "compat.py", "shims.py"})
    write(proj + QStringLiteral("/src/legacy/") + QString::fromLatin1(f), "# kept for old clients\n");
  write(proj + QStringLiteral("/docs/guide.md"), "# Guide\n");
  write(proj + QStringLiteral("/.env"), "SECRET_KEY=dev\n");
  QFile::setPermissions(proj + QStringLiteral("/.env"), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                            QFileDevice::ReadGroup | QFileDevice::ReadOther);

  {
    const std::string work = proj.toStdString();
    cb::keep::test::SessionRecorder s(db.toStdString(), work, {"agent", "--task", "American spelling"});
    uint64_t sed = s.command(
        {"sed", "-i", "s/colour/color/g; s/Colour/Color/g", "src/app/theme.py", "src/app/api.py", "README.md"});
    for (const char* f : {"src/app/theme.py", "src/app/api.py", "README.md"}) {
      s.sed_i(sed, f, "colour", "color");
      s.sed_i(sed, f, "Colour", "Color");
    }
    uint64_t py = s.command({"python3", "tools/tidy_config.py"});
    s.overwrite(s.process(py, {"python3", "-m", "tidy"}), "config/settings.toml",
                "[server]\nport = 8080\ndebug = true\n");
    uint64_t rm = s.command({"rm", "-rf", "src/legacy"});
    s.rm_rf(rm, "src/legacy");
    uint64_t mv = s.command({"mv", "docs/guide.md", "docs/GUIDE.md"});
    s.rename(mv, "docs/guide.md", "docs/GUIDE.md");
    uint64_t ch = s.command({"chmod", "600", ".env"});
    s.chmod(ch, ".env", 0600);
    s.create(s.root(), "CHANGELOG.md", "## Unreleased\n\n- American spelling throughout.\n");
    s.end();
    if (!s.error().empty()) fail(s.error().c_str());
  }
  // The user's own edit after the session: Restore will refuse it.
  write(proj + QStringLiteral("/config/settings.toml"), "[server]\nport = 9000\ndebug = true\n");

  GuiServer server;
  PromptController prompts;
  SessionHub hub(&server, &prompts);
  if (!server.listen()) fail(qPrintable(server.errorString()));
  MainWindow w(&server, &hub, &prompts);
  w.resize(1440, 900);
  w.openDatabase(db);
  w.show();
  w.refresh();
  settle(300);
  auto sessions = w.database()->sessions(nullptr);
  if (!sessions || sessions->empty()) fail("no session in the database");
  w.selectSession(QString::fromStdString(sessions->back().start.uuid));
  w.page()->setTab(SessionPage::ChangesTab);
  settle(500);
  ChangesPanel* panel = w.page()->changesPanel();
  const std::string theme = (proj + QStringLiteral("/src/app/theme.py")).toStdString();
  bool selected = false;
  for (const auto& g : panel->controller()->model()->groups())
    if (!selected) selected = panel->selectLine(g.command, theme);
  if (!selected) fail("theme.py is not in the Changes tab");
  settle(300);
  bool ok = save(&w, out, "screenshot-changes.png");

  // Restore of everything: the file edited since the session is refused.
  QDialog* dialog = nullptr;
  QObject::connect(panel, &ChangesPanel::restoreDialogOpened, [&](QDialog* d) { dialog = d; });
  panel->view()->selectAll();
  panel->restoreSelected();
  settle(400);
  if (!dialog) fail("no restore dialog");
  ok &= save(dialog, out, "screenshot-restore.png");
  dialog->reject();
  return ok ? 0 : 1;
}

int hostsScreenshot(const QString& db, const QString& file) {
  GuiServer server;  // review only: not listening
  PromptController prompts;
  SessionHub hub(&server, &prompts);
  MainWindow w(&server, &hub, &prompts);
  w.resize(1400, 900);
  if (!w.openDatabase(db)) fail("cannot open the database");
  w.show();
  w.refresh();
  settle(300);
  auto sessions = w.database()->sessions(nullptr);
  if (!sessions || sessions->empty()) fail("no session in the database");
  w.selectSession(QString::fromStdString(sessions->back().start.uuid));
  w.page()->setTab(SessionPage::HostsTab);
  settle(500);
  HostsPanel* panel = w.page()->hostsPanel();
  HostModel* hosts = panel->hostModel();
  if (hosts->rowCount() == 0) fail("the session contacted no host");
  int pick = 0;
  for (int r = 0; r < hosts->rowCount(); ++r) {
    if (hosts->host(r).denied > 0) {
      pick = r;
      break;
    }
    if (hosts->host(r).events > hosts->host(pick).events) pick = r;
  }
  panel->whoContacted(hosts->queryFor(pick), false);
  panel->whoView()->expand(panel->whoContactedModel()->index(0, 0));
  settle(500);
  bool ok = w.grab().save(file);
  std::printf("%s %s\n", ok ? "wrote" : "could not write", qPrintable(file));
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setQuitOnLastWindowClosed(false);
  applyStyle();
  if (argc == 3 && QString::fromLocal8Bit(argv[1]) == QStringLiteral("--changes"))
    return changesScreenshots(QDir(QString::fromLocal8Bit(argv[2])).absolutePath());
  if (argc == 4 && QString::fromLocal8Bit(argv[1]) == QStringLiteral("--hosts"))
    return hostsScreenshot(QString::fromLocal8Bit(argv[2]), QString::fromLocal8Bit(argv[3]));
  if (argc < 3) fail("usage: gui_screenshots OUT_DIR DEMO_DIR | gui_screenshots --changes OUT_DIR");
  const QString out = QDir(QString::fromLocal8Bit(argv[1])).absolutePath();
  const QString demo = QDir(QString::fromLocal8Bit(argv[2])).absolutePath();

  // A fresh project that looks like one.
  QDir(kBase).removeRecursively();
  const QString proj = kBase + QStringLiteral("/webapp");
  const QString run = kBase + QStringLiteral("/run");
  const QString db = kBase + QStringLiteral("/audit.db");
  QDir().mkpath(run);
  QFile::setPermissions(run, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
  qputenv("XDG_RUNTIME_DIR", run.toLocal8Bit());
  qputenv("XDG_CONFIG_HOME", (kBase + QStringLiteral("/config")).toLocal8Bit());
  for (const char* k : {"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"}) qputenv(k, "Dev");
  for (const char* k : {"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"}) qputenv(k, "dev@example.org");
  write(proj + QStringLiteral("/README.md"), "# webapp\n\nA small web service.\n");
  write(proj + QStringLiteral("/src/app/__init__.py"), "");
  write(proj + QStringLiteral("/src/app/api.py"), "def index():\n    return 'hello'\n");
  for (const char* f : {"old_api.py", "compat.py", "shims.py"})
    write(proj + QStringLiteral("/src/legacy/") + QString::fromLatin1(f), "# kept for old clients\n");
  for (int i = 1; i <= 40; ++i)
    write(proj + QStringLiteral("/data/fixture-%1.json").arg(i, 3, 10, QLatin1Char('0')), "{\"id\": 1}\n");
  QDir().mkpath(proj + QStringLiteral("/tools"));
  QFile::copy(demo + QStringLiteral("/cleanup.py"), proj + QStringLiteral("/tools/cleanup.py"));
  QFile::copy(demo + QStringLiteral("/agent.sh"), proj + QStringLiteral("/agent.sh"));
  write(proj + QStringLiteral("/.gitignore"), "build/\ndata/\n");
  if (sh(proj, QStringLiteral("git init -q -b main && git add -A && git commit -qm 'Initial import'")) != 0)
    fail("git init failed");
  const QString policy = demo + QStringLiteral("/policy.yaml");

  GuiServer server;
  PromptController prompts;
  SessionHub hub(&server, &prompts);
  if (!server.listen()) fail(qPrintable(server.errorString()));
  MainWindow w(&server, &hub, &prompts);
  w.resize(1440, 900);
  w.openDatabase(db);
  w.show();

  // Some history: an observe-only dry run earlier in the day.
  {
    QProcess dry;
    dry.setWorkingDirectory(proj);
    dry.start(kCottonbox,
              {QStringLiteral("run"), QStringLiteral("--observe"), QStringLiteral("--ask"), QStringLiteral("deny"),
               QStringLiteral("--name"), QStringLiteral("dry run"), QStringLiteral("--policy"), policy,
               QStringLiteral("--db"), db, QStringLiteral("--"), QStringLiteral("sh"), QStringLiteral("-c"),
               QStringLiteral("cat README.md >/dev/null; truncate -s0 .git/description; rm -f data/fixture-040.json; "
                              "git checkout -q -- . ; git status --short >/dev/null")});
    if (!dry.waitForFinished(30000)) fail("the dry run did not finish");
    write(proj + QStringLiteral("/data/fixture-040.json"), "{\"id\": 1}\n");
    sh(proj, QStringLiteral("git checkout -q -- .git/description 2>/dev/null; printf 'webapp\\n' > .git/description"));
  }
  w.refresh();

  // The session to watch.
  QProcess agent;
  agent.setWorkingDirectory(proj);
  agent.start(kCottonbox, {QStringLiteral("run"), QStringLiteral("--ask"), QStringLiteral("gui"),
                           QStringLiteral("--ask-timeout"), QStringLiteral("120"), QStringLiteral("--name"),
                           QStringLiteral("refactor-agent"), QStringLiteral("--policy"), policy, QStringLiteral("--db"),
                           db, QStringLiteral("--"), QStringLiteral("./agent.sh")});
  if (!agent.waitForStarted()) fail("cottonbox did not start");
  if (!waitUntil([&] { return prompts.hasCurrent() && prompts.waiting() >= 1 && prompts.current().ask.count >= 30; },
                 30000))
    fail("no folded prompt with another one waiting");
  settle(1500);  // the rest of the folded requests, the countdown moving

  LiveSession* live = hub.sessions().empty() ? nullptr : hub.sessions().back();
  if (!live) fail("no live session");
  w.selectSession(live->uuid());
  w.page()->setTab(SessionPage::EventsTab);
  // What a user looks at first: what changed, not what was read.
  w.page()->setFilters(QStringLiteral("file.mutate"), QString(), QString(), QString());
  w.raise();
  settle(600);
  // Scrolled up to the denial, as a user would.
  auto* filter = w.page()->eventFilter();
  for (int r = 0; r < filter->rowCount(); ++r)
    if (filter->index(r, 0).data(EventModel::ToneRole).toInt() == static_cast<int>(Tone::Deny)) {
      w.page()->eventView()->scrollTo(filter->index(r, 0), QAbstractItemView::PositionAtCenter);
      break;
    }
  settle(200);
  save(&w, out, "screenshot-live-events.png");

  PromptWindow* pw = w.promptWindow();
  pw->bringToFront();
  settle(400);
  save(pw, out, "screenshot-prompt.png");

  QDialog* dialog = nullptr;
  QObject::connect(pw, &PromptWindow::ruleDialogOpened, [&](QDialog* d) { dialog = d; });
  pw->askAlways(false);
  settle(400);
  if (!dialog) fail("no rule dialog");
  save(dialog, out, "screenshot-always-rule.png");
  dialog->reject();

  // The fixtures stay; tar is stopped for the rest of the session.
  prompts.denyOnce();
  if (!waitUntil(
          [&] {
            return prompts.hasCurrent() && prompts.current().ask.row.ev.proc &&
                   prompts.current().ask.row.ev.proc->comm == "tar";
          },
          20000))
    fail("no prompt from tar");
  prompts.denyTree();
  if (!waitUntil([&] { return agent.state() == QProcess::NotRunning; }, 60000)) fail("the agent did not finish");
  std::printf("%s", agent.readAllStandardOutput().constData());
  settle(2500);  // the end message, the database refresh
  w.refresh();
  w.selectSession(live->uuid());
  settle(300);

  // Forensics: the process tree with tar selected.
  w.page()->setTab(SessionPage::ProcessesTab);
  uint64_t tar = 0;
  for (uint64_t id = 1; id < 200 && !tar; ++id)
    if (auto* p = live->processModel()->process(id); p && p->row.comm == "tar") tar = id;
  if (tar) w.page()->selectProcess(tar);
  settle(500);
  save(&w, out, "screenshot-process-tree.png");

  // Who touched .git/, across both sessions.
  w.page()->whoTouched(proj + QStringLiteral("/.git/"), true, true);
  settle(500);
  save(&w, out, "screenshot-who-touched.png");
  return 0;
}
