#include "gui/changespanel.h"

#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextEdit>
#include <QTreeView>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "gui/text.h"

namespace cb::gui {
namespace {

QString actionWords(const keep::Step& s) {
  switch (s.action) {
    case keep::Action::Restore: return s.forced ? QApplication::tr("restore (force)") : QApplication::tr("restore");
    case keep::Action::Remove: return s.forced ? QApplication::tr("remove (force)") : QApplication::tr("remove");
    case keep::Action::MoveBack:
      return s.forced ? QApplication::tr("move back (force)") : QApplication::tr("move back");
    case keep::Action::Conflict: return QApplication::tr("conflict: refused");
    case keep::Action::Cannot: return QApplication::tr("not kept");
    case keep::Action::SkipCreated: return QApplication::tr("left");
    case keep::Action::Nothing: return QApplication::tr("already as before");
  }
  return QString();
}

size_t actionCount(const keep::UndoReport& r) {
  size_t n = 0;
  for (const keep::Step& s : r.steps)
    n += s.action == keep::Action::Restore || s.action == keep::Action::Remove || s.action == keep::Action::MoveBack;
  return n;
}

size_t conflicts(const keep::UndoReport& r) {
  size_t n = 0;
  for (const keep::Step& s : r.steps) n += s.action == keep::Action::Conflict;
  return n;
}

}  // namespace

ChangesPanel::ChangesPanel(QWidget* parent) : QWidget(parent), m_controller(new ChangesController(this)) {
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 8, 0, 0);
  auto* bar = new QHBoxLayout;
  m_summary = new QLabel(this);
  m_summary->setWordWrap(true);
  m_refresh = new QPushButton(tr("Refresh"), this);
  m_restore = new QPushButton(tr("Restore selected…"), this);
  m_restore->setToolTip(
      tr("Gives back what the selected changes destroyed. Files changed since the session are refused unless "
         "you force it."));
  bar->addWidget(m_summary, 1);
  bar->addWidget(m_refresh);
  bar->addWidget(m_restore);
  v->addLayout(bar);

  auto* split = new QSplitter(Qt::Horizontal, this);
  m_view = new QTreeView(split);
  m_view->setModel(m_controller->model());
  m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_view->setUniformRowHeights(true);
  m_view->setTextElideMode(Qt::ElideMiddle);
  m_view->header()->setStretchLastSection(true);
  m_view->setStyleSheet(QStringLiteral(
      "QTreeView { border: 1px solid #d0d7de; selection-background-color: #dbe7fb; selection-color: #1f2328; }"
      "QHeaderView::section { background: #f6f8fa; border: none; border-bottom: 1px solid #d0d7de;"
      " padding: 4px 6px; font-weight: bold; color: #57606a; }"));
  const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('m'));
  m_view->setColumnWidth(ChangesModel::PathColumn, em * 30);
  m_view->setColumnWidth(ChangesModel::ChangeColumn, em * 9);
  m_view->setColumnWidth(ChangesModel::UndoColumn, em * 11);

  auto* right = new QWidget(split);
  auto* rv = new QVBoxLayout(right);
  rv->setContentsMargins(8, 0, 0, 0);
  m_title = new QLabel(right);
  m_title->setFont(monospaceFont());
  m_title->setWordWrap(true);
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_note = new QLabel(right);
  m_note->setWordWrap(true);
  m_note->setStyleSheet(QStringLiteral("color: #57606a;"));
  m_diff = new QTextEdit(right);
  m_diff->setReadOnly(true);
  m_diff->setLineWrapMode(QTextEdit::NoWrap);
  m_diff->setFont(monospaceFont());
  m_diff->setStyleSheet(QStringLiteral("QTextEdit { border: 1px solid #d0d7de; }"));
  rv->addWidget(m_title);
  rv->addWidget(m_note);
  rv->addWidget(m_diff, 1);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({780, 560});
  v->addWidget(split, 1);

  connect(m_refresh, &QPushButton::clicked, this, [this] {
    m_stale = true;
    load();
  });
  connect(m_restore, &QPushButton::clicked, this, &ChangesPanel::restoreSelected);
  connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &ChangesPanel::showPreview);
  connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ChangesPanel::updateButtons);
  connect(m_controller, &ChangesController::reloaded, this, [this] {
    m_view->expandAll();
    const keep::RecordedSession* s = m_controller->session();
    size_t lines = m_controller->model()->lineCount(), undoable = 0;
    for (const auto& g : m_controller->model()->groups())
      for (const auto& l : g.lines) undoable += l.undo != keep::Undo::Cannot;
    QString text = lines == 0 ? tr("No changes to files recorded in this session.")
                              : tr("%1 by %2; %3 can be undone.")
                                    .arg(counted(lines, "change", "changes"),
                                         counted(m_controller->model()->groups().size(), "command", "commands"))
                                    .arg(undoable);
    if (s && !s->journal) text += tr("  Nothing was kept for this session (no keep journal).");
    m_summary->setText(text);
    showPreview();
    updateButtons();
  });
  clear(tr("Select a session."));
}

void ChangesPanel::setSession(const QString& dbPath, int64_t id) {
  if (m_dbPath == dbPath && m_id == id && m_controller->loaded()) return;
  m_dbPath = dbPath;
  m_id = id;
  m_stale = true;
  if (isVisible()) load();
}

void ChangesPanel::clear(const QString& why) {
  m_id.reset();
  m_stale = false;
  m_controller->clear();
  m_summary->setText(why);
  m_title->clear();
  m_note->clear();
  m_diff->clear();
  updateButtons();
}

void ChangesPanel::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (m_stale) load();
}

void ChangesPanel::load() {
  if (!m_id || !m_stale) return;
  m_stale = false;
  QString error;
  if (!m_controller->load(m_dbPath, *m_id, &error)) {
    m_summary->setText(tr("The changes cannot be read: %1").arg(error));
    emit status(error);
  }
}

bool ChangesPanel::selectLine(uint64_t command, const std::string& path) {
  QModelIndex i = m_controller->model()->indexOfLine(command, path);
  if (!i.isValid()) return false;
  m_view->selectionModel()->setCurrentIndex(i, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  m_view->scrollTo(i);
  return true;
}

void ChangesPanel::showPreview() {
  auto p = m_controller->preview(m_view->currentIndex());
  m_title->setText(p.title);
  m_note->setText(p.note);
  m_diff->clear();
  if (!p.hasDiff) return;
  QTextCursor c(m_diff->document());
  bool first = true;
  for (const DiffLine& l : p.diff) {
    QTextBlockFormat bf;
    QTextCharFormat cf;
    cf.setFont(monospaceFont());
    switch (l.kind) {
      case '-': bf.setBackground(QColor(0xff, 0xeb, 0xe9)); break;
      case '+': bf.setBackground(QColor(0xda, 0xfb, 0xe1)); break;
      case '@':
        bf.setBackground(QColor(0xdd, 0xf4, 0xff));
        cf.setForeground(QColor(0x57, 0x60, 0x6a));
        break;
      default: break;
    }
    if (!first) c.insertBlock();
    first = false;
    c.setBlockFormat(bf);
    QString text = l.kind == '@' ? qs(l.text) : QString(QLatin1Char(l.kind)) + QLatin1Char(' ') + safe(l.text);
    c.insertText(text, cf);
  }
  if (p.diff.empty()) c.insertText(tr("(the same bytes as before)"));
  m_diff->moveCursor(QTextCursor::Start);
}

void ChangesPanel::updateButtons() {
  QString why;
  bool can = m_controller->canRestore(&why);
  bool selected = m_view->selectionModel() && !m_view->selectionModel()->selectedRows().isEmpty();
  m_restore->setEnabled(can && selected);
  m_restore->setToolTip(can ? tr("Gives back what the selected changes destroyed. Files changed since the session "
                                 "are refused unless you force it.")
                            : why);
}

void ChangesPanel::restoreSelected() {
  QString why;
  if (!m_controller->canRestore(&why)) {
    emit status(why);
    return;
  }
  keep::UndoRequest request = m_controller->requestFor(m_view->selectionModel()->selectedRows());
  auto dry = m_controller->dryRun(request);
  if (!dry) {
    emit status(qs(dry.error().message));
    return;
  }
  keep::UndoRequest forcedRequest = request;
  forcedRequest.force = true;
  auto forcedDry = m_controller->dryRun(forcedRequest);
  bool forceHelps = forcedDry && actionCount(*forcedDry) > actionCount(*dry);

  auto* d = new QDialog(this);
  d->setAttribute(Qt::WA_DeleteOnClose);
  d->setWindowTitle(tr("Restore"));
  d->resize(1000, 440);
  auto* v = new QVBoxLayout(d);
  auto* head = new QLabel(tr("<b>%1</b>").arg(undoSummary(*dry, true).toHtmlEscaped()), d);
  head->setWordWrap(true);
  v->addWidget(head);
  if (conflicts(*dry))
    v->addWidget(new QLabel(tr("Conflicts are files that changed after the session: Restore leaves them as they are "
                               "now. Force overwrites them, and what they hold now is lost."),
                            d));
  auto* list = new QTreeWidget(d);
  list->setRootIsDecorated(false);
  list->setColumnCount(3);
  list->setHeaderLabels({tr("Action"), tr("Path"), tr("Why")});
  const int em = list->fontMetrics().horizontalAdvance(QLatin1Char('m'));
  list->setColumnWidth(0, em * 12);
  list->setColumnWidth(1, em * 28);
  const std::string cwd = m_controller->session()->summary.start.cwd;
  for (const keep::Step& s : dry->steps) {
    if (s.action == keep::Action::Nothing) continue;
    QString path = shortPath(s.candidate.path, cwd);
    if (s.candidate.move_back) path += QStringLiteral("  →  ") + shortPath(s.candidate.move_to, cwd);
    // The planner speaks the command line's words; here the button is Force.
    QString reason = qs(s.reason).replace(QStringLiteral("--force"), QStringLiteral("Force"));
    auto* item = new QTreeWidgetItem({actionWords(s), path, reason});
    item->setToolTip(1, safe(s.candidate.path));
    item->setToolTip(2, reason);
    item->setFont(1, monospaceFont());
    Tone tone = s.action == keep::Action::Conflict || s.action == keep::Action::Cannot ? Tone::Deny
                : s.action == keep::Action::SkipCreated                                ? Tone::Log
                                                                                       : Tone::Good;
    item->setForeground(0, QBrush(toneForeground(tone)));
    list->addTopLevelItem(item);
  }
  v->addWidget(list, 1);
  auto* buttons = new QDialogButtonBox(d);
  auto* go = buttons->addButton(tr("Restore"), QDialogButtonBox::AcceptRole);
  go->setEnabled(actionCount(*dry) > 0);
  go->setDefault(true);
  auto* force = buttons->addButton(tr("Force…"), QDialogButtonBox::ActionRole);
  force->setEnabled(forceHelps);
  force->setToolTip(tr("Overwrite the files that changed after the session (asks first)"));
  buttons->addButton(QDialogButtonBox::Cancel);
  v->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::rejected, d, &QDialog::reject);
  connect(go, &QPushButton::clicked, d, [this, d, request] {
    d->accept();
    carryOut(request, false);
  });
  connect(
      force, &QPushButton::clicked, d,
      [this, d, request, n = forcedDry ? actionCount(*forcedDry) - actionCount(*dry) : 0] {
        auto answer = QMessageBox::warning(
            d, tr("Force the restore?"),
            tr("%1 changed after the session. Forcing overwrites them with their state before it; what they hold now "
               "is lost and cannot be undone.")
                .arg(counted(n, "file", "files")),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Yes) return;
        d->accept();
        carryOut(request, true);
      });
  emit restoreDialogOpened(d);
  d->open();
}

void ChangesPanel::carryOut(const keep::UndoRequest& request, bool force) {
  keep::UndoRequest r = request;
  r.force = force;
  QString recordError;
  auto report = m_controller->restore(r, &recordError);
  if (!report) {
    m_summary->setText(tr("Restore failed: %1").arg(qs(report.error().message)));
    emit status(qs(report.error().message));
    return;
  }
  QString summary = undoSummary(*report, false);
  m_summary->setText(tr("Restored: %1.").arg(summary) +
                     (recordError.isEmpty() ? QString() : QStringLiteral("  ") + recordError));
  emit status(summary);
  emit restored(summary);
}

}  // namespace cb::gui
