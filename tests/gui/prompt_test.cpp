// The prompt controller and its window: queue order, every answer (by call,
// key and button), the timeout, folding, cancels, and "always" rules that
// are shown first, load, and match what was asked.
#include <QDialog>
#include <QFile>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

#include "gui/promptcontroller.h"
#include "gui/promptwindow.h"
#include "gui/rules.h"
#include "gui_tests.h"
#include "policy/policy.h"
#include "session/session.h"

Q_DECLARE_METATYPE(cb::proto::Answer)
Q_DECLARE_METATYPE(cb::gui::Prompt)

namespace cb::gui::test {
namespace {

Prompt prompt(quint64 conn, uint64_t id, const std::string& path = "/p/keep/a.txt", int64_t ms = 60000) {
  return Prompt{conn, QStringLiteral("agent (#7)"), "/p", ask(id, path, ms)};
}

proto::Answer answerAt(const QSignalSpy& spy, int i) { return spy.at(i).at(1).value<proto::Answer>(); }
Prompt promptAt(const QSignalSpy& spy, int i) { return spy.at(i).at(0).value<Prompt>(); }

QString readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

}  // namespace

void PromptTest::init() {
  qRegisterMetaType<proto::Answer>();
  qRegisterMetaType<Prompt>();
  m_dir = std::make_unique<QTemporaryDir>();
  QVERIFY(m_dir->isValid());
}

void PromptTest::queueIsFirstComeFirstServed() {
  PromptController c;
  QSignalSpy answered(&c, &PromptController::answered);
  QSignalSpy queue(&c, &PromptController::queueChanged);
  QSignalSpy arrived(&c, &PromptController::promptArrived);
  c.enqueue(prompt(1, 1));
  c.enqueue(prompt(2, 1));
  c.enqueue(prompt(1, 2));
  c.enqueue(prompt(1, 2));  // the same ask twice counts once
  QCOMPARE(arrived.count(), 3);
  QCOMPARE(c.waiting(), 2);
  QCOMPARE(queue.last().at(0).toInt(), 2);
  QCOMPARE(c.current().connection, quint64(1));
  c.denyOnce();
  QCOMPARE(c.current().connection, quint64(2));
  c.allowOnce();
  QCOMPARE(c.current().ask.ask_id, uint64_t(2));
  QCOMPARE(c.waiting(), 0);
  c.allowOnce();
  QVERIFY(!c.hasCurrent());
  QCOMPARE(answered.count(), 3);
  QCOMPARE(promptAt(answered, 0).connection, quint64(1));
  QCOMPARE(promptAt(answered, 1).connection, quint64(2));
  QCOMPARE(promptAt(answered, 2).ask.ask_id, uint64_t(2));
  c.allowOnce();  // nothing to answer: nothing sent
  QCOMPARE(answered.count(), 3);
}

void PromptTest::eachAnswerSendsItsDecision() {
  PromptController c;
  QSignalSpy answered(&c, &PromptController::answered);
  struct Case {
    void (PromptController::*fn)();
    bool allow;
    proto::Scope scope;
  } cases[] = {{&PromptController::allowOnce, true, proto::Scope::Once},
               {&PromptController::denyOnce, false, proto::Scope::Once},
               {&PromptController::allowTree, true, proto::Scope::Tree},
               {&PromptController::denyTree, false, proto::Scope::Tree}};
  uint64_t id = 1;
  for (const auto& k : cases) {
    c.enqueue(prompt(1, id));
    (c.*k.fn)();
    proto::Answer a = answerAt(answered, answered.count() - 1);
    QCOMPARE(a.ask_id, id);
    QCOMPARE(a.allow, k.allow);
    QCOMPARE(a.scope, k.scope);
    QVERIFY(!a.timeout);
    QVERIFY(a.rule.empty());
    ++id;
  }
}

void PromptTest::keysAnswer() {
  PromptController c;
  PromptWindow w(&c);
  QSignalSpy answered(&c, &PromptController::answered);
  struct Case {
    Qt::Key key;
    bool allow;
    proto::Scope scope;
  } cases[] = {{Qt::Key_A, true, proto::Scope::Once},
               {Qt::Key_D, false, proto::Scope::Once},
               {Qt::Key_Escape, false, proto::Scope::Once},
               {Qt::Key_T, true, proto::Scope::Tree},
               {Qt::Key_B, false, proto::Scope::Tree}};
  uint64_t id = 1;
  for (const auto& k : cases) {
    c.enqueue(prompt(1, id));
    QVERIFY(w.isVisible());  // a new prompt comes to the front
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QTest::keyClick(&w, k.key);
    QCOMPARE(answered.count(), static_cast<int>(id));
    proto::Answer a = answerAt(answered, static_cast<int>(id) - 1);
    QCOMPARE(a.ask_id, id);
    QCOMPARE(a.allow, k.allow);
    QCOMPARE(a.scope, k.scope);
    ++id;
  }
  QVERIFY(!w.isVisible());  // nothing left to ask
}

void PromptTest::buttonsAnswer() {
  PromptController c;
  PromptWindow w(&c);
  QSignalSpy answered(&c, &PromptController::answered);
  const char* keys[] = {"A", "D", "T", "B"};
  const bool allow[] = {true, false, true, false};
  for (int i = 0; i < 4; ++i) {
    c.enqueue(prompt(1, static_cast<uint64_t>(i + 1)));
    QPushButton* b = w.button(QString::fromLatin1(keys[i]));
    QVERIFY(b);
    QTest::mouseClick(b, Qt::LeftButton);
    QCOMPARE(answered.count(), i + 1);
    QCOMPARE(answerAt(answered, i).allow, allow[i]);
  }
}

void PromptTest::timeoutDenies() {
  PromptController c;
  PromptWindow w(&c);
  QSignalSpy answered(&c, &PromptController::answered);
  QSignalSpy tick(&c, &PromptController::tick);
  c.enqueue(prompt(1, 1, "/p/a", 400));
  c.enqueue(prompt(1, 2, "/p/b", 300));  // runs out while waiting behind the first
  c.enqueue(prompt(1, 3, "/p/c", 60000));
  QVERIFY(c.secondsLeft() <= 1);
  QVERIFY(tick.count() >= 1);
  QTRY_COMPARE_WITH_TIMEOUT(answered.count(), 2, 3000);
  for (int i = 0; i < 2; ++i) {
    proto::Answer a = answerAt(answered, i);
    QVERIFY(!a.allow);
    QCOMPARE(a.scope, proto::Scope::Once);
    QVERIFY(a.timeout);
  }
  // The second timed out in the queue, the first on screen.
  QCOMPARE(answerAt(answered, 0).ask_id, uint64_t(2));
  QCOMPARE(answerAt(answered, 1).ask_id, uint64_t(1));
  QCOMPARE(c.current().ask.ask_id, uint64_t(3));
  QVERIFY(c.secondsLeft() > 50);
}

void PromptTest::foldingUpdatesTheCount() {
  PromptController c;
  PromptWindow w(&c);
  QSignalSpy count(&c, &PromptController::countChanged);
  c.enqueue(prompt(1, 1, "/p/build/x.o"));
  c.enqueue(prompt(1, 2, "/p/other"));
  c.update(1, 1, 240, "delete 240 files under build/");
  QCOMPARE(count.count(), 1);
  QCOMPARE(c.current().ask.count, uint32_t(240));
  QCOMPARE(c.current().ask.summary, std::string("delete 240 files under build/"));
  bool shown = false;
  for (auto* l : w.findChildren<QLabel*>())
    shown = shown || l->text() == QStringLiteral("rm wants to delete 240 files under build/");
  QVERIFY(shown);
  c.update(1, 2, 3, "delete 3 files under ./");  // a waiting one: no repaint of the current
  QCOMPARE(count.count(), 1);
  QCOMPARE(c.queue()[1].ask.count, uint32_t(3));
  c.update(9, 9, 5, "x");  // unknown: ignored
}

void PromptTest::thePromptSaysWhyTheRuleAsks() {
  PromptController c;
  PromptWindow w(&c);
  Prompt p = prompt(1, 1, "/p/build/x.o");
  // As the supervisor sends it (audit/explain_json.h).
  p.ask.why =
      nlohmann::json::parse(R"({"verdict": "ask", "rule": {"id": "mass-delete", "location": "/p/rules.yaml:12:5"},
    "checks": [{"test": "action", "held": true, "detail": "file.delete is one of file.delete"},
               {"test": "when", "held": true, "detail": "proc.deletes > 100",
                "conditions": [{"condition": "proc.deletes > 100", "values": {"proc.deletes": "141"}, "result": true}]}],
    "layer": "notify"})");
  c.enqueue(p);
  QString all;
  for (auto* l : w.findChildren<QLabel*>()) all += l->text() + QLatin1Char('\n');
  QVERIFY2(all.contains(QStringLiteral("/p/rules.yaml:12:5")), qPrintable(all));
  QVERIFY2(all.contains(QStringLiteral("proc.deletes &gt; 100  [proc.deletes = 141]")), qPrintable(all));
  QVERIFY2(all.contains(QStringLiteral("✓ action: file.delete is one of file.delete")), qPrintable(all));
}

void PromptTest::cancelAndDisconnectRemovePrompts() {
  PromptController c;
  QSignalSpy answered(&c, &PromptController::answered);
  QSignalSpy current(&c, &PromptController::currentChanged);
  c.enqueue(prompt(1, 1));
  c.enqueue(prompt(2, 1));
  c.enqueue(prompt(1, 2));
  c.enqueue(prompt(2, 2));
  c.cancel(1, 2);  // waiting
  QCOMPARE(c.waiting(), 2);
  c.cancel(1, 1);  // on screen: the next one shows
  QCOMPARE(c.current().connection, quint64(2));
  c.enqueue(prompt(3, 1));
  c.dropConnection(2);
  QCOMPARE(c.current().connection, quint64(3));
  QCOMPARE(c.waiting(), 0);
  QCOMPARE(answered.count(), 0);  // nobody answered: nothing was sent
  QVERIFY(current.count() >= 3);
}

void PromptTest::alwaysRuleIsExactYaml() {
  proto::AskMsg a = ask(1, "/p/keep/a.txt", 60000, "ask-keep", "rm");
  RuleContext ctx;
  ctx.sessionLabel = QStringLiteral("agent (#7)");
  ctx.cwd = "/p";
  ctx.now = QDateTime(QDate(2026, 11, 29), QTime(21, 52, 33));
  QString rule = proposeRule(a, true, ctx);
  QCOMPARE(rule,
           QStringLiteral("  - id: gui-allow-file-delete-20261129-215233\n"
                          "    # \"Always allow\" from the cottonbox prompt, 2026-11-29 21:52, session agent (#7)\n"
                          "    # asked by rule ask-keep for: rm /p/keep/a.txt\n"
                          "    action: file.delete\n"
                          "    path: [\"/p/keep/a.txt\"]\n"
                          "    process: [\"rm\"]\n"
                          "    decision: allow\n"
                          "    message: \"Allowed always from the cottonbox prompt on 2026-11-29\"\n"));
  // Folded: the directory's tree.  Ids stay fresh.  Odd bytes stay exact.
  a.count = 240;
  a.row.ev.path = "/p/build [1]/x.o";
  ctx.existingText = QStringLiteral("rules:\n  - id: gui-deny-file-delete-20261129-215233\n");
  QString deny = proposeRule(a, false, ctx);
  QVERIFY2(deny.contains(QStringLiteral("id: gui-deny-file-delete-20261129-215233-2\n")), qPrintable(deny));
  QVERIFY2(deny.contains(QStringLiteral("path: [\"/p/build \\\\[1\\\\]/**\"]")), qPrintable(deny));
  QVERIFY(deny.contains(QStringLiteral("decision: deny")));
  // `process:` names an identity, never the name a process chose: a copy of
  // rm elsewhere is no system program (the rule then holds for any process),
  // and a process the policy already knows goes by its identity.
  auto copy = std::make_shared<ProcessInfo>(*a.row.ev.proc);
  copy->comm = "rm";
  copy->exe = "/tmp/rm";
  a.row.ev.proc = copy;
  QString anyone = proposeRule(a, true, ctx);
  QVERIFY2(!anyone.contains(QStringLiteral("    process: [")), qPrintable(anyone));
  QVERIFY2(anyone.contains(QStringLiteral("# for any process: its program \"/tmp/rm\" is not a system program")),
           qPrintable(anyone));
  copy->names = {"git"};
  QVERIFY(proposeRule(a, true, ctx).contains(QStringLiteral("    process: [\"git\"]\n")));
  // A connection: a host rule, by the name asked for, else the address.
  proto::AskMsg n = ask(2, "tcp:203.0.113.7:443", 60000, "secrets-then-network", "curl");
  n.row.ev.action = Action::NetConnect;
  n.row.ev.net = make_net_object(NetProto::Tcp, *IpAddr::parse("203.0.113.7"), 443);
  n.row.ev.net.hosts = {"paste.example"};
  QString host = proposeRule(n, false, ctx);
  QVERIFY2(host.contains(QStringLiteral("    action: net.connect\n    host: [\"paste.example\"]\n    port: [443]\n")),
           qPrintable(host));
  QVERIFY2(!host.contains(QStringLiteral("path:")), qPrintable(host));
  n.row.ev.net.hosts.clear();
  QVERIFY(proposeRule(n, true, ctx).contains(QStringLiteral("    host: [\"203.0.113.7\"]\n")));
  QCOMPARE(QString::fromStdString(exactGlob("/p/${HOME}/\xff")), QStringLiteral("/p/?\\{HOME\\}/?"));
  QCOMPARE(yamlQuote("a\"b\\c\nd"), QStringLiteral("\"a\\\"b\\\\c\\x0ad\""));
}

void PromptTest::alwaysWritesALoadableRule() {
  const QString file = m_dir->path() + QStringLiteral("/config/cottonbox/rules.yaml");
  PromptController c;
  c.setRulesFile(file);
  QSignalSpy answered(&c, &PromptController::answered);
  c.enqueue(prompt(1, 1, "/p/keep/a.txt"));
  QString yaml = c.proposedRule(true);
  QString error;
  QVERIFY2(c.answerAlways(true, yaml, &error), qPrintable(error));
  QCOMPARE(answered.count(), 1);
  proto::Answer a = answerAt(answered, 0);
  QVERIFY(a.allow);
  QCOMPARE(a.scope, proto::Scope::Always);
  QCOMPARE(QString::fromStdString(a.rule), yaml);
  QString text = readAll(file);
  QVERIFY2(text.startsWith(QStringLiteral("version: 1\nrules:\n  - id: gui-allow-file-delete-")), qPrintable(text));

  // The next session loads it, and it decides exactly what was asked.
  LoadResult r = load_policy_files({file.toStdString()}, LoadOptions{});
  QVERIFY(r.policy);
  Event ev;
  ev.action = Action::FileDelete;
  ev.path = "/p/keep/a.txt";
  auto p = std::make_shared<ProcessInfo>();
  p->comm = "rm";
  p->exe = "/usr/bin/rm";
  p->names = {"rm"};  // what the supervisor finds /usr/bin/rm to be under this policy
  ev.proc = p;
  Verdict v = decide(*r.policy, ev);
  QCOMPARE(v.decision, Decision::Allow);
  QVERIFY2(QString::fromStdString(v.rule_id).startsWith(QStringLiteral("gui-allow-file-delete-")), v.rule_id.c_str());
  ev.path = "/p/keep/b.txt";  // exactly that file, nothing more
  QVERIFY(decide(*r.policy, ev).rule_id.empty());

  // A second one is appended; a file whose rules: list is followed by
  // another section gets the rule inside the list.
  c.enqueue(prompt(1, 2, "/p/keep/b.txt"));
  QVERIFY2(c.answerAlways(false, c.proposedRule(false), &error), qPrintable(error));
  r = load_policy_files({file.toStdString()}, LoadOptions{});
  QVERIFY(r.policy);
  QCOMPARE(decide(*r.policy, ev).decision, Decision::Deny);

  const QString other = m_dir->path() + QStringLiteral("/other.yaml");
  QFile f(other);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(
      "version: 1\nrules:\n- id: mine\n  action: file.write\n  path: [\"/p/x\"]\n  decision: deny\n\nlists:\n  tools: "
      "[git]\n");
  f.close();
  c.setRulesFile(other);
  c.enqueue(prompt(1, 3, "/p/keep/c.txt"));
  QVERIFY2(c.answerAlways(true, c.proposedRule(true), &error), qPrintable(error));
  text = readAll(other);
  QVERIFY2(text.contains(QStringLiteral("\n- id: gui-allow-file-delete-")), qPrintable(text));
  QVERIFY(text.endsWith(QStringLiteral("lists:\n  tools: [git]\n")));
  r = load_policy_files({other.toStdString()}, LoadOptions{});
  QVERIFY(r.policy);
  QCOMPARE(r.policy->rules.size() >= 2, true);
}

void PromptTest::alwaysRefusesABrokenOrStaleRule() {
  const QString file = m_dir->path() + QStringLiteral("/rules.yaml");
  PromptController c;
  c.setRulesFile(file);
  QSignalSpy answered(&c, &PromptController::answered);
  c.enqueue(prompt(1, 1));
  QString error;
  QVERIFY(!c.answerAlways(true, QStringLiteral("  - id: x\n    action: file.explode\n    decision: allow\n"), &error));
  QVERIFY2(error.contains(QStringLiteral("file.explode")), qPrintable(error));
  QVERIFY(!QFile::exists(file));
  QCOMPARE(answered.count(), 0);
  QVERIFY(c.hasCurrent());

  // The prompt ran out while the rule was being edited.
  PromptKey key = c.currentKey();
  c.cancel(1, 1);
  c.enqueue(prompt(1, 2));
  QVERIFY(!c.answerAlways(true, c.proposedRule(true), &error, key));
  QVERIFY(!QFile::exists(file));
  QCOMPARE(answered.count(), 0);
}

void PromptTest::alwaysDialogShowsTheRuleFirst() {
  const QString file = m_dir->path() + QStringLiteral("/rules.yaml");
  PromptController c;
  c.setRulesFile(file);
  PromptWindow w(&c);
  QSignalSpy answered(&c, &PromptController::answered);
  QSignalSpy opened(&w, &PromptWindow::ruleDialogOpened);
  c.enqueue(prompt(1, 1));
  QVERIFY(QTest::qWaitForWindowActive(&w));
  QTest::keyClick(&w, Qt::Key_N);  // never: always deny
  QCOMPARE(opened.count(), 1);
  auto* d = qobject_cast<RuleDialog*>(opened.at(0).at(0).value<QDialog*>());
  QVERIFY(d);
  QCOMPARE(answered.count(), 0);  // nothing is saved before the user says so
  QVERIFY(!QFile::exists(file));
  QString text = d->editor()->toPlainText();
  QVERIFY(text.contains(QStringLiteral("decision: deny")));
  // The user narrows the message and saves.
  d->editor()->setPlainText(text.replace(QStringLiteral("Denied always"), QStringLiteral("Never delete keep/")));
  d->save();
  QCOMPARE(answered.count(), 1);
  QCOMPARE(answerAt(answered, 0).scope, proto::Scope::Always);
  QVERIFY(!answerAt(answered, 0).allow);
  QVERIFY(readAll(file).contains(QStringLiteral("Never delete keep/")));

  // Cancel writes nothing and answers nothing.
  c.enqueue(prompt(1, 2));
  w.askAlways(true);
  QCOMPARE(opened.count(), 2);
  auto* d2 = qobject_cast<RuleDialog*>(opened.at(1).at(0).value<QDialog*>());
  d2->reject();
  QCOMPARE(answered.count(), 1);
  QVERIFY(c.hasCurrent());
}

void PromptTest::rulesPathMatchesTheTracer() {
  QByteArray old = qgetenv("XDG_CONFIG_HOME");
  qputenv("XDG_CONFIG_HOME", "/tmp/cfg");
  QCOMPARE(userRulesPath(), QString::fromStdString(cb::user_rules_path()));
  qunsetenv("XDG_CONFIG_HOME");
  QCOMPARE(userRulesPath(), QString::fromStdString(cb::user_rules_path()));
  if (!old.isEmpty()) qputenv("XDG_CONFIG_HOME", old);
}

}  // namespace cb::gui::test
