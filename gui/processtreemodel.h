// A session's process tree: each process with its command line, exit status
// and how many events and denials it caused.  Filled at once from the audit
// database, or grown live as the supervisor reports processes.
#pragma once

#include <QAbstractItemModel>
#include <QTimer>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "db/store.h"

namespace cb::gui {

class ProcessTreeModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  // The command line last: it is the long one, and it stretches.
  enum Column { NameColumn, PidColumn, ExitColumn, EventsColumn, DenialsColumn, CommandColumn, ColumnCount };
  enum Role { ProcIdRole = Qt::UserRole + 1 };

  explicit ProcessTreeModel(QObject* parent = nullptr);
  ~ProcessTreeModel() override;

  void setProcesses(std::vector<db::StoredProcess> processes);
  void clear();
  // Live updates.  A process whose parent is unknown becomes a root.
  void addProcess(const ProcessRow& row);
  void execProcess(const ProcessExec& e);
  void exitProcess(const ProcessExit& e);
  // Counts change often: the views hear about them a few times a second.
  void countEvent(uint64_t procId, bool denied);
  // Shown for processes without an exit: "running" while the session is live.
  void setLive(bool live);

  QModelIndex indexOf(uint64_t procId, int column = 0) const;
  uint64_t procIdOf(const QModelIndex& index) const;
  const db::StoredProcess* process(uint64_t procId) const;
  // The process and its ancestors, nearest first.
  std::vector<const db::StoredProcess*> chain(uint64_t procId) const;
  // The process and all its descendants.
  std::set<uint64_t> subtree(uint64_t procId) const;
  size_t size() const { return m_nodes.size(); }

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  struct Node {
    db::StoredProcess p;
    Node* parent = nullptr;
    std::vector<Node*> children;
    int row = 0;  // position among the parent's children (only appended to)
  };
  Node* node(const QModelIndex& index) const;
  QModelIndex indexOfNode(const Node* n, int column) const;
  void emitDirty();

  std::unordered_map<uint64_t, std::unique_ptr<Node>> m_nodes;
  std::vector<Node*> m_roots;
  std::set<uint64_t> m_dirty;
  QTimer m_dirtyTimer;
  bool m_live = false;
};

}  // namespace cb::gui
