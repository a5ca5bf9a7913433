// A session's Changes: the commands (a process the agent started directly,
// with everything below it), and under each the files it changed, what
// happened to each and whether it can be undone (keep/history.h).
#pragma once

#include <QAbstractItemModel>
#include <optional>
#include <string>
#include <vector>

#include "keep/plan.h"
#include "keep/recorded.h"

namespace cb::gui {

class ChangesModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { PathColumn, ChangeColumn, UndoColumn, NoteColumn, ColumnCount };
  enum Role { CommandRole = Qt::UserRole + 1, UndoRole };

  struct Group {
    uint64_t command = 0;
    int32_t pid = 0;
    std::vector<std::string> argv;
    bool agent = false;  // the session's first process itself
    std::vector<keep::ChangeLine> lines;
  };

  explicit ChangesModel(QObject* parent = nullptr);

  // The session's changes (list_changes), grouped by command.
  void setSession(const keep::RecordedSession& s);
  void setGroups(std::string cwd, std::vector<Group> groups);
  void clear();
  const std::vector<Group>& groups() const { return m_groups; }

  // The change line of a row; null for a command's row.
  const keep::ChangeLine* line(const QModelIndex& index) const;
  // The command a row belongs to (its own, or its line's).
  std::optional<uint64_t> commandOf(const QModelIndex& index) const;
  QModelIndex indexOfLine(uint64_t command, const std::string& path) const;
  size_t lineCount() const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  std::string m_cwd;
  std::vector<Group> m_groups;
};

}  // namespace cb::gui
