// The hosts a session reached: what `cottonbox hosts` prints, a row per
// host, port and protocol (db::HostContact), with the names refused at
// resolution after them.  Review fills it at once from the audit database
// (db::Reader::hosts); a live session's model follows its event model's
// batches through the same fold (db::HostTally), so a burst of connects
// costs one update per batch, and rows are only appended or updated in
// place, never moved (the view sorts through a proxy).  Bounded: a live
// model keeps at most `capacity` hosts and as many looked-up names; what
// would make more is counted in dropped(), not shown.
#pragma once

#include <QAbstractTableModel>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "db/hosts.h"

namespace cb::gui {

class EventModel;
class ProcessTreeModel;

class HostModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    HostColumn,
    PortColumn,
    ProtoColumn,
    AddressesColumn,
    ProcessesColumn,
    FirstColumn,
    LastColumn,
    EventsColumn,
    DeniedColumn,
    LookupsColumn,
    ColumnCount
  };
  enum Role { SortKeyRole = Qt::UserRole + 1 };

  static constexpr size_t kDefaultCapacity = 10000;

  explicit HostModel(size_t capacity = kDefaultCapacity, QObject* parent = nullptr);
  ~HostModel() override;

  // Review: replaces every row.
  void setHosts(std::vector<db::HostContact> hosts);
  void clear();
  // Live: tallies the events `events` holds now, then each batch it
  // appends.  `procs` names the processes of refused lookups.
  void follow(EventModel* events, ProcessTreeModel* procs);
  // The session's lookups so far, as the database has them (they are
  // only appended): the ones not seen yet are tallied.
  void addLookups(const std::vector<db::StoredLookup>& all);
  bool isLive() const { return m_tally != nullptr; }

  const db::HostContact& host(int row) const { return m_rows[static_cast<size_t>(row)]; }
  // What to ask "who contacted" about for a row: its first name, else its address.
  QString queryFor(int row) const;
  size_t capacity() const { return m_capacity; }
  // Events and lookups a live tally left out for the bound.
  uint64_t dropped() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 signals:
  // Rows were added or changed (live), or replaced.
  void updated();

 private:
  using Key = std::tuple<std::string, uint16_t, std::string>;
  static Key keyOf(const db::HostContact& h) { return {h.host, h.port, h.proto}; }
  void onAppended(int count);
  // Brings the rows to the tally's: updates in place, appends new keys,
  // removes the few that left (a refused name that an event then reached).
  void sync();

  size_t m_capacity;
  std::vector<db::HostContact> m_rows;
  std::map<Key, size_t> m_index;
  std::unique_ptr<db::HostTally> m_tally;
  EventModel* m_events = nullptr;
  ProcessTreeModel* m_procs = nullptr;
  QMetaObject::Connection m_appended;
  size_t m_lookupsSeen = 0;
};

}  // namespace cb::gui
