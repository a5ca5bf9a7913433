// The main window: sessions (live and from the audit database) above, the
// selected session below; a prompt indicator, and a tray icon that speaks
// up when a prompt arrives while the window is hidden.
#pragma once

#include <QMainWindow>
#include <QTimer>

#include "gui/auditdb.h"

class QLabel;
class QSystemTrayIcon;
class QTableView;
class QToolButton;

namespace cb::gui {

class GuiServer;
class LiveSession;
class PromptController;
class PromptWindow;
class SessionHub;
class SessionListModel;
class SessionPage;
struct Prompt;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(GuiServer* server, SessionHub* hub, PromptController* prompts, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens an audit database for review (read-only).  A missing default
  // database is retried on every refresh: the first `cottonbox run` creates it.
  bool openDatabase(const QString& path);
  void refresh();
  bool selectSession(const QString& uuid);

  SessionPage* page() const { return m_page; }
  QTableView* sessionView() const { return m_sessionView; }
  SessionListModel* sessionModel() const { return m_sessions; }
  PromptWindow* promptWindow() const { return m_promptWindow; }
  AuditDatabase* database() { return &m_db; }

  static QIcon appIcon();

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void onSelectionChanged();
  void onPromptArrived(const Prompt& p);
  void updatePromptButton();
  void updateListening();
  void exportEvents();
  void chooseDatabase();
  void showCurrent(bool reload);

  GuiServer* m_server;
  SessionHub* m_hub;
  PromptController* m_prompts;
  AuditDatabase m_db;
  QString m_dbPath;
  SessionListModel* m_sessions;
  QTableView* m_sessionView;
  SessionPage* m_page;
  PromptWindow* m_promptWindow;
  QToolButton* m_promptButton;
  QLabel* m_listening;
  QLabel* m_dbLabel;
  QSystemTrayIcon* m_tray = nullptr;
  QTimer m_refresh;
  bool m_trayHintShown = false;
};

}  // namespace cb::gui
