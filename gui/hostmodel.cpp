#include "gui/hostmodel.h"

#include <QApplication>
#include <QBrush>
#include <QFont>
#include <QStringList>

#include "gui/eventmodel.h"
#include "gui/processtreemodel.h"
#include "gui/text.h"

namespace cb::gui {
namespace {

bool sameCounts(const db::HostContact& a, const db::HostContact& b) {
  return a.events == b.events && a.denied == b.denied && a.asked == b.asked && a.lookups == b.lookups &&
         a.lookups_refused == b.lookups_refused && a.first_ns == b.first_ns && a.last_ns == b.last_ns &&
         a.names.size() == b.names.size() && a.addresses.size() == b.addresses.size() &&
         a.processes.size() == b.processes.size() && a.actions.size() == b.actions.size();
}

QString joined(const std::vector<std::string>& v, size_t most) {
  QStringList parts;
  for (size_t i = 0; i < v.size() && i < most; ++i) parts << safe(v[i]);
  QString t = parts.join(QStringLiteral(", "));
  if (v.size() > most) t += QApplication::tr(" +%1 more").arg(v.size() - most);
  return t;
}

Tone toneOfHost(const db::HostContact& h) {
  if (h.denied > 0 || h.lookups_refused > 0) return Tone::Deny;
  if (h.asked > 0) return Tone::Ask;
  return Tone::Neutral;
}

}  // namespace

HostModel::HostModel(size_t capacity, QObject* parent)
    : QAbstractTableModel(parent), m_capacity(capacity ? capacity : 1) {}

HostModel::~HostModel() = default;

void HostModel::setHosts(std::vector<db::HostContact> hosts) {
  disconnect(m_appended);
  m_tally.reset();
  m_events = nullptr;
  m_procs = nullptr;
  m_lookupsSeen = 0;
  beginResetModel();
  m_rows = std::move(hosts);
  m_index.clear();
  for (size_t i = 0; i < m_rows.size(); ++i) m_index.emplace(keyOf(m_rows[i]), i);
  endResetModel();
  emit updated();
}

void HostModel::clear() { setHosts({}); }

void HostModel::follow(EventModel* events, ProcessTreeModel* procs) {
  setHosts({});
  m_tally = std::make_unique<db::HostTally>(m_capacity);
  m_events = events;
  m_procs = procs;
  for (int i = 0; i < events->rowCount(); ++i) m_tally->add(events->item(i).row);
  m_appended = connect(events, &EventModel::rowsAppended, this, &HostModel::onAppended);
  sync();
}

void HostModel::addLookups(const std::vector<db::StoredLookup>& all) {
  if (!m_tally || all.size() <= m_lookupsSeen) return;
  for (size_t i = m_lookupsSeen; i < all.size(); ++i) m_tally->add(all[i].row);
  m_lookupsSeen = all.size();
  sync();
}

uint64_t HostModel::dropped() const { return m_tally ? m_tally->dropped() : 0; }

void HostModel::onAppended(int count) {
  if (!m_tally || !m_events) return;
  int n = m_events->rowCount();
  bool net = false;
  for (int i = std::max(0, n - count); i < n; ++i) {
    const EventRow& r = m_events->item(i).row;
    if (!r.ev.net.ip()) continue;
    m_tally->add(r);
    net = true;
  }
  if (net) sync();
}

void HostModel::sync() {
  std::vector<db::HostContact> now = m_tally->rows();
  std::map<Key, size_t> fresh;
  for (size_t i = 0; i < now.size(); ++i) fresh.emplace(keyOf(now[i]), i);
  // Gone: rare (a refused name's row, once an event reached the name).
  bool removed = false;
  for (size_t i = m_rows.size(); i-- > 0;) {
    if (fresh.contains(keyOf(m_rows[i]))) continue;
    beginRemoveRows(QModelIndex(), static_cast<int>(i), static_cast<int>(i));
    m_rows.erase(m_rows.begin() + static_cast<ptrdiff_t>(i));
    endRemoveRows();
    removed = true;
  }
  if (removed) {
    m_index.clear();
    for (size_t i = 0; i < m_rows.size(); ++i) m_index.emplace(keyOf(m_rows[i]), i);
  }
  // Changed in place: one signal for the span.
  int lo = -1, hi = -1;
  std::vector<db::HostContact*> added;
  for (auto& h : now) {
    auto it = m_index.find(keyOf(h));
    if (it == m_index.end()) {
      added.push_back(&h);
      continue;
    }
    db::HostContact& mine = m_rows[it->second];
    if (sameCounts(mine, h)) continue;
    mine = std::move(h);
    int r = static_cast<int>(it->second);
    lo = lo < 0 ? r : std::min(lo, r);
    hi = std::max(hi, r);
  }
  if (lo >= 0) emit dataChanged(index(lo, 0), index(hi, ColumnCount - 1));
  if (!added.empty()) {
    int first = static_cast<int>(m_rows.size());
    beginInsertRows(QModelIndex(), first, first + static_cast<int>(added.size()) - 1);
    for (auto* h : added) {
      m_index.emplace(keyOf(*h), m_rows.size());
      m_rows.push_back(std::move(*h));
    }
    endInsertRows();
  }
  emit updated();
}

QString HostModel::queryFor(int row) const {
  const db::HostContact& h = host(row);
  if (!h.names.empty()) return qs(h.names.front());
  if (!h.addresses.empty()) return qs(h.addresses.front());
  return qs(h.host);
}

int HostModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int HostModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant HostModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal) return QAbstractTableModel::headerData(section, o, role);
  if (role == Qt::TextAlignmentRole)
    return section == PortColumn || section == EventsColumn || section == DeniedColumn
               ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
               : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
  switch (section) {
    case HostColumn: return tr("Host");
    case PortColumn: return tr("Port");
    case ProtoColumn: return tr("Proto");
    case AddressesColumn: return tr("Addresses");
    case ProcessesColumn: return tr("Processes");
    case FirstColumn: return tr("First");
    case LastColumn: return tr("Last");
    case EventsColumn: return tr("Events");
    case DeniedColumn: return tr("Denied");
    case LookupsColumn: return tr("Lookups");
  }
  return QVariant();
}

QVariant HostModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return QVariant();
  const db::HostContact& h = m_rows[static_cast<size_t>(index.row())];
  const bool dns = h.proto == "dns";
  auto processes = [&] {
    QStringList who;
    for (const auto& p : h.processes) {
      std::string comm = p.comm;
      int32_t pid = p.pid;
      if (comm.empty() && m_procs && p.proc_id)
        if (const auto* sp = m_procs->process(p.proc_id)) comm = sp->row.comm, pid = sp->row.pid;
      QString w = comm.empty() ? tr("proc %1").arg(p.proc_id) : safe(comm);
      if (pid) w += QStringLiteral("[%1]").arg(pid);
      if (p.events > 1) w += QStringLiteral("×%1").arg(p.events);
      who << w;
    }
    return who;
  };
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case HostColumn: return safe(h.host);
        case PortColumn: return dns ? QStringLiteral("–") : QString::number(h.port);
        case ProtoColumn: return qs(h.proto);
        case AddressesColumn: return h.addresses.empty() ? QStringLiteral("–") : joined(h.addresses, 3);
        case ProcessesColumn: {
          QStringList who = processes();
          if (who.size() > 4)
            return QString(who.mid(0, 4).join(QStringLiteral(", ")) + tr(" +%1 more").arg(who.size() - 4));
          return who.isEmpty() ? QStringLiteral("–") : who.join(QStringLiteral(", "));
        }
        case FirstColumn: return timeOfDay(h.first_ns);
        case LastColumn: return timeOfDay(h.last_ns);
        case EventsColumn: return count(h.events);
        case DeniedColumn: return count(h.denied);
        case LookupsColumn: {
          if (h.lookups == 0) return QStringLiteral("–");
          QString t = count(h.lookups);
          if (h.lookups_refused) t += tr(" (%1 refused)").arg(count(h.lookups_refused));
          return t;
        }
      }
      break;
    case Qt::ToolTipRole: {
      QStringList lines;
      lines << (dns ? tr("%1: refused at resolution, never contacted").arg(safe(h.host))
                    : tr("%1 port %2/%3").arg(safe(h.host)).arg(h.port).arg(qs(h.proto)));
      if (!h.names.empty()) lines << tr("names: %1").arg(joined(h.names, h.names.size()));
      if (!h.addresses.empty()) lines << tr("addresses: %1").arg(joined(h.addresses, h.addresses.size()));
      if (!h.actions.empty()) lines << tr("actions: %1").arg(joined(h.actions, h.actions.size()));
      lines << tr("processes: %1").arg(processes().join(QStringLiteral(", ")));
      lines << tr("from %1 to %2").arg(dateTime(h.first_ns), dateTime(h.last_ns));
      if (h.asked) lines << tr("%1 asked").arg(count(h.asked));
      lines << tr("Double-click: who contacted it?");
      return lines.join(QLatin1Char('\n'));
    }
    case Qt::TextAlignmentRole:
      if (index.column() == PortColumn || index.column() == EventsColumn || index.column() == DeniedColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case Qt::ForegroundRole: {
      Tone t = toneOfHost(h);
      if ((index.column() == DeniedColumn && h.denied) || (index.column() == LookupsColumn && h.lookups_refused))
        return QBrush(toneForeground(t));
      if (dns && index.column() == ProtoColumn) return QBrush(toneForeground(Tone::Deny));
      break;
    }
    case Qt::BackgroundRole: {
      QColor c = toneBackground(toneOfHost(h));
      return c.isValid() ? QVariant(QBrush(c)) : QVariant();
    }
    case Qt::FontRole:
      if (index.column() == HostColumn || index.column() == AddressesColumn) {
        QFont f = monospaceFont();
        if (index.column() == HostColumn) f.setBold(true);
        return f;
      }
      break;
    case SortKeyRole:
      switch (index.column()) {
        case HostColumn: return safe(h.host).toLower();
        case PortColumn: return dns ? -1 : static_cast<int>(h.port);
        case ProtoColumn: return qs(h.proto);
        case AddressesColumn: return h.addresses.empty() ? QString() : qs(h.addresses.front());
        case ProcessesColumn: return processes().join(QStringLiteral(", ")).toLower();
        case FirstColumn: return QVariant::fromValue<qlonglong>(h.first_ns);
        case LastColumn: return QVariant::fromValue<qlonglong>(h.last_ns);
        case EventsColumn: return QVariant::fromValue<qulonglong>(h.events);
        case DeniedColumn: return QVariant::fromValue<qulonglong>(h.denied);
        case LookupsColumn: return QVariant::fromValue<qulonglong>(h.lookups);
      }
      break;
  }
  return QVariant();
}

}  // namespace cb::gui
