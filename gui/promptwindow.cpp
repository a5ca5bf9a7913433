#include "gui/promptwindow.h"

#include <QDialogButtonBox>
#include <QFrame>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QVBoxLayout>

#include "gui/text.h"

namespace cb::gui {
namespace {

QLabel* sectionLabel(const QString& text, QWidget* parent) {
  auto* l = new QLabel(text.toUpper(), parent);
  QFont f = l->font();
  f.setPointSizeF(f.pointSizeF() * 0.8);
  f.setBold(true);
  f.setLetterSpacing(QFont::AbsoluteSpacing, 0.6);
  l->setFont(f);
  l->setStyleSheet(QStringLiteral("color: #6e7781;"));
  return l;
}

QLabel* monoBox(QWidget* parent) {
  auto* l = new QLabel(parent);
  l->setFont(monospaceFont());
  l->setTextFormat(Qt::RichText);
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  l->setWordWrap(true);
  l->setStyleSheet(QStringLiteral(
      "QLabel { background: #ffffff; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 10px; }"));
  return l;
}

QString html(const QString& s) { return s.toHtmlEscaped(); }

QString jstr(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? QString::fromStdString(j[key].get<std::string>()) : QString();
}

// Why the rule asks, from the ask's "why" (what `cottonbox why` shows): where
// the rule is written, and each of its tests with the values it read.
QString whyHtml(const nlohmann::json& why) {
  if (!why.is_object() || !why.contains("rule") || !why["rule"].is_object()) return {};
  QStringList lines;
  QString where = jstr(why["rule"], "location");
  if (!where.isEmpty()) lines << QStringLiteral("<span style='color:#57606a'>%1</span>").arg(html(where));
  if (why.contains("checks") && why["checks"].is_array()) {
    for (const auto& c : why["checks"]) {
      QString line = (c.value("held", false) ? QStringLiteral("✓ ") : QStringLiteral("✗ ")) + html(jstr(c, "test")) +
                     QStringLiteral(": ") + html(jstr(c, "detail"));
      if (c.contains("conditions") && c["conditions"].is_array()) {
        for (const auto& s : c["conditions"]) {
          QStringList values;
          if (s.contains("values") && s["values"].is_object())
            for (auto& [k, v] : s["values"].items())
              values << QString::fromStdString(k) + QStringLiteral(" = ") +
                            (v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString());
          line += QStringLiteral("<br>&nbsp;&nbsp;&nbsp;&nbsp;") + html(jstr(s, "condition"));
          if (!values.isEmpty())
            line += QStringLiteral("  [") + html(values.join(QStringLiteral(", "))) + QStringLiteral("]");
        }
      }
      lines << line;
    }
  }
  if (lines.isEmpty()) return {};
  return QStringLiteral("<br><span style='font-size:small'>") + lines.join(QStringLiteral("<br>")) +
         QStringLiteral("</span>");
}

}  // namespace

PromptWindow::PromptWindow(PromptController* controller, QWidget* parent)
    : QWidget(parent, Qt::Window), m_c(controller) {
  setWindowTitle(tr("cottonbox — a request is waiting"));
  setMinimumWidth(720);
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(22, 18, 22, 18);
  v->setSpacing(10);

  auto* top = new QHBoxLayout;
  m_session = new QLabel(this);
  m_session->setStyleSheet(QStringLiteral("color: #57606a;"));
  m_session->setWordWrap(true);
  m_session->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_queue = new QLabel(this);
  m_queue->setStyleSheet(QStringLiteral(
      "QLabel { background: #fff3d6; color: #8a5a00; border-radius: 9px; padding: 2px 10px; font-weight: bold; }"));
  top->addWidget(m_session, 1);
  top->addWidget(m_queue, 0, Qt::AlignRight);
  v->addLayout(top);

  m_title = new QLabel(this);
  QFont tf = m_title->font();
  tf.setPointSizeF(tf.pointSizeF() * 1.45);
  tf.setBold(true);
  m_title->setFont(tf);
  m_title->setWordWrap(true);
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(m_title);

  m_rule = new QLabel(this);
  m_rule->setWordWrap(true);
  m_rule->setTextFormat(Qt::RichText);
  m_rule->setStyleSheet(
      QStringLiteral("QLabel { background: #fff8e6; border: 1px solid #f0d48a; border-radius: 6px; padding: 8px 10px; "
                     "color: #3d2c00; }"));
  v->addWidget(m_rule);

  v->addSpacing(4);
  v->addWidget(sectionLabel(tr("Path"), this));
  m_paths = monoBox(this);
  v->addWidget(m_paths);
  v->addWidget(sectionLabel(tr("Process chain"), this));
  m_chain = monoBox(this);
  v->addWidget(m_chain);

  v->addSpacing(4);
  auto* cd = new QHBoxLayout;
  m_progress = new QProgressBar(this);
  m_progress->setTextVisible(false);
  m_progress->setFixedHeight(8);
  m_progress->setRange(0, 1000);
  m_progress->setStyleSheet(
      QStringLiteral("QProgressBar { background: #eaeef2; border: none; border-radius: 4px; }"
                     "QProgressBar::chunk { background: #d4a72c; border-radius: 4px; }"));
  m_countdown = new QLabel(this);
  m_countdown->setStyleSheet(QStringLiteral("color: #57606a;"));
  cd->addWidget(m_progress, 1);
  cd->addSpacing(8);
  cd->addWidget(m_countdown);
  v->addLayout(cd);

  v->addSpacing(6);
  auto* grid = new QGridLayout;
  grid->setHorizontalSpacing(8);
  grid->setVerticalSpacing(8);
  auto make = [this](const QString& text, const QString& key, const QString& tip) {
    auto* b = new QPushButton(QStringLiteral("%1   %2").arg(text, key), this);
    b->setToolTip(tip);
    b->setMinimumHeight(34);
    b->setFocusPolicy(Qt::TabFocus);
    b->setProperty("key", key);
    return b;
  };
  m_allowOnce =
      make(tr("Allow once"), QStringLiteral("A"), tr("Let this request (and the ones folded into it) through"));
  m_allowTree = make(tr("Allow this tree"), QStringLiteral("T"),
                     tr("Allow this action for this process and its children until the session ends"));
  m_allowAlways = make(tr("Always allow…"), QStringLiteral("Y"),
                       tr("Write a rule to your rules file (shown first); later sessions load it"));
  m_denyOnce = make(tr("Deny once"), QStringLiteral("D / Esc"), tr("Refuse this request; the process gets EPERM"));
  m_denyTree = make(tr("Deny this tree"), QStringLiteral("B"),
                    tr("Deny this action for this process and its children until the session ends"));
  m_denyAlways = make(tr("Always deny…"), QStringLiteral("N"),
                      tr("Write a deny rule to your rules file (shown first); later sessions load it"));
  m_allowOnce->setProperty("key", QStringLiteral("A"));
  m_denyOnce->setProperty("key", QStringLiteral("D"));
  const QString allowStyle = QStringLiteral(
      "QPushButton { background: #f6f8fa; border: 1px solid #c9d1d9; border-radius: 6px; padding: 4px 14px; }"
      "QPushButton:hover { background: #eef1f4; }");
  const QString denyStyle = QStringLiteral(
      "QPushButton { background: #fff5f5; border: 1px solid #f1b7b2; border-radius: 6px; padding: 4px 14px; color: "
      "#9b1c12; }"
      "QPushButton:hover { background: #ffecec; }");
  for (auto* b : {m_allowOnce, m_allowTree, m_allowAlways}) b->setStyleSheet(allowStyle);
  for (auto* b : {m_denyOnce, m_denyTree, m_denyAlways}) b->setStyleSheet(denyStyle);
  QFont bf = m_denyOnce->font();
  bf.setBold(true);
  m_denyOnce->setFont(bf);
  m_allowOnce->setFont(bf);
  grid->addWidget(m_allowOnce, 0, 0);
  grid->addWidget(m_allowTree, 0, 1);
  grid->addWidget(m_allowAlways, 0, 2);
  grid->addWidget(m_denyOnce, 1, 0);
  grid->addWidget(m_denyTree, 1, 1);
  grid->addWidget(m_denyAlways, 1, 2);
  v->addLayout(grid);

  connect(m_allowOnce, &QPushButton::clicked, m_c, &PromptController::allowOnce);
  connect(m_denyOnce, &QPushButton::clicked, m_c, &PromptController::denyOnce);
  connect(m_allowTree, &QPushButton::clicked, m_c, &PromptController::allowTree);
  connect(m_denyTree, &QPushButton::clicked, m_c, &PromptController::denyTree);
  connect(m_allowAlways, &QPushButton::clicked, this, [this] { askAlways(true); });
  connect(m_denyAlways, &QPushButton::clicked, this, [this] { askAlways(false); });

  auto key = [this](QKeySequence seq, auto fn) {
    auto* s = new QShortcut(seq, this);
    s->setContext(Qt::WindowShortcut);
    connect(s, &QShortcut::activated, this, fn);
  };
  key(QKeySequence(Qt::Key_A), [this] { m_c->allowOnce(); });
  key(QKeySequence(Qt::Key_D), [this] { m_c->denyOnce(); });
  key(QKeySequence(Qt::Key_Escape), [this] { m_c->denyOnce(); });
  key(QKeySequence(Qt::Key_T), [this] { m_c->allowTree(); });
  key(QKeySequence(Qt::Key_B), [this] { m_c->denyTree(); });
  key(QKeySequence(Qt::Key_Y), [this] { askAlways(true); });
  key(QKeySequence(Qt::Key_N), [this] { askAlways(false); });

  connect(m_c, &PromptController::currentChanged, this, [this] {
    refresh();
    if (m_c->hasCurrent()) bringToFront();
  });
  connect(m_c, &PromptController::countChanged, this, &PromptWindow::refreshSummary);
  connect(m_c, &PromptController::tick, this, &PromptWindow::refreshCountdown);
  connect(m_c, &PromptController::queueChanged, this, &PromptWindow::refreshQueue);
  refresh();
}

QPushButton* PromptWindow::button(const QString& key) const {
  for (auto* b : {m_allowOnce, m_allowTree, m_allowAlways, m_denyOnce, m_denyTree, m_denyAlways})
    if (b->property("key").toString() == key) return b;
  return nullptr;
}

void PromptWindow::bringToFront() {
  if (isMinimized()) showNormal();
  show();
  // Headless platforms (tests) have no stacking order to change.
  if (QGuiApplication::platformName() != QLatin1String("offscreen")) raise();
  activateWindow();
}

void PromptWindow::refresh() {
  if (!m_c->hasCurrent()) {
    hide();
    return;
  }
  const Prompt& p = m_c->current();
  const proto::AskMsg& a = p.ask;
  m_session->setText(tr("Session %1  ·  %2").arg(p.sessionLabel, safe(p.cwd)));
  refreshSummary();

  QString rule = a.row.verdict.rule_id.empty() ? tr("the policy's default") : html(qs(a.row.verdict.rule_id));
  QString msg = a.row.verdict.message.empty() ? QString() : QStringLiteral("<br>") + html(qs(a.row.verdict.message));
  m_rule->setText(tr("Asked by rule <b>%1</b>%2").arg(rule, msg) + whyHtml(a.why));

  // The chain, root first: agent → shell → the asking process.
  QStringList lines;
  int n = static_cast<int>(a.chain.size());
  for (int i = n - 1; i >= 0; --i) {
    const auto& l = a.chain[static_cast<size_t>(i)];
    int depth = n - 1 - i;
    QString indent = depth == 0
                         ? QString()
                         : QString(QStringLiteral("&nbsp;&nbsp;")).repeated(depth - 1) + QStringLiteral("└&nbsp;");
    QString cmd = l.argv.empty() ? safe(l.comm) : commandLine(l.argv);
    if (cmd.size() > 200) cmd = cmd.left(198) + QStringLiteral("…");
    QString line = indent + html(cmd) + QStringLiteral("  <span style='color:#8c959f'>pid %1</span>").arg(l.pid);
    if (i == 0) line = QStringLiteral("<b>%1</b>  <span style='color:#8a5a00'>← asking</span>").arg(line);
    lines << line;
  }
  if (lines.isEmpty()) lines << html(tr("(the process is not known)"));
  m_chain->setText(lines.join(QStringLiteral("<br>")));
  refreshQueue(m_c->waiting());
  refreshCountdown(m_c->secondsLeft());
}

void PromptWindow::refreshSummary() {
  if (!m_c->hasCurrent()) return;
  const Prompt& p = m_c->current();
  const proto::AskMsg& a = p.ask;
  const Event& ev = a.row.ev;
  QString who = ev.proc ? safe(ev.proc->comm) : tr("A process");
  m_title->setText(tr("%1 wants to %2").arg(who, qs(a.summary)));

  QString path = html(safe(ev.path));
  if (!ev.target.empty()) path += QStringLiteral("<br>→ ") + html(safe(ev.target));
  if (a.count > 1) {
    std::string dir = ev.path.substr(0, ev.path.rfind('/'));
    path += QStringLiteral("<br><span style='color:#57606a'>%1</span>")
                .arg(html(tr("… and %n more like it in %1/", nullptr, static_cast<int>(a.count - 1)).arg(safe(dir))));
  }
  m_paths->setText(path);
}

void PromptWindow::refreshCountdown(int secondsLeft) {
  if (!m_c->hasCurrent()) return;
  qint64 total = m_c->totalMs();
  m_progress->setValue(
      static_cast<int>(std::clamp<qint64>(m_c->msLeft() * 1000 / std::max<qint64>(total, 1), 0, 1000)));
  m_countdown->setText(
      tr("Asked at %1  ·  denied automatically in %2")
          .arg(timeOfDay(m_c->current().ask.asked_ns).left(8), duration(int64_t(secondsLeft) * 1000000000)));
}

void PromptWindow::refreshQueue(int waiting) {
  m_queue->setVisible(waiting > 0);
  m_queue->setText(tr("%n more waiting", nullptr, waiting));
}

void PromptWindow::askAlways(bool allow) {
  if (!m_c->hasCurrent()) return;
  auto* d = new RuleDialog(m_c, allow, this);
  d->setAttribute(Qt::WA_DeleteOnClose);
  d->open();
  emit ruleDialogOpened(d);
}

// ---------------------------------------------------------------- rule dialog --

RuleDialog::RuleDialog(PromptController* controller, bool allow, QWidget* parent)
    : QDialog(parent), m_c(controller), m_allow(allow), m_key(controller->currentKey()) {
  setWindowTitle(allow ? tr("Always allow — the rule to save") : tr("Always deny — the rule to save"));
  setMinimumSize(860, 420);
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(18, 16, 18, 16);
  v->setSpacing(10);
  if (controller->hasCurrent()) {
    const proto::AskMsg& a = controller->current().ask;
    auto* what = new QLabel(
        tr("%1 wants to %2").arg(a.row.ev.proc ? safe(a.row.ev.proc->comm) : tr("A process"), qs(a.summary)), this);
    QFont f = what->font();
    f.setBold(true);
    f.setPointSizeF(f.pointSizeF() * 1.15);
    what->setFont(f);
    v->addWidget(what);
  }
  auto* intro = new QLabel(
      tr("This rule will be added to <b>%1</b>. Every later <code>cottonbox run</code> loads it before the default "
         "rules. It also answers this request, for this process tree, for the rest of this session. Edit it if it "
         "is too broad or too narrow.")
          .arg(html(controller->rulesFile())),
      this);
  intro->setWordWrap(true);
  v->addWidget(intro);
  m_editor = new QPlainTextEdit(this);
  m_editor->setFont(monospaceFont());
  m_editor->setPlainText(controller->proposedRule(allow));
  m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
  v->addWidget(m_editor, 1);
  m_error = new QLabel(this);
  m_error->setWordWrap(true);
  m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_error->setStyleSheet(QStringLiteral("color: #b42318;"));
  m_error->hide();
  v->addWidget(m_error);
  auto* buttons = new QDialogButtonBox(this);
  auto* ok =
      buttons->addButton(allow ? tr("Save rule and allow") : tr("Save rule and deny"), QDialogButtonBox::AcceptRole);
  buttons->addButton(QDialogButtonBox::Cancel)->setIcon(QIcon());
  ok->setDefault(true);
  connect(buttons, &QDialogButtonBox::accepted, this, &RuleDialog::save);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  v->addWidget(buttons);
}

void RuleDialog::save() {
  QString error;
  if (!m_c->answerAlways(m_allow, m_editor->toPlainText(), &error, m_key)) {
    m_error->setText(error);
    m_error->show();
    return;
  }
  accept();
}

}  // namespace cb::gui
