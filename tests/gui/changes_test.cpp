// The Changes tab: the line diff, the model under QAbstractItemModelTester,
// and Restore against a real audit database and keep store, recorded the
// way the supervisor will record a session once it keeps (SessionRecorder):
// a conflict refused and named, the others restored byte for byte, Force
// only after its own confirmation, every restore in the undos table.
#include <sys/stat.h>
#include <unistd.h>

#include <QAbstractItemModelTester>
#include <QDialog>
#include <QDialogButtonBox>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextEdit>
#include <QTimer>
#include <QTreeView>
#include <QTreeWidget>
#include <fstream>
#include <sstream>

#include "gui/changescontroller.h"
#include "gui/changesmodel.h"
#include "gui/changespanel.h"
#include "gui/linediff.h"
#include "gui_tests.h"
#include "tests/keep/recorder.h"

namespace cb::gui::test {
namespace {

using Tester = QAbstractItemModelTester;
constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void put(const std::string& path, const std::string& data, mode_t mode = 0644) {
  std::ofstream(path, std::ios::binary) << data;
  chmod(path.c_str(), mode);
}

// A project and a session over it: `sed -i` on README.md, a script that
// rewrites config.py, `rm` of notes.txt, a new file.  Returns the session.
struct Recorded {
  std::string db, work;
  int64_t id = 0;
  uint64_t sed = 0, py = 0, rm = 0;
};

Recorded record(const QTemporaryDir& dir) {
  Recorded r;
  r.db = (dir.path() + QStringLiteral("/data/audit.db")).toStdString();
  r.work = (dir.path() + QStringLiteral("/proj")).toStdString();
  mkdir((dir.path() + QStringLiteral("/data")).toStdString().c_str(), 0700);
  mkdir(r.work.c_str(), 0755);
  put(r.work + "/README.md", "# Project\n\nThe colour of the sky.\nMore text.\n");
  put(r.work + "/config.py", "DEBUG = False\nPORT = 8080\n");
  put(r.work + "/notes.txt", "remember the milk\n", 0600);
  keep::Limits limits;
  limits.min_free_bytes = 0;
  limits.min_free_percent = 0;
  keep::test::SessionRecorder s(r.db, r.work, {"agent"}, limits);
  r.sed = s.command({"sed", "-i", "s/colour/color/", "README.md"});
  s.sed_i(r.sed, "README.md", "colour", "color");
  r.py = s.command({"python3", "fix.py"});
  s.overwrite(r.py, "config.py", "DEBUG = True\nPORT = 8080\n");
  s.create(r.py, "NEW.txt", "new\n");
  r.rm = s.command({"rm", "notes.txt"});
  s.unlink(r.rm, "notes.txt");
  s.end();
  if (!s.error().empty()) qWarning("recorder: %s", s.error().c_str());
  r.id = s.id();
  return r;
}

QModelIndexList rowsOf(ChangesModel* m, uint64_t command, std::initializer_list<const char*> rels,
                       const std::string& work) {
  QModelIndexList out;
  for (const char* rel : rels) out << m->indexOfLine(command, work + "/" + rel);
  return out;
}

}  // namespace

void ModelsTest::lineDiffIsUnified() {
  auto d = diff_lines("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nD\ne\nf\ng\nh\n", 1);
  std::vector<std::string> got;
  for (const DiffLine& l : d) got.push_back(l.kind == '@' ? l.text : std::string(1, l.kind) + l.text);
  QCOMPARE(got, (std::vector<std::string>{"@@ -3,3 +3,3 @@", " c", "-d", "+D", " e"}));
  // Nothing before: every line added.
  d = diff_lines("", "x\ny\n");
  QCOMPARE(d.size(), size_t(3));
  QCOMPARE(d[1].kind, '+');
  QVERIFY(diff_lines("same\n", "same\n").empty());
  // Beyond the budget: compared as wholes, still correct.
  d = diff_lines("1\n2\n3\n", "1\nx\n3\n", 0, 0);
  got.clear();
  for (const DiffLine& l : d) got.push_back(l.kind == '@' ? l.text : std::string(1, l.kind) + l.text);
  QCOMPARE(got, (std::vector<std::string>{"@@ -2,1 +2,1 @@", "-2", "+x"}));
  QVERIFY(looks_like_text("plain, ünïcode\n"));
  QVERIFY(!looks_like_text(std::string("a\0b", 3)));
  QVERIFY(!looks_like_text("\xff\xfe"));
}

void ModelsTest::changesModelGroupsByCommand() {
  ChangesModel m;
  Tester t(&m, kFatal);
  keep::ChangeLine a;
  a.command = 2;
  a.path = "/p/src/a.c";
  a.ops = {keep::Op::Unlink};
  a.before = keep::FileType::Regular;
  a.undo = keep::Undo::Restore;
  a.undoable = true;
  keep::ChangeLine b = a;
  b.path = "/p/big.bin";
  b.undo = keep::Undo::Cannot;
  b.undoable = false;
  b.reason = "over the session's keep budget";
  keep::ChangeLine mv;
  mv.command = 3;
  mv.path = "/p/old.txt";
  mv.target = "/p/new.txt";
  mv.undo = keep::Undo::MoveBack;
  mv.undoable = true;
  ChangesModel::Group g1{2, 4002, {"rm", "-rf", "src"}, false, {a, b}};
  ChangesModel::Group g2{3, 4003, {"mv", "old.txt", "new.txt"}, false, {mv}};
  m.setGroups("/p", {g1, g2});
  QCOMPARE(m.rowCount(), 2);
  QCOMPARE(m.rowCount(m.index(0, 0)), 2);
  QCOMPARE(m.lineCount(), size_t(3));
  QCOMPARE(m.data(m.index(0, ChangesModel::PathColumn)).toString(), QStringLiteral("command 2 · rm -rf src"));
  QCOMPARE(m.data(m.index(0, ChangesModel::UndoColumn)).toString(), QStringLiteral("1 of 2 can be undone"));
  QModelIndex big = m.index(1, ChangesModel::NoteColumn, m.index(0, 0));
  QCOMPARE(m.data(big).toString(), QStringLiteral("over the session's keep budget"));
  QCOMPARE(m.data(big.siblingAtColumn(ChangesModel::UndoColumn)).toString(), QStringLiteral("not kept"));
  QCOMPARE(m.data(big.siblingAtColumn(ChangesModel::PathColumn)).toString(), QStringLiteral("big.bin"));
  QModelIndex moved = m.index(0, ChangesModel::PathColumn, m.index(1, 0));
  QCOMPARE(m.data(moved).toString(), QStringLiteral("old.txt  →  new.txt"));
  QCOMPARE(m.data(moved.siblingAtColumn(ChangesModel::ChangeColumn)).toString(), QStringLiteral("renamed"));
  QCOMPARE(m.line(moved)->target, std::string("/p/new.txt"));
  QCOMPARE(*m.commandOf(moved), uint64_t(3));
  QCOMPARE(*m.commandOf(m.index(0, 0)), uint64_t(2));
  QVERIFY(m.line(m.index(0, 0)) == nullptr);
  QCOMPARE(m.indexOfLine(2, "/p/big.bin").row(), 1);
  QVERIFY(!m.indexOfLine(3, "/p/big.bin").isValid());
  m.clear();
  QCOMPARE(m.rowCount(), 0);
}

void ModelsTest::changesControllerRestoresWithTheUndoRule() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  Recorded r = record(dir);
  QVERIFY(r.id > 0);
  // The user edits config.py after the session.
  put(r.work + "/config.py", "DEBUG = True\nPORT = 9090\n");

  ChangesController c;
  Tester t(c.model(), kFatal);
  QString error;
  QVERIFY2(c.load(QString::fromStdString(r.db), r.id, &error), qPrintable(error));
  QVERIFY(c.canRestore(nullptr));
  QCOMPARE(c.model()->rowCount(), 3);  // sed, python, rm
  QCOMPARE(c.model()->lineCount(), size_t(4));

  // The preview: what was kept against what is there now.
  auto p = c.preview(c.model()->indexOfLine(r.sed, r.work + "/README.md"));
  QVERIFY(p.hasDiff);
  std::vector<std::string> lines;
  for (const DiffLine& l : p.diff)
    if (l.kind == '-' || l.kind == '+') lines.push_back(std::string(1, l.kind) + l.text);
  QCOMPARE(lines, (std::vector<std::string>{"-The colour of the sky.", "+The color of the sky."}));
  auto gone = c.preview(c.model()->indexOfLine(r.rm, r.work + "/notes.txt"));
  QVERIFY(gone.hasDiff);
  QCOMPARE(gone.diff.back().kind, '-');

  // Restore of everything the python command did, and of rm's file.
  QModelIndexList rows = rowsOf(c.model(), r.py, {"config.py", "NEW.txt"}, r.work);
  rows << c.model()->indexOfLine(r.rm, r.work + "/notes.txt");
  keep::UndoRequest req = c.requestFor(rows);
  QVERIFY(!req.command);  // two commands: their files back to before the session
  QVERIFY(req.created);   // NEW.txt was selected
  auto dry = c.dryRun(req);
  QVERIFY2(dry, dry ? "" : dry.error().message.c_str());
  std::map<std::string, keep::Action> planned;
  for (const keep::Step& s : dry->steps) planned[s.candidate.path] = s.action;
  QCOMPARE(planned[r.work + "/config.py"], keep::Action::Conflict);
  QCOMPARE(planned[r.work + "/notes.txt"], keep::Action::Restore);
  QCOMPARE(planned[r.work + "/NEW.txt"], keep::Action::Remove);
  QVERIFY(slurp(r.work + "/NEW.txt") == "new\n");  // a dry run changes nothing

  QString recordError;
  auto done = c.restore(req, &recordError);
  QVERIFY(done);
  QVERIFY2(recordError.isEmpty(), qPrintable(recordError));
  QCOMPARE(slurp(r.work + "/notes.txt"), std::string("remember the milk\n"));
  struct stat st;
  QCOMPARE(stat((r.work + "/notes.txt").c_str(), &st), 0);
  QCOMPARE(st.st_mode & 07777, mode_t(0600));
  QVERIFY(access((r.work + "/NEW.txt").c_str(), F_OK) != 0);
  QCOMPARE(slurp(r.work + "/config.py"), std::string("DEBUG = True\nPORT = 9090\n"));  // refused
  QVERIFY(undoSummary(*done, false).contains(QStringLiteral("1 conflict (refused)")));

  // Force: overwritten, and recorded as forced.
  keep::UndoRequest one = c.requestFor({c.model()->indexOfLine(r.py, r.work + "/config.py")});
  QCOMPARE(*one.command, r.py);
  one.force = true;
  QVERIFY(c.restore(one, &recordError));
  QCOMPARE(slurp(r.work + "/config.py"), std::string("DEBUG = False\nPORT = 8080\n"));

  auto reader = db::Reader::open(r.db);
  QVERIFY(reader);
  auto undos = (*reader)->undos(r.id);
  QVERIFY(undos);
  QCOMPARE(undos->size(), size_t(2));
  QVERIFY(!(*undos)[0].force);
  QVERIFY((*undos)[1].force);
  QCOMPARE((*undos)[1].command, std::optional<uint64_t>(r.py));
  bool forced = false;
  for (const db::UndoFile& f : (*undos)[1].files) forced |= f.path == r.work + "/config.py" && f.forced && f.done;
  QVERIFY(forced);
}

void ModelsTest::changesPanelRestoresAndForcesOnlyWhenConfirmed() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  Recorded r = record(dir);
  put(r.work + "/README.md", "edited after the session\n");

  ChangesPanel panel;
  panel.resize(1200, 600);
  panel.setSession(QString::fromStdString(r.db), r.id);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QCOMPARE(panel.controller()->model()->lineCount(), size_t(4));
  QVERIFY(panel.selectLine(r.sed, r.work + "/README.md"));
  QVERIFY(panel.diffView()->toPlainText().contains(QStringLiteral("- The colour of the sky.")));
  QVERIFY(panel.restoreButton()->isEnabled());

  // Restore: the dialog names the conflict; Restore leaves the file.
  QDialog* dialog = nullptr;
  connect(&panel, &ChangesPanel::restoreDialogOpened, this, [&](QDialog* d) { dialog = d; });
  panel.restoreSelected();
  QVERIFY(dialog);
  auto* list = dialog->findChild<QTreeWidget*>();
  QVERIFY(list && list->topLevelItemCount() == 1);
  QCOMPARE(list->topLevelItem(0)->text(0), QStringLiteral("conflict: refused"));
  QVERIFY(list->topLevelItem(0)->text(2).contains(QStringLiteral("changed after the session")));
  QPushButton *go = nullptr, *force = nullptr;
  for (QPushButton* b : dialog->findChildren<QPushButton*>()) {
    if (b->text() == QStringLiteral("Restore")) go = b;
    if (b->text() == QStringLiteral("Force…")) force = b;
  }
  QVERIFY(go && force);
  QVERIFY(!go->isEnabled());  // nothing but the conflict
  QVERIFY(force->isEnabled());

  // Force asks first; "Cancel" changes nothing.
  QTimer::singleShot(0, this, [] {
    for (QWidget* w : QApplication::topLevelWidgets())
      if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) box->button(QMessageBox::Cancel)->click();
  });
  force->click();
  QCOMPARE(slurp(r.work + "/README.md"), std::string("edited after the session\n"));
  QVERIFY(dialog->isVisible());
  // "Yes" overwrites it.
  QSignalSpy restored(&panel, &ChangesPanel::restored);
  QTimer::singleShot(0, this, [] {
    for (QWidget* w : QApplication::topLevelWidgets())
      if (auto* box = qobject_cast<QMessageBox*>(w); box && box->isVisible()) box->button(QMessageBox::Yes)->click();
  });
  force->click();
  QCOMPARE(restored.count(), 1);
  QCOMPARE(slurp(r.work + "/README.md"), std::string("# Project\n\nThe colour of the sky.\nMore text.\n"));
  auto undos = (*db::Reader::open(r.db))->undos(r.id);
  QVERIFY(undos && undos->size() == 1 && (*undos)[0].force);
}

}  // namespace cb::gui::test
