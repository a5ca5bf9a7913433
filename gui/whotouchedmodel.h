// "Who touched this path?": every event on a path, each with the chain of
// processes behind it (expand a row to see them, nearest first).  Its twin
// "who contacted this host?" shows network events the same way, with the
// address, port and the names the session resolved in the last column.
#pragma once

#include <QAbstractItemModel>
#include <vector>

#include "gui/auditdb.h"

class QTreeView;

namespace cb::gui {

class WhoTouchedModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { TimeColumn, SessionColumn, ProcessColumn, ActionColumn, DecisionColumn, PathColumn, ColumnCount };

  enum class Subject { Path, Host };

  explicit WhoTouchedModel(QObject* parent = nullptr);
  explicit WhoTouchedModel(Subject subject, QObject* parent = nullptr);
  Subject subject() const { return m_subject; }

  void setTouches(std::vector<Touch> touches);
  const std::vector<Touch>& touches() const { return m_touches; }
  // The touch a row (or one of its chain rows) belongs to; -1 for none.
  int touchOf(const QModelIndex& index) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  Subject m_subject = Subject::Path;
  std::vector<Touch> m_touches;
};

// What a "who" search found, for its status line.
struct WhoCounts {
  size_t events = 0;
  size_t sessions = 0;
  size_t flagged = 0;  // denied or asked
};
// Shows `touches` in `model`, with the chains behind denials and asks
// expanded in `view` (the rest one click away).
WhoCounts showTouches(WhoTouchedModel& model, QTreeView& view, std::vector<Touch> touches);

}  // namespace cb::gui
