#include "gui/changesmodel.h"

#include <QBrush>
#include <QFont>
#include <map>

#include "gui/text.h"

namespace cb::gui {

// internalId: 0 for a command's row, 1 + the command's row for a line's.

ChangesModel::ChangesModel(QObject* parent) : QAbstractItemModel(parent) {}

void ChangesModel::setSession(const keep::RecordedSession& s) {
  std::vector<Group> groups;
  std::map<uint64_t, size_t> at;
  for (keep::ChangeLine& l : keep::list_changes(s.history)) {
    auto it = at.find(l.command);
    if (it == at.end()) {
      Group g;
      g.command = l.command;
      if (const keep::AuditProcess* p = s.commands.process(l.command)) g.pid = p->pid;
      g.argv = keep::command_argv(s, l.command);
      g.agent = l.command != 0 && l.command == s.commands.root();
      it = at.emplace(l.command, groups.size()).first;
      groups.push_back(std::move(g));
    }
    groups[it->second].lines.push_back(std::move(l));
  }
  setGroups(s.summary.start.cwd, std::move(groups));
}

void ChangesModel::setGroups(std::string cwd, std::vector<Group> groups) {
  beginResetModel();
  m_cwd = std::move(cwd);
  m_groups = std::move(groups);
  endResetModel();
}

void ChangesModel::clear() { setGroups({}, {}); }

const keep::ChangeLine* ChangesModel::line(const QModelIndex& index) const {
  if (!index.isValid() || index.internalId() == 0) return nullptr;
  const Group& g = m_groups[index.internalId() - 1];
  return &g.lines[static_cast<size_t>(index.row())];
}

std::optional<uint64_t> ChangesModel::commandOf(const QModelIndex& index) const {
  if (!index.isValid()) return std::nullopt;
  size_t g = index.internalId() == 0 ? static_cast<size_t>(index.row()) : index.internalId() - 1;
  return m_groups[g].command;
}

QModelIndex ChangesModel::indexOfLine(uint64_t command, const std::string& path) const {
  for (size_t g = 0; g < m_groups.size(); ++g) {
    if (m_groups[g].command != command) continue;
    for (size_t i = 0; i < m_groups[g].lines.size(); ++i)
      if (m_groups[g].lines[i].path == path) return createIndex(static_cast<int>(i), 0, quintptr(g + 1));
  }
  return QModelIndex();
}

size_t ChangesModel::lineCount() const {
  size_t n = 0;
  for (const Group& g : m_groups) n += g.lines.size();
  return n;
}

QModelIndex ChangesModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return QModelIndex();
  if (!parent.isValid()) return createIndex(row, column, quintptr(0));
  return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex ChangesModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == 0) return QModelIndex();
  return createIndex(static_cast<int>(child.internalId() - 1), 0, quintptr(0));
}

int ChangesModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return static_cast<int>(m_groups.size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;
  return static_cast<int>(m_groups[static_cast<size_t>(parent.row())].lines.size());
}

int ChangesModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant ChangesModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractItemModel::headerData(section, o, role);
  switch (section) {
    case PathColumn: return tr("Command / file");
    case ChangeColumn: return tr("Change");
    case UndoColumn: return tr("Undo");
    case NoteColumn: return tr("Note");
  }
  return QVariant();
}

QVariant ChangesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return QVariant();
  if (index.internalId() == 0) {
    const Group& g = m_groups[static_cast<size_t>(index.row())];
    size_t undoable = 0;
    for (const keep::ChangeLine& l : g.lines) undoable += l.undo == keep::Undo::Cannot ? 0 : 1;
    switch (role) {
      case Qt::DisplayRole:
        switch (index.column()) {
          case PathColumn:
            if (g.command == 0) return tr("Processes not recorded");
            return tr("%1 · %2").arg(g.agent ? tr("the agent itself") : tr("command %1").arg(g.command),
                                     commandLine(g.argv));
          case ChangeColumn: return counted(g.lines.size(), "file", "files");
          case UndoColumn:
            return undoable == g.lines.size() ? tr("all can be undone")
                                              : tr("%1 of %2 can be undone").arg(undoable).arg(g.lines.size());
          case NoteColumn: return g.pid ? tr("pid %1").arg(g.pid) : QString();
        }
        break;
      case Qt::FontRole: {
        QFont f;
        f.setBold(true);
        return f;
      }
      case Qt::ToolTipRole: return commandLine(g.argv);
      case CommandRole: return QVariant::fromValue<quint64>(g.command);
    }
    return QVariant();
  }
  const Group& g = m_groups[index.internalId() - 1];
  const keep::ChangeLine& l = g.lines[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case PathColumn: {
          QString p = shortPath(l.path, m_cwd);
          if (!l.target.empty()) p += QStringLiteral("  →  ") + shortPath(l.target, m_cwd);
          return p;
        }
        case ChangeColumn: {
          QStringList words;
          for (const std::string& w : keep::change_words(l)) words << qs(w);
          return words.join(QStringLiteral(", "));
        }
        case UndoColumn: return qs(keep::undo_words(l.undo));
        case NoteColumn: return qs(l.reason);
      }
      break;
    case Qt::ForegroundRole:
      if (index.column() == UndoColumn) {
        switch (l.undo) {
          case keep::Undo::Restore:
          case keep::Undo::MoveBack: return QBrush(toneForeground(Tone::Good));
          case keep::Undo::Created: return QBrush(toneForeground(Tone::Log));
          case keep::Undo::Cannot: return QBrush(toneForeground(Tone::Deny));
        }
      }
      break;
    case Qt::FontRole:
      if (index.column() == PathColumn) return monospaceFont();
      break;
    case Qt::ToolTipRole: {
      QString t = safe(l.path);
      if (!l.target.empty()) t += QStringLiteral(" → ") + safe(l.target);
      if (l.undo == keep::Undo::Created) t += tr("\nCreated by this command: Restore removes it.");
      if (!l.reason.empty()) t += QStringLiteral("\n") + qs(l.reason);
      return t;
    }
    case CommandRole: return QVariant::fromValue<quint64>(g.command);
    case UndoRole: return static_cast<int>(l.undo);
  }
  return QVariant();
}

}  // namespace cb::gui
