// Events in a table: a bounded ring for live sessions (the oldest rows fall
// off the top, with proper begin/endRemoveRows so no view sees ghost rows),
// filled in batches on a timer so thousands of events per second cost one
// insert per batch, never one per event; and the same model holds a
// session's events read from the audit database for review.
#pragma once

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QTimer>
#include <deque>
#include <optional>
#include <set>
#include <vector>

#include "db/store.h"
#include "policy/glob.h"

namespace cb::gui {

struct EventItem {
  int64_t id = 0;  // the database row; 0 for a live event
  int64_t session = 0;
  EventRow row;
  std::optional<ApprovalRow> approval;
};

class EventModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    TimeColumn,
    PidColumn,
    ProcessColumn,
    ActionColumn,
    DecisionColumn,
    RuleColumn,
    PathColumn,
    ColumnCount
  };
  enum Role { ToneRole = Qt::UserRole + 1, ProcIdRole, SortKeyRole };

  static constexpr size_t kDefaultCapacity = 50000;
  static constexpr int kDefaultBatchMs = 40;
  static constexpr int kDefaultHoldBackMs = 150;

  explicit EventModel(size_t capacity = kDefaultCapacity, QObject* parent = nullptr);

  // Live: queued, then inserted as one batch at most every batch interval,
  // in time order.  Events from the eBPF tracer arrive a little after the
  // supervisor's own, so the newest are held back briefly (the hold-back)
  // for late ones to find their place; no row is ever moved afterwards.
  void enqueue(EventItem item);
  // Inserts everything queued, now (the session ended; tests).
  void flush();
  void setBatchInterval(int ms);
  void setHoldBack(int ms) { m_holdNs = int64_t(ms) * 1000000; }
  // Review: replaces every row at once.
  void reset(std::vector<EventItem> items);
  void clear();

  const EventItem& item(int row) const { return m_rows[static_cast<size_t>(row)]; }
  size_t capacity() const { return m_capacity; }
  size_t pending() const { return m_pending.size(); }
  // Rows that fell off the top to keep the bound.
  uint64_t evicted() const { return m_evicted; }
  // Paths below this are shown relative to it (the session's cwd); the
  // tooltip always has the full path.
  void setCwd(std::string cwd) { m_cwd = std::move(cwd); }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 signals:
  void rowsAppended(int count);

 private:
  void flushUpTo(int64_t cutoffNs);

  std::deque<EventItem> m_rows;
  std::vector<EventItem> m_pending;
  int64_t m_holdNs = 150 * 1000000;
  QTimer m_timer;
  size_t m_capacity;
  uint64_t m_evicted = 0;
  std::string m_cwd;
};

// The filters a user types: action (a name or a group such as file.mutate),
// decision, process (name substring or pid), path (substring, or a glob as
// in rules when it holds * ? [ {), and the processes picked in the tree.
class EventFilterModel : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit EventFilterModel(QObject* parent = nullptr);

  void setAction(const QString& action);      // "" = any
  void setDecision(const QString& decision);  // "", "deny", "ask", "allow", "log"
  void setProcess(const QString& text);
  void setPath(const QString& text);
  void setProcIds(std::set<uint64_t> ids);  // empty = any
  bool isFiltering() const;
  // Why the path filter cannot be used ("" when it can).
  QString pathError() const { return m_pathError; }

  // The source rows currently shown, in order.
  std::vector<int> sourceRows() const;

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override;

 private:
  ActionMask m_actions = 0;
  bool m_actionUnknown = false;
  QString m_decision;
  QString m_process;
  std::string m_processBytes;
  int32_t m_pid = 0;
  std::string m_pathText;
  std::optional<Glob> m_glob;
  QString m_pathError;
  std::set<uint64_t> m_procIds;
};

// Decisions as the filters and `cottonbox events --decision` mean them:
// deny/allow = what happened (observe mode: what would have), ask/log = what
// the rule said.
bool decisionMatches(const EventRow& r, const QString& decision);

}  // namespace cb::gui
