// The Hosts tab of a session: what `cottonbox hosts` shows, as a sortable
// table (live sessions grow it as their events arrive), and below it "who
// contacted this host?", the twin of "who touched this path?": a name, a
// pattern (*.example.com), an address or a block (10.0.0.0/8), and every
// network event with it, with the chain of processes behind each.
// Double-clicking a host asks about it.
#pragma once

#include <QElapsedTimer>
#include <QPointer>
#include <QWidget>
#include <optional>

#include "gui/auditdb.h"
#include "gui/hostmodel.h"
#include "gui/whotouchedmodel.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTreeView;

namespace cb::gui {

class LiveSession;

class HostsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit HostsPanel(AuditDatabase* db, QWidget* parent = nullptr);

  // A session from the database (read now when visible, else when shown).
  void showStored(int64_t session);
  // A live session; `stored` is its id in the open database, if it is there
  // yet (its lookups are read from there).
  void showLive(LiveSession* live, std::optional<int64_t> stored);
  void clear(const QString& why);

  void whoContacted(const QString& host, bool allSessions);

  HostModel* hostModel() const { return m_shown; }
  QSortFilterProxyModel* sortedHosts() const { return m_sorted; }
  QTableView* hostView() const { return m_hostView; }
  WhoTouchedModel* whoContactedModel() const { return m_whoModel; }
  QTreeView* whoView() const { return m_whoView; }

 signals:
  void status(const QString& message);

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  void load();
  void bind(HostModel* m);
  void updateSummary();
  std::vector<Touch> whoContactedLive(const HostPattern& p) const;

  AuditDatabase* m_db;
  HostModel* m_own;  // read from the database
  HostModel* m_shown = nullptr;
  QPointer<LiveSession> m_live;
  std::optional<int64_t> m_session;  // in the database
  bool m_stale = false;
  QElapsedTimer m_lookupsRead;

  QLabel* m_summary;
  QSortFilterProxyModel* m_sorted;
  QTableView* m_hostView;
  QLineEdit* m_whoHost;
  QCheckBox* m_whoAll;
  QLabel* m_whoStatus;
  QTreeView* m_whoView;
  WhoTouchedModel* m_whoModel;
};

}  // namespace cb::gui
