#include "gui/whotouchedmodel.h"

#include <QBrush>
#include <QFont>
#include <QStringList>
#include <QTreeView>
#include <set>

#include "gui/text.h"

namespace cb::gui {

// internalId: 0 for an event row, 1 + the event's row for a chain row.

WhoTouchedModel::WhoTouchedModel(QObject* parent) : QAbstractItemModel(parent) {}

WhoTouchedModel::WhoTouchedModel(Subject subject, QObject* parent) : QAbstractItemModel(parent), m_subject(subject) {}

void WhoTouchedModel::setTouches(std::vector<Touch> touches) {
  beginResetModel();
  m_touches = std::move(touches);
  endResetModel();
}

int WhoTouchedModel::touchOf(const QModelIndex& index) const {
  if (!index.isValid()) return -1;
  return index.internalId() == 0 ? index.row() : static_cast<int>(index.internalId() - 1);
}

QModelIndex WhoTouchedModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return QModelIndex();
  if (!parent.isValid()) return createIndex(row, column, quintptr(0));
  return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex WhoTouchedModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return QModelIndex();
  return createIndex(static_cast<int>(child.internalId() - 1), 0, quintptr(0));
}

int WhoTouchedModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(m_touches.size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;
  return static_cast<int>(m_touches[static_cast<size_t>(parent.row())].chain.size());
}

int WhoTouchedModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant WhoTouchedModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractItemModel::headerData(section, o, role);
  switch (section) {
    case TimeColumn: return tr("When");
    case SessionColumn: return tr("Session");
    case ProcessColumn: return tr("Process");
    case ActionColumn: return tr("Action");
    case DecisionColumn: return tr("Decision / exit");
    case PathColumn:
      return m_subject == Subject::Host ? tr("Address:port (names) / command line")
                                        : tr("Path → target / command line");
  }
  return QVariant();
}

QVariant WhoTouchedModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return QVariant();
  bool isEvent = index.internalId() == 0;
  const Touch& t = m_touches[static_cast<size_t>(touchOf(index))];
  if (isEvent) {
    const EventRow& r = t.event.row;
    switch (role) {
      case Qt::DisplayRole:
        switch (index.column()) {
          case TimeColumn: return dateTime(r.ev.ts_ns);
          case SessionColumn: return QStringLiteral("#%1").arg(t.event.session);
          case ProcessColumn: return tr("%1 (pid %2)").arg(r.ev.proc ? safe(r.ev.proc->comm) : QString()).arg(r.ev.pid);
          case ActionColumn: return qs(action_name(r.ev.action));
          case DecisionColumn: return decisionText(r);
          case PathColumn: {
            QString p = safe(r.ev.path);
            if (m_subject == Subject::Host) {
              // As `cottonbox events` shows it: "tcp:104.16.0.35:443 (registry.npmjs.org)".
              QStringList names;
              for (const auto& n : r.ev.net.names) names << safe(n);
              if (!names.isEmpty()) p += QStringLiteral("  (") + names.join(QStringLiteral(", ")) + QLatin1Char(')');
              return p;
            }
            if (!r.ev.target.empty()) p += QStringLiteral("  →  ") + safe(r.ev.target);
            return p;
          }
        }
        break;
      case Qt::ForegroundRole:
        if (index.column() == DecisionColumn) return QBrush(toneForeground(toneOf(r)));
        break;
      case Qt::BackgroundRole: {
        QColor c = toneBackground(toneOf(r));
        return c.isValid() ? QVariant(QBrush(c)) : QVariant();
      }
      case Qt::FontRole:
        if (index.column() == PathColumn) return monospaceFont();
        break;
      case Qt::ToolTipRole:
        if (!r.verdict.rule_id.empty())
          return tr("rule %1%2")
              .arg(qs(r.verdict.rule_id),
                   r.verdict.message.empty() ? QString() : QStringLiteral(": ") + qs(r.verdict.message));
        break;
    }
    return QVariant();
  }
  const db::StoredProcess& p = t.chain[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case ProcessColumn: return tr("%1 (pid %2)").arg(safe(p.row.comm)).arg(p.row.pid);
        case ActionColumn:
          switch (index.row()) {
            case 0: return tr("this process");
            case 1: return tr("its parent");
            case 2: return tr("grandparent");
            default: return tr("ancestor %1").arg(index.row());
          }
        case DecisionColumn:
          return p.exit ? tr("exit %1").arg(exitText(p.exit->exit_status, p.exit->exit_signal)) : QString();
        case PathColumn: return commandLine(p.row.argv);
      }
      break;
    case Qt::FontRole:
      if (index.column() == PathColumn) return monospaceFont();
      break;
    case Qt::ForegroundRole:
      if (index.column() == ActionColumn) return QBrush(toneForeground(Tone::Log));
      break;
    case Qt::ToolTipRole:
      return tr("%1\ncwd: %2\nstarted %3").arg(safe(p.row.exe), safe(p.row.cwd), dateTime(p.row.started_ns));
  }
  return QVariant();
}

WhoCounts showTouches(WhoTouchedModel& model, QTreeView& view, std::vector<Touch> touches) {
  WhoCounts c;
  c.events = touches.size();
  std::set<int64_t> sessions;
  for (const auto& t : touches) {
    sessions.insert(t.event.session);
    c.flagged += toneOf(t.event.row) != Tone::Neutral ? 1 : 0;
  }
  c.sessions = sessions.size();
  model.setTouches(std::move(touches));
  for (int r = 0; r < model.rowCount(); ++r)
    if (toneOf(model.touches()[static_cast<size_t>(r)].event.row) != Tone::Neutral) view.expand(model.index(r, 0));
  return c;
}

}  // namespace cb::gui
