#include "gui/hostspanel.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>
#include <set>

#include "gui/sessionhub.h"
#include "gui/sessionpage.h"
#include "gui/text.h"

namespace cb::gui {
namespace {

constexpr size_t kWhoContactedLimit = 5000;
constexpr qint64 kLookupsEveryMs = 1000;

}  // namespace

HostsPanel::HostsPanel(AuditDatabase* db, QWidget* parent)
    : QWidget(parent), m_db(db), m_own(new HostModel(HostModel::kDefaultCapacity, this)) {
  m_sorted = new QSortFilterProxyModel(this);
  m_sorted->setSortRole(HostModel::SortKeyRole);
  m_sorted->setDynamicSortFilter(true);
  m_whoModel = new WhoTouchedModel(WhoTouchedModel::Subject::Host, this);

  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(0, 8, 0, 0);
  m_summary = new QLabel(this);
  m_summary->setStyleSheet(QStringLiteral("color: #57606a;"));
  m_summary->setTextFormat(Qt::PlainText);
  v->addWidget(m_summary);

  auto* split = new QSplitter(Qt::Vertical, this);
  m_hostView = new QTableView(split);
  setUpEventTable(m_hostView);
  m_hostView->setSelectionMode(QAbstractItemView::SingleSelection);
  m_hostView->setTextElideMode(Qt::ElideRight);
  m_hostView->setModel(m_sorted);
  m_hostView->setSortingEnabled(true);
  m_hostView->horizontalHeader()->setSortIndicatorShown(true);

  auto* lower = new QWidget(split);
  auto* lv = new QVBoxLayout(lower);
  lv->setContentsMargins(0, 6, 0, 0);
  auto* title = new QLabel(tr("<b>Who contacted this host?</b>"), lower);
  lv->addWidget(title);
  auto* bar = new QHBoxLayout;
  m_whoHost = new QLineEdit(lower);
  m_whoHost->setFont(monospaceFont());
  m_whoHost->setPlaceholderText(tr("A host name, *.example.com, an address (10.0.0.7, ::1) or a block (10.0.0.0/8)"));
  m_whoHost->setClearButtonEnabled(true);
  m_whoAll = new QCheckBox(tr("All sessions in the database"), lower);
  auto* go = new QPushButton(tr("Find"), lower);
  bar->addWidget(m_whoHost, 1);
  bar->addWidget(m_whoAll);
  bar->addWidget(go);
  lv->addLayout(bar);
  m_whoStatus = new QLabel(
      tr("Every connection to the host — and the chain of processes behind each (expand a row).  Double-click a host "
         "above to ask about it."),
      lower);
  m_whoStatus->setStyleSheet(QStringLiteral("color: #57606a;"));
  m_whoStatus->setTextFormat(Qt::PlainText);
  m_whoStatus->setWordWrap(true);
  lv->addWidget(m_whoStatus);
  m_whoView = new QTreeView(lower);
  m_whoView->setModel(m_whoModel);
  m_whoView->setUniformRowHeights(true);
  m_whoView->setTextElideMode(Qt::ElideMiddle);
  m_whoView->setStyleSheet(QStringLiteral(
      "QTreeView { border: 1px solid #d0d7de; selection-background-color: #dbe7fb; selection-color: #1f2328; }"
      "QHeaderView::section { background: #f6f8fa; border: none; border-bottom: 1px solid #d0d7de;"
      " padding: 4px 6px; font-weight: bold; color: #57606a; }"));
  const int em = m_whoView->fontMetrics().horizontalAdvance(QLatin1Char('m'));
  m_whoView->setColumnWidth(WhoTouchedModel::TimeColumn, em * 14);
  m_whoView->setColumnWidth(WhoTouchedModel::SessionColumn, em * 6);
  m_whoView->setColumnWidth(WhoTouchedModel::ProcessColumn, em * 12);
  m_whoView->setColumnWidth(WhoTouchedModel::ActionColumn, em * 8);
  m_whoView->setColumnWidth(WhoTouchedModel::DecisionColumn, em * 10);
  lv->addWidget(m_whoView, 1);
  split->addWidget(m_hostView);
  split->addWidget(lower);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  v->addWidget(split, 1);

  auto run = [this] { whoContacted(m_whoHost->text(), m_whoAll->isChecked()); };
  connect(go, &QPushButton::clicked, this, run);
  connect(m_whoHost, &QLineEdit::returnPressed, this, run);
  connect(m_hostView, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    QModelIndex src = m_sorted->mapToSource(i);
    if (src.isValid() && m_shown) whoContacted(m_shown->queryFor(src.row()), m_whoAll->isChecked());
  });
  bind(m_own);
}

void HostsPanel::bind(HostModel* m) {
  if (m_shown == m) return;
  if (m_shown) disconnect(m_shown, &HostModel::updated, this, &HostsPanel::updateSummary);
  m_shown = m;
  m_sorted->setSourceModel(m);
  connect(m, &HostModel::updated, this, &HostsPanel::updateSummary);
  // Order of first contact until the user sorts by another column.
  m_hostView->sortByColumn(HostModel::FirstColumn, Qt::AscendingOrder);
  const QFontMetrics fm = m_hostView->fontMetrics();
  const int em = fm.horizontalAdvance(QLatin1Char('m'));
  const int pad = 24;
  QFont mono = monospaceFont();
  const int monoEm = QFontMetrics(mono).horizontalAdvance(QLatin1Char('m'));
  m_hostView->setColumnWidth(HostModel::HostColumn, monoEm * 22 + pad);
  m_hostView->setColumnWidth(HostModel::PortColumn, fm.horizontalAdvance(QStringLiteral("65535")) + pad);
  m_hostView->setColumnWidth(HostModel::ProtoColumn, fm.horizontalAdvance(QStringLiteral("Proto")) + pad);
  m_hostView->setColumnWidth(HostModel::AddressesColumn, monoEm * 18 + pad);
  m_hostView->setColumnWidth(HostModel::ProcessesColumn, em * 24 + pad);
  m_hostView->setColumnWidth(HostModel::FirstColumn, fm.horizontalAdvance(QStringLiteral("00:00:00.000")) + pad);
  m_hostView->setColumnWidth(HostModel::LastColumn, fm.horizontalAdvance(QStringLiteral("00:00:00.000")) + pad);
  m_hostView->setColumnWidth(HostModel::EventsColumn, fm.horizontalAdvance(QStringLiteral("Events")) + pad);
  m_hostView->setColumnWidth(HostModel::DeniedColumn, fm.horizontalAdvance(QStringLiteral("Denied")) + pad);
  updateSummary();
}

void HostsPanel::showStored(int64_t session) {
  bool same = !m_live && m_session == session;
  m_live = nullptr;
  m_session = session;
  bind(m_own);
  if (!same) m_whoModel->setTouches({});
  m_stale = true;
  if (isVisible()) load();
}

void HostsPanel::showLive(LiveSession* live, std::optional<int64_t> stored) {
  if (m_live != live) {
    m_live = live;
    m_whoModel->setTouches({});
    m_lookupsRead.invalidate();
  }
  m_session = stored;
  m_stale = false;
  bind(live->hostModel());
  // Lookups are not in the live messages; the database has them.
  if (stored && m_db->isOpen() && isVisible() &&
      (!m_lookupsRead.isValid() || m_lookupsRead.elapsed() >= kLookupsEveryMs)) {
    QString error;
    live->hostModel()->addLookups(m_db->lookups(*stored, &error));
    m_lookupsRead.start();
  }
}

void HostsPanel::clear(const QString& why) {
  m_live = nullptr;
  m_session.reset();
  m_stale = false;
  m_own->clear();
  bind(m_own);
  m_whoModel->setTouches({});
  m_summary->setText(why);
}

void HostsPanel::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (m_stale) load();
  if (m_live) showLive(m_live, m_session);
}

void HostsPanel::load() {
  m_stale = false;
  if (!m_session || !m_db->isOpen()) return;
  QString error;
  m_own->setHosts(m_db->hosts(*m_session, &error));
  if (!error.isEmpty()) emit status(error);
}

void HostsPanel::updateSummary() {
  if (!m_shown) return;
  uint64_t events = 0, denied = 0, refused = 0;
  int hosts = 0;
  for (int r = 0; r < m_shown->rowCount(); ++r) {
    const db::HostContact& h = m_shown->host(r);
    if (h.proto == "dns") {
      ++refused;
      continue;
    }
    ++hosts;
    events += h.events;
    denied += h.denied;
  }
  QStringList parts;
  parts << counted(static_cast<uint64_t>(hosts), "host and port", "hosts and ports")
        << counted(events, "network event", "network events") << tr("%1 denied").arg(count(denied));
  if (refused) parts << counted(refused, "name refused at resolution", "names refused at resolution");
  QString text = parts.join(QStringLiteral("  ·  "));
  if (m_shown->isLive()) text += tr("  ·  live");
  if (m_shown->dropped())
    text += tr("  ·  %1 not shown (the live view keeps %2 hosts; the database has them)")
                .arg(count(m_shown->dropped()), count(m_shown->capacity()));
  if (m_shown->rowCount() == 0 && !m_stale) text = tr("No hosts contacted: no network event with an address.");
  m_summary->setText(text);
}

std::vector<Touch> HostsPanel::whoContactedLive(const HostPattern& p) const {
  std::vector<Touch> out;
  if (!m_live) return out;
  EventModel* events = m_live->eventModel();
  ProcessTreeModel* procs = m_live->processModel();
  for (int i = 0; i < events->rowCount() && out.size() < kWhoContactedLimit; ++i) {
    const EventItem& it = events->item(i);
    if (!(db::kContactActions & bit(it.row.ev.action)) || !db::contacted(p, it.row.ev.net)) continue;
    Touch t;
    t.event = it;
    if (it.row.ev.proc)
      for (const auto* sp : procs->chain(it.row.ev.proc->proc_id)) t.chain.push_back(*sp);
    out.push_back(std::move(t));
  }
  return out;
}

void HostsPanel::whoContacted(const QString& input, bool allSessions) {
  m_whoHost->setText(input);
  m_whoAll->setChecked(allSessions);
  std::string text = bytes(input.trimmed());
  if (text.empty()) return;
  auto pattern = db::parse_host_query(text);
  if (!pattern) {
    m_whoStatus->setText(qs(pattern.error().message));
    return;
  }
  std::vector<Touch> touches;
  QString error;
  // The database has every event; a live session not (yet) in the open
  // database is searched in memory.
  if (m_db->isOpen() && (allSessions || m_session)) {
    std::optional<int64_t> session;
    if (!allSessions) session = m_session;
    touches = m_db->whoContacted(session, text, kWhoContactedLimit, &error);
  } else {
    touches = whoContactedLive(*pattern);
  }
  const WhoCounts found = showTouches(*m_whoModel, *m_whoView, std::move(touches));
  if (!error.isEmpty())
    m_whoStatus->setText(error);
  else if (found.events == 0)
    m_whoStatus->setText(tr("Nothing contacted %1.").arg(input.trimmed()));
  else
    m_whoStatus->setText(tr("%1 with %2 in %3, %4 denied or asked.  Expand an event for the process that made it "
                            "and its ancestors.")
                             .arg(counted(found.events, "network event", "network events"), input.trimmed(),
                                  counted(found.sessions, "session", "sessions"), count(found.flagged)));
}

}  // namespace cb::gui
