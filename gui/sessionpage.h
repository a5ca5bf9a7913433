// One session in detail: a header (command, state, degradations), and tabs
// for the event timeline with filters, the process tree (selecting a process
// filters its events), "who touched this path?", the hosts it reached with
// "who contacted this host?" (hostspanel.h), and the changes per command
// with their undo (changespanel.h).  Live sessions show their live
// models; past ones are read from the audit database.
#pragma once

#include <QPointer>
#include <QWidget>
#include <optional>

#include "db/store.h"
#include "gui/auditdb.h"
#include "gui/eventmodel.h"
#include "gui/processtreemodel.h"
#include "gui/sessionhub.h"
#include "gui/whotouchedmodel.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTabWidget;
class QTableView;
class QTreeView;

namespace cb::gui {

class ChangesPanel;
class HostsPanel;

class SessionPage : public QWidget {
  Q_OBJECT
 public:
  enum Tab { EventsTab, ProcessesTab, WhoTouchedTab, HostsTab, ChangesTab };

  SessionPage(AuditDatabase* db, QWidget* parent = nullptr);

  void showLive(LiveSession* live, const std::optional<db::SessionSummary>& stored);
  void showStored(const db::SessionSummary& stored);
  void showNothing(const QString& why);
  // Counts, state and degradations changed.
  void refreshHeader(const std::optional<db::SessionSummary>& stored);
  bool isShowing(const QString& uuid) const { return m_uuid == uuid; }

  void setTab(Tab t);
  void setFilters(const QString& action, const QString& decision, const QString& process, const QString& path);
  void selectProcess(uint64_t procId);
  void whoTouched(const QString& pathOrGlob, bool allSessions, bool changesOnly = false);

  // Writes the selected events, or every event the filters show, as JSON lines.
  bool exportEvents(const QString& file, QString* error, int* written = nullptr) const;
  QString defaultExportName() const;

  EventModel* eventModel() const { return m_events; }
  EventFilterModel* eventFilter() const { return m_filter; }
  ProcessTreeModel* processModel() const { return m_procs; }
  WhoTouchedModel* whoTouchedModel() const { return m_whoModel; }
  QTableView* eventView() const { return m_eventView; }
  ChangesPanel* changesPanel() const { return m_changes; }
  HostsPanel* hostsPanel() const { return m_hosts; }
  // The explanation of the selected event (`cottonbox why`), empty when none.
  QString whyText() const;

 signals:
  void status(const QString& message);

 private:
  void buildHeader();
  QWidget* buildEventsTab();
  QWidget* buildProcessesTab();
  QWidget* buildWhoTab();
  void bind(EventModel* events, ProcessTreeModel* procs);
  void updateShownCount();
  void onProcessSelected();
  std::vector<Touch> whoTouchedLive(const std::string& glob, bool changesOnly) const;

  AuditDatabase* m_db;
  QString m_uuid;
  QPointer<LiveSession> m_live;
  std::optional<db::SessionSummary> m_stored;

  // Header.
  QLabel* m_title;
  QLabel* m_command;
  QLabel* m_facts;
  QLabel* m_badges;
  QLabel* m_degraded;
  QTabWidget* m_tabs;

  // Events.
  EventModel* m_events = nullptr;  // shown (live or m_ownEvents)
  EventModel* m_ownEvents;         // loaded from the database
  ProcessTreeModel* m_procs = nullptr;
  ProcessTreeModel* m_ownProcs;
  EventFilterModel* m_filter;
  QComboBox* m_action;
  QComboBox* m_decision;
  QLineEdit* m_process;
  QLineEdit* m_path;
  QLabel* m_shown;
  QTableView* m_eventView;
  QLabel* m_why;  // the selected event's explanation
  bool m_truncated = false;
  void showWhy(const QModelIndex& current);

  // Processes.
  QTreeView* m_tree;
  QLabel* m_procTitle;
  EventFilterModel* m_procFilter;
  QTableView* m_procEvents;
  QCheckBox* m_withChildren;
  QMetaObject::Connection m_expandOnInsert;

  // Who touched.
  QLineEdit* m_whoPath;
  QCheckBox* m_whoAll;
  QCheckBox* m_whoChanges;
  QLabel* m_whoStatus;
  QTreeView* m_whoView;
  WhoTouchedModel* m_whoModel;

  // Hosts.
  HostsPanel* m_hosts;

  // Changes.
  ChangesPanel* m_changes;
};

// Column widths and row heights shared by the event tables.
void setUpEventTable(QTableView* view);

}  // namespace cb::gui
