#include "gui/processtreemodel.h"

#include <QBrush>
#include <algorithm>

#include "gui/text.h"

namespace cb::gui {

ProcessTreeModel::ProcessTreeModel(QObject* parent) : QAbstractItemModel(parent) {
  m_dirtyTimer.setInterval(250);
  m_dirtyTimer.setSingleShot(true);
  connect(&m_dirtyTimer, &QTimer::timeout, this, &ProcessTreeModel::emitDirty);
}

ProcessTreeModel::~ProcessTreeModel() = default;

void ProcessTreeModel::setLive(bool live) {
  if (m_live == live) return;
  m_live = live;
  for (auto& [id, n] : m_nodes) {
    QModelIndex i = indexOfNode(n.get(), ExitColumn);
    emit dataChanged(i, i);
  }
}

void ProcessTreeModel::clear() { setProcesses({}); }

void ProcessTreeModel::setProcesses(std::vector<db::StoredProcess> processes) {
  beginResetModel();
  m_nodes.clear();
  m_roots.clear();
  m_dirty.clear();
  for (auto& p : processes) {
    auto n = std::make_unique<Node>();
    n->p = std::move(p);
    uint64_t id = n->p.row.proc_id;
    m_nodes[id] = std::move(n);
  }
  std::vector<Node*> ordered;
  ordered.reserve(m_nodes.size());
  for (auto& [id, n] : m_nodes) ordered.push_back(n.get());
  std::sort(ordered.begin(), ordered.end(), [](const Node* a, const Node* b) {
    return std::tie(a->p.row.started_ns, a->p.row.proc_id) < std::tie(b->p.row.started_ns, b->p.row.proc_id);
  });
  for (Node* n : ordered) {
    auto it = n->p.row.parent_proc_id ? m_nodes.find(n->p.row.parent_proc_id) : m_nodes.end();
    Node* parent = it != m_nodes.end() && it->second.get() != n ? it->second.get() : nullptr;
    n->parent = parent;
    auto& siblings = parent ? parent->children : m_roots;
    n->row = static_cast<int>(siblings.size());
    siblings.push_back(n);
  }
  endResetModel();
}

void ProcessTreeModel::addProcess(const ProcessRow& row) {
  if (auto it = m_nodes.find(row.proc_id); it != m_nodes.end()) {
    it->second->p.row = row;  // reported again (exec seen first): keep its place
    QModelIndex i = indexOfNode(it->second.get(), 0);
    emit dataChanged(i, i.siblingAtColumn(ColumnCount - 1));
    return;
  }
  auto pit = row.parent_proc_id ? m_nodes.find(row.parent_proc_id) : m_nodes.end();
  Node* parent = pit != m_nodes.end() ? pit->second.get() : nullptr;
  auto n = std::make_unique<Node>();
  n->p.row = row;
  n->parent = parent;
  auto& siblings = parent ? parent->children : m_roots;
  n->row = static_cast<int>(siblings.size());
  QModelIndex pi = parent ? indexOfNode(parent, 0) : QModelIndex();
  beginInsertRows(pi, n->row, n->row);
  siblings.push_back(n.get());
  m_nodes[row.proc_id] = std::move(n);
  endInsertRows();
}

void ProcessTreeModel::execProcess(const ProcessExec& e) {
  auto it = m_nodes.find(e.proc_id);
  if (it == m_nodes.end()) return;
  auto& r = it->second->p.row;
  r.comm = e.comm;
  r.exe = e.exe;
  r.argv = e.argv;
  QModelIndex i = indexOfNode(it->second.get(), 0);
  emit dataChanged(i, i.siblingAtColumn(ColumnCount - 1));
}

void ProcessTreeModel::exitProcess(const ProcessExit& e) {
  auto it = m_nodes.find(e.proc_id);
  if (it == m_nodes.end()) return;
  it->second->p.exit = e;
  QModelIndex i = indexOfNode(it->second.get(), ExitColumn);
  emit dataChanged(i, i);
}

void ProcessTreeModel::countEvent(uint64_t procId, bool denied) {
  auto it = m_nodes.find(procId);
  if (it == m_nodes.end()) return;
  ++it->second->p.events;
  if (denied) ++it->second->p.denials;
  m_dirty.insert(procId);
  if (!m_dirtyTimer.isActive()) m_dirtyTimer.start();
}

void ProcessTreeModel::emitDirty() {
  for (uint64_t id : m_dirty) {
    auto it = m_nodes.find(id);
    if (it == m_nodes.end()) continue;
    QModelIndex a = indexOfNode(it->second.get(), EventsColumn);
    emit dataChanged(a, a.siblingAtColumn(DenialsColumn));
  }
  m_dirty.clear();
}

ProcessTreeModel::Node* ProcessTreeModel::node(const QModelIndex& index) const {
  return index.isValid() ? static_cast<Node*>(index.internalPointer()) : nullptr;
}

QModelIndex ProcessTreeModel::indexOfNode(const Node* n, int column) const {
  return n ? createIndex(n->row, column, const_cast<Node*>(n)) : QModelIndex();
}

QModelIndex ProcessTreeModel::indexOf(uint64_t procId, int column) const {
  auto it = m_nodes.find(procId);
  return it == m_nodes.end() ? QModelIndex() : indexOfNode(it->second.get(), column);
}

uint64_t ProcessTreeModel::procIdOf(const QModelIndex& index) const {
  Node* n = node(index);
  return n ? n->p.row.proc_id : 0;
}

const db::StoredProcess* ProcessTreeModel::process(uint64_t procId) const {
  auto it = m_nodes.find(procId);
  return it == m_nodes.end() ? nullptr : &it->second->p;
}

std::vector<const db::StoredProcess*> ProcessTreeModel::chain(uint64_t procId) const {
  std::vector<const db::StoredProcess*> out;
  auto it = m_nodes.find(procId);
  for (const Node* n = it == m_nodes.end() ? nullptr : it->second.get(); n && out.size() < 64; n = n->parent)
    out.push_back(&n->p);
  return out;
}

std::set<uint64_t> ProcessTreeModel::subtree(uint64_t procId) const {
  std::set<uint64_t> out;
  auto it = m_nodes.find(procId);
  if (it == m_nodes.end()) return out;
  std::vector<const Node*> stack{it->second.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    out.insert(n->p.row.proc_id);
    for (const Node* c : n->children) stack.push_back(c);
  }
  return out;
}

QModelIndex ProcessTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return QModelIndex();
  const auto& list = parent.isValid() ? node(parent)->children : m_roots;
  return createIndex(row, column, list[static_cast<size_t>(row)]);
}

QModelIndex ProcessTreeModel::parent(const QModelIndex& child) const {
  Node* n = node(child);
  return n ? indexOfNode(n->parent, 0) : QModelIndex();
}

int ProcessTreeModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() && parent.column() != 0) return 0;
  return static_cast<int>(parent.isValid() ? node(parent)->children.size() : m_roots.size());
}

int ProcessTreeModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant ProcessTreeModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractItemModel::headerData(section, o, role);
  switch (section) {
    case NameColumn: return tr("Process");
    case PidColumn: return tr("PID");
    case CommandColumn: return tr("Command line");
    case ExitColumn: return tr("Exit");
    case EventsColumn: return tr("Events");
    case DenialsColumn: return tr("Denials");
  }
  return QVariant();
}

QVariant ProcessTreeModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return QVariant();
  const Node* n = node(index);
  const db::StoredProcess& p = n->p;
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case NameColumn: return safe(p.row.comm);
        case PidColumn: return p.row.pid;
        case CommandColumn: return commandLine(p.row.argv);
        case ExitColumn:
          if (p.exit) return exitText(p.exit->exit_status, p.exit->exit_signal);
          return m_live ? tr("running") : QStringLiteral("—");
        case EventsColumn: return count(p.events);
        case DenialsColumn: return p.denials ? count(p.denials) : QString();
      }
      break;
    case Qt::ToolTipRole:
      return tr("%1 (pid %2, parent %3)\nexecutable: %4\ncwd: %5\nstarted: %6\n%7")
          .arg(safe(p.row.comm), QString::number(p.row.pid), QString::number(p.row.ppid), safe(p.row.exe),
               safe(p.row.cwd), dateTime(p.row.started_ns), commandLine(p.row.argv));
    case Qt::FontRole:
      if (index.column() == CommandColumn) return monospaceFont();
      break;
    case Qt::ForegroundRole:
      if (index.column() == DenialsColumn && p.denials) return QBrush(toneForeground(Tone::Deny));
      if (index.column() == ExitColumn && p.exit && (p.exit->exit_status > 0 || p.exit->exit_signal > 0))
        return QBrush(toneForeground(Tone::Ask));
      break;
    case Qt::TextAlignmentRole:
      if (index.column() == EventsColumn || index.column() == DenialsColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case ProcIdRole: return QVariant::fromValue<qulonglong>(p.row.proc_id);
  }
  return QVariant();
}

}  // namespace cb::gui
