// Every session the GUI knows: live ones from the socket and past ones from
// the audit database, one row per session (matched by uuid), newest first.
#pragma once

#include <QAbstractTableModel>
#include <QPointer>
#include <optional>
#include <vector>

#include "db/store.h"
#include "gui/sessionhub.h"

namespace cb::gui {

class SessionListModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    SessionColumn,
    StateColumn,
    StartedColumn,
    EventsColumn,
    AsksColumn,
    DenialsColumn,
    ExitColumn,
    ColumnCount
  };

  struct Row {
    QString uuid;
    std::optional<db::SessionSummary> stored;  // from the open database
    QPointer<LiveSession> live;                // while this GUI has seen it live
    int64_t startedNs = 0;
    int64_t id = 0;
  };

  explicit SessionListModel(QObject* parent = nullptr);

  // Merges the database's sessions in: updates rows in place, adds new
  // ones, drops rows that are neither live nor in this database.
  void setStoredSessions(const std::vector<db::SessionSummary>& sessions);
  void addLive(LiveSession* s);
  void liveChanged(LiveSession* s);

  const Row& row(int r) const { return m_rows[static_cast<size_t>(r)]; }
  int rowOf(const QString& uuid) const;

  // State words for a row: "running", "ended", "aborted", "connection lost".
  QString stateText(const Row& r) const;
  bool observe(const Row& r) const;
  std::vector<std::string> degraded(const Row& r) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 private:
  void insertSorted(Row r);
  const db::SessionSummary& summaryOf(const Row& r) const;

  std::vector<Row> m_rows;
};

}  // namespace cb::gui
