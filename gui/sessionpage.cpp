#include "gui/sessionpage.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>

#include "db/json.h"
#include "gui/changespanel.h"
#include "gui/hostspanel.h"
#include "gui/text.h"
#include "policy/glob.h"

namespace cb::gui {
namespace {

constexpr size_t kReviewLimit = 200000;
constexpr size_t kWhoTouchedLimit = 5000;

QString pill(const QString& text, const char* bg, const char* fg) {
  return QStringLiteral("<span style='background:%1; color:%2; font-weight:bold;'>&nbsp;%3&nbsp;</span>")
      .arg(QLatin1String(bg), QLatin1String(fg), text.toHtmlEscaped());
}

// What a user types into "who touched": a path (exact), a directory ending
// in '/' (everything below), or a glob.
std::string toGlob(const QString& input) {
  std::string s = bytes(input.trimmed());
  if (s.empty()) return s;
  if (s.find_first_of("*?[{") != std::string::npos) return s;
  if (s.size() > 1 && s.back() == '/') return Glob::escape(s.substr(0, s.size() - 1)) + "/**";
  return Glob::escape(s);
}

}  // namespace

void setUpEventTable(QTableView* v) {
  v->setSelectionBehavior(QAbstractItemView::SelectRows);
  v->setSelectionMode(QAbstractItemView::ExtendedSelection);
  v->setWordWrap(false);
  v->setTextElideMode(Qt::ElideMiddle);
  v->setShowGrid(false);
  v->setAlternatingRowColors(false);
  v->verticalHeader()->hide();
  v->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  v->verticalHeader()->setDefaultSectionSize(v->fontMetrics().height() + 8);
  v->horizontalHeader()->setHighlightSections(false);
  v->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  v->horizontalHeader()->setStretchLastSection(true);
  v->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  v->setStyleSheet(QStringLiteral(
      "QTableView { border: 1px solid #d0d7de; selection-background-color: #dbe7fb; selection-color: #1f2328; }"
      "QHeaderView::section { background: #f6f8fa; border: none; border-bottom: 1px solid #d0d7de;"
      " padding: 4px 6px; font-weight: bold; color: #57606a; }"));
}

static void setEventColumnWidths(QTableView* v) {
  // Sized to what the cells hold, so the words that matter are never elided.
  const QFontMetrics fm = v->fontMetrics();
  QFont bold = v->font();
  bold.setBold(true);
  const QFontMetrics bm(bold);
  const int pad = 24;
  const int em = fm.horizontalAdvance(QLatin1Char('m'));
  v->setColumnWidth(EventModel::TimeColumn, fm.horizontalAdvance(QStringLiteral("00:00:00.000")) + pad);
  v->setColumnWidth(EventModel::PidColumn, fm.horizontalAdvance(QStringLiteral("4194304")) + pad);
  v->setColumnWidth(EventModel::ProcessColumn, em * 8 + pad);
  v->setColumnWidth(EventModel::ActionColumn, fm.horizontalAdvance(QStringLiteral("file.truncate ×99")) + pad);
  v->setColumnWidth(EventModel::DecisionColumn, bm.horizontalAdvance(QStringLiteral("asked → allowed")) + pad);
  v->setColumnWidth(EventModel::RuleColumn, em * 12 + pad);
}

SessionPage::SessionPage(AuditDatabase* db, QWidget* parent)
    : QWidget(parent),
      m_db(db),
      m_ownEvents(new EventModel(kReviewLimit, this)),
      m_ownProcs(new ProcessTreeModel(this)) {
  m_filter = new EventFilterModel(this);
  m_procFilter = new EventFilterModel(this);
  m_whoModel = new WhoTouchedModel(this);

  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 6, 0, 0);
  v->setSpacing(6);
  buildHeader();
  v->addWidget(m_title);
  v->addWidget(m_command);
  v->addWidget(m_facts);
  v->addWidget(m_badges);
  v->addWidget(m_degraded);
  m_tabs = new QTabWidget(this);
  m_tabs->setDocumentMode(true);
  m_tabs->addTab(buildEventsTab(), tr("Events"));
  m_tabs->addTab(buildProcessesTab(), tr("Process tree"));
  m_tabs->addTab(buildWhoTab(), tr("Who touched this path?"));
  m_hosts = new HostsPanel(m_db, this);
  m_tabs->addTab(m_hosts, tr("Hosts"));
  connect(m_hosts, &HostsPanel::status, this, &SessionPage::status);
  m_changes = new ChangesPanel(this);
  m_tabs->addTab(m_changes, tr("Changes"));
  connect(m_changes, &ChangesPanel::status, this, &SessionPage::status);
  v->addWidget(m_tabs, 1);
  showNothing(tr("Select a session above."));
}

void SessionPage::buildHeader() {
  m_title = new QLabel(this);
  QFont f = m_title->font();
  f.setPointSizeF(f.pointSizeF() * 1.3);
  f.setBold(true);
  m_title->setFont(f);
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_command = new QLabel(this);
  m_command->setFont(monospaceFont());
  m_command->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_command->setWordWrap(true);
  m_facts = new QLabel(this);
  m_facts->setStyleSheet(QStringLiteral("color: #57606a;"));
  m_facts->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_facts->setWordWrap(true);
  m_badges = new QLabel(this);
  m_badges->setTextFormat(Qt::RichText);
  m_degraded = new QLabel(this);
  m_degraded->setWordWrap(true);
  m_degraded->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_degraded->setStyleSheet(
      QStringLiteral("QLabel { background: #fff8e6; border: 1px solid #f0d48a; border-radius: 6px; padding: 6px 10px; "
                     "color: #3d2c00; }"));
}

QWidget* SessionPage::buildEventsTab() {
  auto* w = new QWidget(this);
  auto* v = new QVBoxLayout(w);
  v->setContentsMargins(0, 8, 0, 0);
  auto* bar = new QHBoxLayout;
  bar->setSpacing(6);
  m_action = new QComboBox(w);
  m_action->addItem(tr("Any action"), QString());
  for (auto g : {"file.mutate", "file.*", "proc.*", "net.*", "sys.*"})
    m_action->addItem(QString::fromLatin1(g), QString::fromLatin1(g));
  m_action->insertSeparator(m_action->count());
  for (int a = 0; a < static_cast<int>(Action::Count); ++a) {
    QString n = qs(action_name(static_cast<Action>(a)));
    m_action->addItem(n, n);
  }
  m_decision = new QComboBox(w);
  m_decision->addItem(tr("Any decision"), QString());
  m_decision->addItem(tr("Denied"), QStringLiteral("deny"));
  m_decision->addItem(tr("Asked"), QStringLiteral("ask"));
  m_decision->addItem(tr("Allowed"), QStringLiteral("allow"));
  m_decision->addItem(tr("Logged"), QStringLiteral("log"));
  m_process = new QLineEdit(w);
  m_process->setPlaceholderText(tr("Process name or pid"));
  m_process->setClearButtonEnabled(true);
  m_process->setMaximumWidth(200);
  m_path = new QLineEdit(w);
  m_path->setPlaceholderText(tr("Path contains…  or a glob: **/*.o, /home/u/src/**"));
  m_path->setClearButtonEnabled(true);
  m_path->setFont(monospaceFont());
  auto* clear = new QPushButton(tr("Clear filters"), w);
  m_shown = new QLabel(w);
  m_shown->setStyleSheet(QStringLiteral("color: #57606a;"));
  bar->addWidget(m_action);
  bar->addWidget(m_decision);
  bar->addWidget(m_process);
  bar->addWidget(m_path, 1);
  bar->addWidget(clear);
  v->addLayout(bar);

  m_eventView = new QTableView(w);
  setUpEventTable(m_eventView);
  m_eventView->setModel(m_filter);
  v->addWidget(m_eventView, 1);
  // Why the selected event was decided as it was: what `cottonbox why`
  // says, for events read from the database.
  m_why = new QLabel(w);
  m_why->setFont(monospaceFont());
  m_why->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_why->setTextFormat(Qt::PlainText);
  m_why->setWordWrap(true);
  m_why->setStyleSheet(
      QStringLiteral("QLabel { background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; "
                     "padding: 6px 10px; }"));
  m_why->hide();
  v->addWidget(m_why);
  connect(m_eventView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { showWhy(current); });
  v->addWidget(m_shown);

  // The filters apply to the process tree's events too: "what did tar
  // change" is one filter and one click.
  connect(m_action, &QComboBox::currentIndexChanged, this, [this] {
    for (auto* f : {m_filter, m_procFilter}) f->setAction(m_action->currentData().toString());
    onProcessSelected();
  });
  connect(m_decision, &QComboBox::currentIndexChanged, this, [this] {
    for (auto* f : {m_filter, m_procFilter}) f->setDecision(m_decision->currentData().toString());
    onProcessSelected();
  });
  connect(m_process, &QLineEdit::textChanged, m_filter, &EventFilterModel::setProcess);
  connect(m_path, &QLineEdit::textChanged, this, [this](const QString& t) {
    m_filter->setPath(t);
    m_procFilter->setPath(t);
    onProcessSelected();
    m_path->setToolTip(m_filter->pathError());
    m_path->setStyleSheet(m_filter->pathError().isEmpty() ? QString()
                                                          : QStringLiteral("QLineEdit { color: #b42318; }"));
  });
  connect(clear, &QPushButton::clicked, this, [this] { setFilters(QString(), QString(), QString(), QString()); });

  // Live tables follow the newest rows while the user is at the bottom.
  auto atBottom = std::make_shared<bool>(true);
  connect(m_filter, &QAbstractItemModel::rowsAboutToBeInserted, this, [this, atBottom] {
    auto* sb = m_eventView->verticalScrollBar();
    *atBottom = sb->value() >= sb->maximum() - 2;
  });
  connect(m_filter, &QAbstractItemModel::rowsInserted, this, [this, atBottom] {
    if (m_live && *atBottom) m_eventView->scrollToBottom();
    updateShownCount();
  });
  connect(m_filter, &QAbstractItemModel::rowsRemoved, this, &SessionPage::updateShownCount);
  connect(m_filter, &QAbstractItemModel::modelReset, this, &SessionPage::updateShownCount);
  connect(m_filter, &QAbstractItemModel::layoutChanged, this, &SessionPage::updateShownCount);
  return w;
}

QWidget* SessionPage::buildProcessesTab() {
  auto* split = new QSplitter(Qt::Horizontal, this);
  m_tree = new QTreeView(split);
  m_tree->setUniformRowHeights(true);
  m_tree->setAlternatingRowColors(false);
  m_tree->setTextElideMode(Qt::ElideRight);
  m_tree->header()->setStretchLastSection(true);
  m_tree->setStyleSheet(QStringLiteral(
      "QTreeView { border: 1px solid #d0d7de; selection-background-color: #dbe7fb; selection-color: #1f2328; }"
      "QHeaderView::section { background: #f6f8fa; border: none; border-bottom: 1px solid #d0d7de;"
      " padding: 4px 6px; font-weight: bold; color: #57606a; }"));
  auto* right = new QWidget(split);
  auto* v = new QVBoxLayout(right);
  v->setContentsMargins(6, 0, 0, 0);
  auto* row = new QHBoxLayout;
  m_procTitle = new QLabel(tr("Select a process to see its events."), right);
  m_procTitle->setWordWrap(true);
  m_withChildren = new QCheckBox(tr("with its children"), right);
  m_withChildren->setChecked(true);
  row->addWidget(m_procTitle, 1);
  row->addWidget(m_withChildren);
  v->addLayout(row);
  m_procEvents = new QTableView(right);
  setUpEventTable(m_procEvents);
  m_procEvents->setModel(m_procFilter);
  v->addWidget(m_procEvents, 1);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  split->setSizes({640, 760});
  connect(m_withChildren, &QCheckBox::toggled, this, &SessionPage::onProcessSelected);
  return split;
}

QWidget* SessionPage::buildWhoTab() {
  auto* w = new QWidget(this);
  auto* v = new QVBoxLayout(w);
  v->setContentsMargins(0, 8, 0, 0);
  auto* bar = new QHBoxLayout;
  m_whoPath = new QLineEdit(w);
  m_whoPath->setFont(monospaceFont());
  m_whoPath->setPlaceholderText(tr("A path (/home/u/proj/.git/HEAD), a directory ending in / , or a glob"));
  m_whoPath->setClearButtonEnabled(true);
  m_whoAll = new QCheckBox(tr("All sessions in the database"), w);
  m_whoChanges = new QCheckBox(tr("Changes only"), w);
  m_whoChanges->setToolTip(
      tr("Writes, creations, deletions, renames, truncations, links and attribute changes; no reads"));
  auto* go = new QPushButton(tr("Find"), w);
  go->setDefault(true);
  bar->addWidget(m_whoPath, 1);
  bar->addWidget(m_whoChanges);
  bar->addWidget(m_whoAll);
  bar->addWidget(go);
  v->addLayout(bar);
  m_whoStatus = new QLabel(tr("Every event on the path — and the chain of processes behind each (expand a row)."), w);
  m_whoStatus->setStyleSheet(QStringLiteral("color: #57606a;"));
  v->addWidget(m_whoStatus);
  m_whoView = new QTreeView(w);
  m_whoView->setModel(m_whoModel);
  m_whoView->setUniformRowHeights(true);
  m_whoView->setTextElideMode(Qt::ElideMiddle);
  m_whoView->setStyleSheet(m_tree->styleSheet());
  const int em = m_whoView->fontMetrics().horizontalAdvance(QLatin1Char('m'));
  m_whoView->setColumnWidth(WhoTouchedModel::TimeColumn, em * 14);
  m_whoView->setColumnWidth(WhoTouchedModel::SessionColumn, em * 6);
  m_whoView->setColumnWidth(WhoTouchedModel::ProcessColumn, em * 12);
  m_whoView->setColumnWidth(WhoTouchedModel::ActionColumn, em * 8);
  m_whoView->setColumnWidth(WhoTouchedModel::DecisionColumn, em * 10);
  v->addWidget(m_whoView, 1);
  auto run = [this] { whoTouched(m_whoPath->text(), m_whoAll->isChecked(), m_whoChanges->isChecked()); };
  connect(go, &QPushButton::clicked, this, run);
  connect(m_whoPath, &QLineEdit::returnPressed, this, run);
  return w;
}

void SessionPage::bind(EventModel* events, ProcessTreeModel* procs) {
  m_events = events;
  m_procs = procs;
  m_filter->setSourceModel(events);
  m_procFilter->setSourceModel(events);
  m_procFilter->setProcIds({0});  // nothing until a process is picked
  m_tree->setModel(procs);
  m_tree->expandAll();
  const int em = m_tree->fontMetrics().horizontalAdvance(QLatin1Char('m'));
  m_tree->setColumnWidth(ProcessTreeModel::NameColumn, em * 11);
  m_tree->setColumnWidth(ProcessTreeModel::PidColumn, em * 4 + 12);
  m_tree->setColumnWidth(ProcessTreeModel::ExitColumn, em * 5);
  m_tree->setColumnWidth(ProcessTreeModel::EventsColumn, em * 4 + 12);
  m_tree->setColumnWidth(ProcessTreeModel::DenialsColumn, em * 5);
  // The header has its sections only now that the proxies have a source.
  setEventColumnWidths(m_eventView);
  setEventColumnWidths(m_procEvents);
  // A process's own events table does not need to repeat who it is.
  m_procEvents->hideColumn(EventModel::PidColumn);
  m_procEvents->hideColumn(EventModel::ProcessColumn);
  connect(m_tree->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &SessionPage::onProcessSelected,
          Qt::UniqueConnection);
  disconnect(m_expandOnInsert);
  m_expandOnInsert = connect(procs, &QAbstractItemModel::rowsInserted, m_tree, [this](const QModelIndex& parent) {
    if (parent.isValid()) m_tree->expand(parent);
  });
  m_procTitle->setText(tr("Select a process to see its events."));
  m_whoModel->setTouches({});
  updateShownCount();
}

void SessionPage::showLive(LiveSession* live, const std::optional<db::SessionSummary>& stored) {
  m_why->hide();
  bool same = m_live == live;
  m_live = live;
  m_uuid = live->uuid();
  m_stored = stored;
  if (!same) bind(live->eventModel(), live->processModel());
  m_hosts->showLive(live, stored && m_db->isOpen() ? std::optional<int64_t>(stored->id) : std::nullopt);
  refreshHeader(stored);
  m_tabs->setEnabled(true);
  if (stored && m_db->isOpen())
    m_changes->setSession(m_db->path(), stored->id);
  else
    m_changes->clear(tr("This session is not in the open audit database yet."));
  // After the header has settled, or the last rows end up below the fold.
  if (!same) QTimer::singleShot(0, m_eventView, &QTableView::scrollToBottom);
}

void SessionPage::showStored(const db::SessionSummary& stored) {
  m_why->hide();
  m_live = nullptr;
  m_uuid = qs(stored.start.uuid);
  m_stored = stored;
  QString error;
  bool truncated = false;
  auto items = m_db->events(stored.id, kReviewLimit, &truncated, &error);
  m_truncated = truncated;
  m_ownEvents->setCwd(stored.start.cwd);
  m_ownEvents->reset(std::move(items));
  m_ownProcs->setProcesses(m_db->processes(stored.id, &error));
  m_ownProcs->setLive(false);
  bind(m_ownEvents, m_ownProcs);
  m_hosts->showStored(stored.id);
  refreshHeader(stored);
  m_tabs->setEnabled(true);
  m_changes->setSession(m_db->path(), stored.id);
  if (!error.isEmpty()) emit status(error);
}

void SessionPage::showNothing(const QString& why) {
  m_why->hide();
  m_live = nullptr;
  m_uuid.clear();
  m_stored.reset();
  m_ownEvents->clear();
  m_ownProcs->clear();
  bind(m_ownEvents, m_ownProcs);
  m_title->setText(why);
  m_command->clear();
  m_facts->clear();
  m_badges->clear();
  m_degraded->hide();
  m_hosts->clear(why);
  m_changes->clear(why);
  m_tabs->setEnabled(false);
}

void SessionPage::refreshHeader(const std::optional<db::SessionSummary>& storedNow) {
  if (storedNow) m_stored = storedNow;
  const db::SessionSummary* s = m_live ? &m_live->summary() : m_stored ? &*m_stored : nullptr;
  if (!s) return;
  const auto& st = s->start;
  m_title->setText(st.name.empty() ? tr("Session #%1").arg(s->id)
                                   : tr("Session #%1 · %2").arg(s->id).arg(safe(st.name)));
  m_command->setText(commandLine(st.argv));

  const SessionEnd* end = m_live && m_live->end()     ? &*m_live->end()
                          : m_stored && m_stored->end ? &*m_stored->end
                                                      : nullptr;
  uint64_t events = std::max(m_live ? m_live->events() : 0, m_stored ? m_stored->events : 0);
  uint64_t asks = std::max(m_live ? m_live->asks() : 0, m_stored ? m_stored->asks : 0);
  uint64_t denials = std::max(m_live ? m_live->denials() : 0, m_stored ? m_stored->denials : 0);
  QStringList facts;
  facts << tr("in %1").arg(safe(st.cwd));
  facts << tr("%1@%2").arg(safe(st.user), safe(st.hostname));
  facts << tr("started %1").arg(dateTime(st.started_ns));
  if (end) {
    facts << tr("ran %1").arg(duration(end->ended_ns - st.started_ns));
    facts << tr("exit %1").arg(exitText(end->exit_status, end->exit_signal));
  }
  facts << counted(events, "event", "events") + QStringLiteral(" · ") + counted(asks, "ask", "asks") +
               QStringLiteral(" · ") + counted(denials, "denial", "denials");
  m_facts->setText(facts.join(QStringLiteral("   ·   ")));

  QStringList badges;
  bool running =
      m_live ? m_live->state() == LiveSession::State::Running : (m_stored && m_stored->state == SessionState::Running);
  bool lost = m_live && m_live->state() == LiveSession::State::Lost;
  bool aborted = m_live ? m_live->end() && m_live->end()->state == SessionState::Aborted
                        : m_stored && m_stored->state == SessionState::Aborted;
  if (running)
    badges << pill(tr("RUNNING"), "#dafbe1", "#1a7f37");
  else if (lost)
    badges << pill(tr("CONNECTION LOST"), "#ffebe9", "#b42318");
  else if (aborted)
    badges << pill(tr("ABORTED"), "#ffebe9", "#b42318");
  else
    badges << pill(tr("ENDED"), "#eaeef2", "#57606a");
  if (m_live && m_live->state() == LiveSession::State::Running) badges << pill(tr("LIVE"), "#ddf4ff", "#0969da");
  badges << (st.observe ? pill(tr("OBSERVE ONLY"), "#ddf4ff", "#0969da") : pill(tr("ENFORCING"), "#eaeef2", "#57606a"));
  std::vector<std::string> deg = m_live ? m_live->degraded() : m_stored->degraded;
  if (!deg.empty()) badges << pill(tr("DEGRADED"), "#fff3d6", "#8a5a00");
  if (m_live && m_live->pendingAsks() > 0)
    badges << pill(tr("%n waiting for an answer", nullptr, m_live->pendingAsks()), "#fff3d6", "#8a5a00");
  m_badges->setText(badges.join(QStringLiteral("&nbsp;&nbsp;")));

  if (deg.empty()) {
    m_degraded->hide();
  } else {
    QStringList lines;
    for (const auto& d : deg) lines << QStringLiteral("• ") + qs(d).toHtmlEscaped();
    m_degraded->setText(tr("<b>Degraded:</b> this session was guarded with less than full strength.<br>%1")
                            .arg(lines.join(QStringLiteral("<br>"))));
    m_degraded->show();
  }
  updateShownCount();
}

void SessionPage::updateShownCount() {
  if (!m_events) return;
  int shown = m_filter->rowCount();
  int total = m_events->rowCount();
  QString text =
      m_filter->isFiltering()
          ? tr("%1 of %2 events shown").arg(count(static_cast<uint64_t>(shown)), count(static_cast<uint64_t>(total)))
          : tr("%1 events").arg(count(static_cast<uint64_t>(total)));
  if (m_events->evicted()) text += tr("  ·  the live view keeps the newest %1").arg(count(m_events->capacity()));
  if (!m_live && m_truncated) text += tr("  ·  only the first %1 were loaded").arg(count(kReviewLimit));
  if (m_live && m_live->dropped())
    text += tr("  ·  %1 not shown live (the GUI fell behind; the database has them)").arg(count(m_live->dropped()));
  m_shown->setText(text);
}

void SessionPage::setTab(Tab t) { m_tabs->setCurrentIndex(static_cast<int>(t)); }

void SessionPage::setFilters(const QString& action, const QString& decision, const QString& process,
                             const QString& path) {
  m_action->setCurrentIndex(std::max(0, m_action->findData(action)));
  m_decision->setCurrentIndex(std::max(0, m_decision->findData(decision)));
  m_process->setText(process);
  m_path->setText(path);
}

void SessionPage::selectProcess(uint64_t procId) {
  QModelIndex i = m_procs ? m_procs->indexOf(procId) : QModelIndex();
  if (!i.isValid()) return;
  m_tree->setCurrentIndex(i);
  m_tree->scrollTo(i);
}

void SessionPage::onProcessSelected() {
  if (!m_procs) return;
  uint64_t id = m_procs->procIdOf(m_tree->currentIndex());
  if (!id) {
    m_procFilter->setProcIds({0});
    return;
  }
  const db::StoredProcess* p = m_procs->process(id);
  std::set<uint64_t> ids = m_withChildren->isChecked() ? m_procs->subtree(id) : std::set<uint64_t>{id};
  m_procFilter->setProcIds(ids);
  QStringList filters;
  if (!m_action->currentData().toString().isEmpty()) filters << m_action->currentText();
  if (!m_decision->currentData().toString().isEmpty()) filters << m_decision->currentText().toLower();
  if (!m_path->text().isEmpty()) filters << m_path->text();
  m_procTitle->setText(
      tr("<b>%1</b> (pid %2)%3 — %4%5")
          .arg(safe(p->row.comm).toHtmlEscaped())
          .arg(p->row.pid)
          .arg(ids.size() > 1 ? tr(" and %1").arg(counted(ids.size() - 1, "descendant", "descendants")) : QString())
          .arg(counted(static_cast<uint64_t>(m_procFilter->rowCount()), "event", "events"))
          .arg(filters.isEmpty() ? QString()
                                 : tr("  <span style='color:#57606a'>(filtered: %1)</span>")
                                       .arg(filters.join(QStringLiteral(", ")).toHtmlEscaped())));
}

std::vector<Touch> SessionPage::whoTouchedLive(const std::string& pattern, bool changesOnly) const {
  std::vector<Touch> out;
  auto g = Glob::compile(pattern);
  if (!g || !m_events) return out;
  for (int i = 0; i < m_events->rowCount() && out.size() < kWhoTouchedLimit; ++i) {
    const EventItem& it = m_events->item(i);
    const Event& ev = it.row.ev;
    if (!g->match(ev.path) && (ev.target.empty() || !g->match(ev.target))) continue;
    if (changesOnly && !(kFileMutate & bit(ev.action))) continue;
    Touch t;
    t.event = it;
    if (ev.proc && m_procs)
      for (const auto* p : m_procs->chain(ev.proc->proc_id)) t.chain.push_back(*p);
    out.push_back(std::move(t));
  }
  return out;
}

void SessionPage::whoTouched(const QString& input, bool allSessions, bool changesOnly) {
  m_whoPath->setText(input);
  m_whoAll->setChecked(allSessions);
  m_whoChanges->setChecked(changesOnly);
  std::string glob = toGlob(input);
  if (glob.empty()) return;
  if (auto g = Glob::compile(glob); !g) {
    m_whoStatus->setText(tr("Not a valid glob: %1").arg(qs(g.error().message)));
    return;
  }
  std::vector<Touch> touches;
  QString error;
  // The database has every event; a live session not (yet) in the open
  // database is searched in memory.
  if (m_db->isOpen() && (allSessions || m_stored)) {
    std::optional<int64_t> session;
    if (!allSessions && m_stored) session = m_stored->id;
    touches = m_db->whoTouched(session, glob, kWhoTouchedLimit, &error, changesOnly);
  } else {
    touches = whoTouchedLive(glob, changesOnly);
  }
  const WhoCounts found = showTouches(*m_whoModel, *m_whoView, std::move(touches));
  if (!error.isEmpty())
    m_whoStatus->setText(error);
  else if (found.events == 0)
    m_whoStatus->setText(tr("Nothing touched %1.").arg(input.toHtmlEscaped()));
  else
    m_whoStatus->setText(
        tr("%1 on %2 in %3, %4 denied or asked.  Expand an event for the process that did it and its ancestors.")
            .arg(counted(found.events, "event", "events"), input, counted(found.sessions, "session", "sessions"),
                 count(found.flagged)));
  setTab(WhoTouchedTab);
}

QString SessionPage::defaultExportName() const {
  QString id = m_stored ? QString::number(m_stored->id) : m_live ? QString::number(m_live->summary().id) : QString();
  return tr("cottonbox-session-%1-events.jsonl").arg(id);
}

bool SessionPage::exportEvents(const QString& file, QString* error, int* written) const {
  if (!m_events) return false;
  std::vector<int> rows;
  const QModelIndexList sel =
      m_eventView->selectionModel() ? m_eventView->selectionModel()->selectedRows() : QModelIndexList();
  if (!sel.isEmpty()) {
    for (const QModelIndex& i : sel) rows.push_back(m_filter->mapToSource(i).row());
    std::sort(rows.begin(), rows.end());
  } else {
    rows = m_filter->sourceRows();
  }
  QFile f(file);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    if (error) *error = f.errorString();
    return false;
  }
  for (int r : rows) {
    const EventItem& it = m_events->item(r);
    nlohmann::json j = it.id ? db::event_json(db::StoredEvent{it.id, it.session, it.row, it.approval})
                             : db::event_json(it.session, it.row);
    std::string line = j.dump() + "\n";
    if (f.write(line.data(), static_cast<qint64>(line.size())) != static_cast<qint64>(line.size())) {
      if (error) *error = f.errorString();
      return false;
    }
  }
  if (written) *written = static_cast<int>(rows.size());
  return true;
}

void SessionPage::showWhy(const QModelIndex& current) {
  QModelIndex src = current.isValid() ? m_filter->mapToSource(current) : QModelIndex();
  if (!src.isValid() || !m_events || !m_db->isOpen()) {
    m_why->hide();
    return;
  }
  const EventItem& item = m_events->item(src.row());
  if (item.id == 0) {  // a live event: the database has it once committed
    m_why->hide();
    return;
  }
  QString error;
  QString text = m_db->why(item.id, &error);
  m_why->setText(text.isEmpty() ? tr("No explanation: %1").arg(error) : text.trimmed());
  m_why->show();
}

QString SessionPage::whyText() const { return m_why->isHidden() ? QString() : m_why->text(); }

}  // namespace cb::gui
