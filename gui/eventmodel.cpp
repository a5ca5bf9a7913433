#include "gui/eventmodel.h"

#include <QBrush>
#include <QFont>
#include <algorithm>
#include <chrono>
#include <limits>

#include "gui/text.h"

namespace cb::gui {

EventModel::EventModel(size_t capacity, QObject* parent)
    : QAbstractTableModel(parent), m_capacity(capacity ? capacity : 1) {
  m_timer.setInterval(kDefaultBatchMs);
  m_timer.setSingleShot(true);
  connect(&m_timer, &QTimer::timeout, this, [this] {
    auto now = std::chrono::system_clock::now().time_since_epoch();
    flushUpTo(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count() - m_holdNs);
    if (!m_pending.empty()) m_timer.start();
  });
}

void EventModel::setBatchInterval(int ms) { m_timer.setInterval(ms); }

void EventModel::enqueue(EventItem item) {
  m_pending.push_back(std::move(item));
  if (!m_timer.isActive()) m_timer.start();
}

void EventModel::flush() { flushUpTo(std::numeric_limits<int64_t>::max()); }

void EventModel::flushUpTo(int64_t cutoffNs) {
  m_timer.stop();
  if (m_pending.empty()) return;
  auto byTime = [](const EventItem& a, const EventItem& b) { return a.row.ev.ts_ns < b.row.ev.ts_ns; };
  std::stable_sort(m_pending.begin(), m_pending.end(), byTime);
  auto ready =
      std::find_if(m_pending.begin(), m_pending.end(), [&](const EventItem& e) { return e.row.ev.ts_ns > cutoffNs; });
  if (ready == m_pending.begin()) return;
  std::vector<EventItem> batch(std::make_move_iterator(m_pending.begin()), std::make_move_iterator(ready));
  m_pending.erase(m_pending.begin(), ready);
  if (batch.size() > m_capacity) {
    // A burst larger than the whole table: only its newest rows could show.
    size_t skip = batch.size() - m_capacity;
    m_evicted += skip;
    batch.erase(batch.begin(), batch.begin() + static_cast<ptrdiff_t>(skip));
  }
  size_t overflow = m_rows.size() + batch.size() > m_capacity ? m_rows.size() + batch.size() - m_capacity : 0;
  if (overflow > 0) {
    // Remove before inserting, as qBittorrent's log model does: a view must
    // never see more rows than exist.
    beginRemoveRows(QModelIndex(), 0, static_cast<int>(overflow) - 1);
    m_rows.erase(m_rows.begin(), m_rows.begin() + static_cast<ptrdiff_t>(overflow));
    m_evicted += overflow;
    endRemoveRows();
  }
  int first = static_cast<int>(m_rows.size());
  beginInsertRows(QModelIndex(), first, first + static_cast<int>(batch.size()) - 1);
  for (auto& e : batch) m_rows.push_back(std::move(e));
  endInsertRows();
  emit rowsAppended(static_cast<int>(batch.size()));
}

void EventModel::reset(std::vector<EventItem> items) {
  // The database's order is the order events were recorded in, not quite
  // the order they happened in.
  std::stable_sort(items.begin(), items.end(),
                   [](const EventItem& a, const EventItem& b) { return a.row.ev.ts_ns < b.row.ev.ts_ns; });
  beginResetModel();
  m_pending.clear();
  m_rows.assign(std::make_move_iterator(items.begin()), std::make_move_iterator(items.end()));
  m_evicted = 0;
  endResetModel();
}

void EventModel::clear() { reset({}); }

int EventModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int EventModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant EventModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
  switch (section) {
    case TimeColumn: return tr("Time");
    case PidColumn: return tr("PID");
    case ProcessColumn: return tr("Process");
    case ActionColumn: return tr("Action");
    case DecisionColumn: return tr("Decision");
    case RuleColumn: return tr("Rule");
    case PathColumn: return tr("Path → target");
  }
  return QVariant();
}

QVariant EventModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return QVariant();
  const EventItem& it = m_rows[static_cast<size_t>(index.row())];
  const EventRow& r = it.row;
  const Event& ev = r.ev;
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case TimeColumn: return timeOfDay(ev.ts_ns);
        case PidColumn: return ev.pid;
        case ProcessColumn: return ev.proc ? safe(ev.proc->comm) : QString();
        case ActionColumn: {
          QString a = qs(action_name(ev.action));
          return r.count > 1 ? tr("%1 ×%2").arg(a).arg(r.count) : a;
        }
        case DecisionColumn: return decisionText(r);
        case RuleColumn:
          if (r.verdict.rule_id.empty()) return tr("(default)");
          return r.verdict.builtin ? tr("%1 (built-in)").arg(qs(r.verdict.rule_id)) : qs(r.verdict.rule_id);
        case PathColumn: {
          QString p = shortPath(ev.path, m_cwd);
          if (!ev.target.empty()) p += QStringLiteral("  →  ") + shortPath(ev.target, m_cwd);
          return p;
        }
      }
      break;
    case Qt::ToolTipRole: {
      QString tip = tr("%1  %2 by %3 (pid %4)\n%5")
                        .arg(dateTime(ev.ts_ns), qs(action_name(ev.action)), ev.proc ? safe(ev.proc->comm) : QString(),
                             QString::number(ev.pid), safe(ev.path));
      if (!ev.target.empty()) tip += tr("\n→ %1").arg(safe(ev.target));
      tip += tr("\nsyscall: %1").arg(qs(ev.syscall));
      if (r.result_errno > 0) tip += tr(" (errno %1)").arg(r.result_errno);
      if (!r.verdict.rule_id.empty()) tip += tr("\nrule: %1").arg(qs(r.verdict.rule_id));
      if (!r.verdict.message.empty()) tip += tr("\n%1").arg(qs(r.verdict.message));
      if (it.approval) tip += tr("\nanswered %1 by %2").arg(qs(it.approval->answer), qs(it.approval->answered_by));
      if (!r.enforced) tip += tr("\nobserve mode: recorded, not enforced");
      return tip;
    }
    case Qt::ForegroundRole: {
      Tone t = toneOf(r);
      if (index.column() == DecisionColumn || t == Tone::Log) return QBrush(toneForeground(t));
      // The policy's default is the unremarkable case: say it quietly.
      if (index.column() == RuleColumn && r.verdict.rule_id.empty()) return QBrush(toneForeground(Tone::Log));
      return QVariant();
    }
    case Qt::BackgroundRole: {
      QColor c = toneBackground(toneOf(r));
      return c.isValid() ? QVariant(QBrush(c)) : QVariant();
    }
    case Qt::FontRole:
      if (index.column() == PathColumn) return monospaceFont();
      if (index.column() == DecisionColumn && toneOf(r) != Tone::Neutral) {
        QFont f;
        f.setBold(true);
        return f;
      }
      break;
    case ToneRole: return static_cast<int>(toneOf(r));
    case ProcIdRole: return ev.proc ? QVariant::fromValue<qulonglong>(ev.proc->proc_id) : QVariant();
    case SortKeyRole: return QVariant::fromValue<qlonglong>(ev.ts_ns);
  }
  return QVariant();
}

// ---------------------------------------------------------------- filtering --

bool decisionMatches(const EventRow& r, const QString& d) {
  if (d.isEmpty()) return true;
  if (d == QLatin1String("deny")) return !r.allowed || (!r.enforced && r.verdict.decision == Decision::Deny);
  if (d == QLatin1String("allow")) return r.allowed && !(!r.enforced && r.verdict.decision == Decision::Deny);
  if (d == QLatin1String("ask")) return r.verdict.decision == Decision::Ask;
  if (d == QLatin1String("log")) return r.verdict.decision == Decision::Log;
  return true;
}

EventFilterModel::EventFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
  // No sorting: the source is already in time order, and re-sorting on every
  // batch is exactly what a live table must not do.
  setDynamicSortFilter(true);
}

void EventFilterModel::setAction(const QString& action) {
  m_actions = action.isEmpty() ? 0 : parse_action_or_group(bytes(action));
  m_actionUnknown = !action.isEmpty() && m_actions == 0;
  invalidateFilter();
}

void EventFilterModel::setDecision(const QString& decision) {
  m_decision = decision;
  invalidateFilter();
}

void EventFilterModel::setProcess(const QString& text) {
  m_process = text.trimmed();
  m_processBytes = bytes(m_process);
  bool ok = false;
  int pid = m_process.toInt(&ok);
  m_pid = ok ? pid : 0;
  invalidateFilter();
}

void EventFilterModel::setPath(const QString& text) {
  m_pathText = bytes(text.trimmed());
  m_glob.reset();
  m_pathError.clear();
  if (m_pathText.find_first_of("*?[{") != std::string::npos) {
    std::string pattern = m_pathText;
    // "*.o" means any .o anywhere, as a user would expect.
    if (pattern[0] != '/' && pattern.rfind("**", 0) != 0) pattern = "**/" + pattern;
    auto g = Glob::compile(pattern);
    if (g)
      m_glob = std::move(*g);
    else
      m_pathError = qs(g.error().message);
  }
  invalidateFilter();
}

void EventFilterModel::setProcIds(std::set<uint64_t> ids) {
  m_procIds = std::move(ids);
  invalidateFilter();
}

bool EventFilterModel::isFiltering() const {
  return m_actions || m_actionUnknown || !m_decision.isEmpty() || !m_process.isEmpty() || !m_pathText.empty() ||
         !m_procIds.empty();
}

std::vector<int> EventFilterModel::sourceRows() const {
  std::vector<int> rows;
  rows.reserve(static_cast<size_t>(rowCount()));
  for (int i = 0; i < rowCount(); ++i) rows.push_back(mapToSource(index(i, 0)).row());
  return rows;
}

bool EventFilterModel::filterAcceptsRow(int row, const QModelIndex& parent) const {
  if (parent.isValid()) return false;
  auto* m = static_cast<const EventModel*>(sourceModel());
  const EventRow& r = m->item(row).row;
  const Event& ev = r.ev;
  if (m_actionUnknown || (m_actions && !(m_actions & bit(ev.action)))) return false;
  if (!decisionMatches(r, m_decision)) return false;
  if (!m_procIds.empty() && (!ev.proc || !m_procIds.count(ev.proc->proc_id))) return false;
  if (!m_process.isEmpty()) {
    bool hit = (m_pid && ev.pid == m_pid) || (ev.proc && ev.proc->comm.find(m_processBytes) != std::string::npos);
    if (!hit) return false;
  }
  if (!m_pathText.empty()) {
    if (m_glob) {
      if (!m_glob->match(ev.path) && (ev.target.empty() || !m_glob->match(ev.target))) return false;
    } else if (m_pathError.isEmpty()) {
      if (ev.path.find(m_pathText) == std::string::npos && ev.target.find(m_pathText) == std::string::npos)
        return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace cb::gui
