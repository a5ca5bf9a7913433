#include "gui/sessionlistmodel.h"

#include <QBrush>
#include <QFont>
#include <QSet>
#include <map>

#include "gui/text.h"

namespace cb::gui {

SessionListModel::SessionListModel(QObject* parent) : QAbstractTableModel(parent) {}

int SessionListModel::rowOf(const QString& uuid) const {
  for (size_t i = 0; i < m_rows.size(); ++i)
    if (m_rows[i].uuid == uuid) return static_cast<int>(i);
  return -1;
}

void SessionListModel::insertSorted(Row r) {
  // Newest first.
  auto it = std::find_if(m_rows.begin(), m_rows.end(),
                         [&](const Row& x) { return std::tie(x.startedNs, x.id) < std::tie(r.startedNs, r.id); });
  int at = static_cast<int>(it - m_rows.begin());
  beginInsertRows(QModelIndex(), at, at);
  m_rows.insert(m_rows.begin() + at, std::move(r));
  endInsertRows();
}

void SessionListModel::setStoredSessions(const std::vector<db::SessionSummary>& sessions) {
  std::map<QString, const db::SessionSummary*> byUuid;
  for (const auto& s : sessions) {
    QString key = s.start.uuid.empty() ? QStringLiteral("db:%1").arg(s.id) : qs(s.start.uuid);
    byUuid[key] = &s;
  }
  // Rows that left (another database was opened).
  for (int i = static_cast<int>(m_rows.size()) - 1; i >= 0; --i) {
    Row& r = m_rows[static_cast<size_t>(i)];
    if (byUuid.count(r.uuid)) continue;
    if (r.live) {
      if (r.stored) {
        r.stored.reset();
        emit dataChanged(index(i, 0), index(i, ColumnCount - 1));
      }
      continue;
    }
    beginRemoveRows(QModelIndex(), i, i);
    m_rows.erase(m_rows.begin() + i);
    endRemoveRows();
  }
  for (const auto& [uuid, s] : byUuid) {
    int i = rowOf(uuid);
    if (i >= 0) {
      Row& r = m_rows[static_cast<size_t>(i)];
      bool changed = !r.stored || r.stored->events != s->events || r.stored->state != s->state ||
                     r.stored->denials != s->denials || r.stored->asks != s->asks ||
                     r.stored->degraded.size() != s->degraded.size() || r.stored->end.has_value() != s->end.has_value();
      r.stored = *s;
      r.id = s->id;
      if (changed) emit dataChanged(index(i, 0), index(i, ColumnCount - 1));
      continue;
    }
    Row r;
    r.uuid = uuid;
    r.stored = *s;
    r.startedNs = s->start.started_ns;
    r.id = s->id;
    insertSorted(std::move(r));
  }
}

void SessionListModel::addLive(LiveSession* s) {
  int i = rowOf(s->uuid());
  if (i >= 0) {
    m_rows[static_cast<size_t>(i)].live = s;
    emit dataChanged(index(i, 0), index(i, ColumnCount - 1));
    return;
  }
  Row r;
  r.uuid = s->uuid();
  r.live = s;
  r.startedNs = s->summary().start.started_ns;
  r.id = s->summary().id;
  insertSorted(std::move(r));
}

void SessionListModel::liveChanged(LiveSession* s) {
  int i = rowOf(s->uuid());
  if (i >= 0) emit dataChanged(index(i, 0), index(i, ColumnCount - 1));
}

const db::SessionSummary& SessionListModel::summaryOf(const Row& r) const {
  return r.stored ? *r.stored : r.live->summary();
}

QString SessionListModel::stateText(const Row& r) const {
  if (r.live) {
    switch (r.live->state()) {
      case LiveSession::State::Running: return tr("running");
      case LiveSession::State::Ended:
        return r.live->end() && r.live->end()->state == SessionState::Aborted ? tr("aborted") : tr("ended");
      case LiveSession::State::Lost:
        if (r.stored && r.stored->state != SessionState::Running) break;
        return tr("connection lost");
    }
  }
  if (!r.stored) return QString();
  switch (r.stored->state) {
    case SessionState::Running: return tr("running");
    case SessionState::Ended: return tr("ended");
    case SessionState::Aborted: return tr("aborted");
  }
  return QString();
}

bool SessionListModel::observe(const Row& r) const { return summaryOf(r).start.observe; }

std::vector<std::string> SessionListModel::degraded(const Row& r) const {
  if (r.live && r.live->degraded().size() >= (r.stored ? r.stored->degraded.size() : 0)) return r.live->degraded();
  return r.stored ? r.stored->degraded : std::vector<std::string>{};
}

int SessionListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SessionListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SessionListModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
  switch (section) {
    case SessionColumn: return tr("Session");
    case StateColumn: return tr("State");
    case StartedColumn: return tr("Started");
    case EventsColumn: return tr("Events");
    case AsksColumn: return tr("Asks");
    case DenialsColumn: return tr("Denials");
    case ExitColumn: return tr("Exit");
  }
  return QVariant();
}

QVariant SessionListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return QVariant();
  const Row& r = m_rows[static_cast<size_t>(index.row())];
  const db::SessionSummary& s = summaryOf(r);
  const bool running = stateText(r) == tr("running");
  const auto deg = degraded(r);
  // Live counts are current; the database's include what a slow GUI dropped.
  auto pick = [&](uint64_t stored, uint64_t live) { return std::max(r.stored ? stored : 0, r.live ? live : 0); };
  uint64_t events = pick(s.events, r.live ? r.live->events() : 0);
  uint64_t asks = pick(s.asks, r.live ? r.live->asks() : 0);
  uint64_t denials = pick(s.denials, r.live ? r.live->denials() : 0);
  const SessionEnd* end = r.live && r.live->end() ? &*r.live->end() : s.end ? &*s.end : nullptr;

  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case SessionColumn: {
          QString cmd = commandLine(s.start.argv);
          if (cmd.size() > 80) cmd = cmd.left(78) + QStringLiteral("…");
          QString name = s.start.name.empty() ? QString() : safe(s.start.name) + QStringLiteral(" · ");
          return QStringLiteral("#%1  %2%3").arg(s.id).arg(name, cmd);
        }
        case StateColumn: {
          QStringList parts{stateText(r)};
          if (s.start.observe) parts << tr("OBSERVE");
          if (!deg.empty()) parts << tr("DEGRADED");
          if (r.live && r.live->pendingAsks() > 0) parts << tr("%n asking", nullptr, r.live->pendingAsks());
          return parts.join(QStringLiteral(" · "));
        }
        case StartedColumn: return dateTime(s.start.started_ns);
        case EventsColumn: return count(events);
        case AsksColumn: return asks ? count(asks) : QString();
        case DenialsColumn: return denials ? count(denials) : QString();
        case ExitColumn: return end ? exitText(end->exit_status, end->exit_signal) : QString();
      }
      break;
    case Qt::ForegroundRole:
      switch (index.column()) {
        case StateColumn:
          if (!deg.empty() || (r.live && r.live->pendingAsks() > 0)) return QBrush(toneForeground(Tone::Ask));
          if (running) return QBrush(toneForeground(Tone::Good));
          if (stateText(r) != tr("ended")) return QBrush(toneForeground(Tone::Deny));
          return QBrush(toneForeground(Tone::Log));
        case AsksColumn: return QBrush(toneForeground(Tone::Ask));
        case DenialsColumn: return QBrush(toneForeground(Tone::Deny));
        case ExitColumn:
          if (end && end->exit_status != 0) return QBrush(toneForeground(Tone::Ask));
          break;
      }
      break;
    case Qt::FontRole:
      if ((index.column() == StateColumn && (running || !deg.empty())) || (index.column() == SessionColumn && r.live)) {
        QFont f;
        f.setBold(true);
        return f;
      }
      break;
    case Qt::TextAlignmentRole:
      if (index.column() >= EventsColumn) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Qt::ToolTipRole: {
      QString tip = tr("%1\ncwd: %2\nuser: %3 on %4\ntracer: %5, asks: %6\npolicy: %7")
                        .arg(commandLine(s.start.argv), safe(s.start.cwd), safe(s.start.user), safe(s.start.hostname),
                             qs(s.start.tracer), qs(s.start.ask_mode));
      QStringList files;
      for (const auto& f : s.start.policy_files) files << safe(f);
      tip = tip.arg(files.join(QStringLiteral(", ")));
      for (const auto& d : deg) tip += tr("\nDEGRADED: %1").arg(qs(d));
      if (r.live && r.live->dropped())
        tip += tr("\n%1 events were not shown live (the GUI was too slow); the database has them")
                   .arg(count(r.live->dropped()));
      return tip;
    }
  }
  return QVariant();
}

}  // namespace cb::gui
