#include "gui/mainwindow.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPainterPath>
#include <QSplitter>
#include <QStatusBar>
#include <QSystemTrayIcon>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "gui/guiserver.h"
#include "gui/promptcontroller.h"
#include "gui/promptwindow.h"
#include "gui/sessionhub.h"
#include "gui/sessionlistmodel.h"
#include "gui/sessionpage.h"
#include "gui/text.h"

namespace cb::gui {

QIcon MainWindow::appIcon() {
  QIcon icon;
  for (int size : {16, 32, 64, 128}) {
    QPixmap pm(size, size);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    const qreal s = size;
    // A shield around a tuft of cotton.
    QPainterPath shield;
    shield.moveTo(s * 0.5, s * 0.04);
    shield.lineTo(s * 0.9, s * 0.18);
    shield.cubicTo(s * 0.9, s * 0.62, s * 0.72, s * 0.84, s * 0.5, s * 0.97);
    shield.cubicTo(s * 0.28, s * 0.84, s * 0.1, s * 0.62, s * 0.1, s * 0.18);
    shield.closeSubpath();
    p.fillPath(shield, QColor(0x2f, 0x6f, 0xd6));
    p.setBrush(Qt::white);
    p.setPen(Qt::NoPen);
    p.drawEllipse(QPointF(s * 0.38, s * 0.5), s * 0.14, s * 0.14);
    p.drawEllipse(QPointF(s * 0.62, s * 0.5), s * 0.14, s * 0.14);
    p.drawEllipse(QPointF(s * 0.5, s * 0.38), s * 0.15, s * 0.15);
    p.drawEllipse(QPointF(s * 0.5, s * 0.6), s * 0.13, s * 0.13);
    p.end();
    icon.addPixmap(pm);
  }
  return icon;
}

MainWindow::MainWindow(GuiServer* server, SessionHub* hub, PromptController* prompts, QWidget* parent)
    : QMainWindow(parent), m_server(server), m_hub(hub), m_prompts(prompts) {
  setWindowTitle(tr("cottonbox"));
  setWindowIcon(appIcon());
  resize(1440, 900);

  m_sessions = new SessionListModel(this);
  m_promptWindow = new PromptWindow(prompts, nullptr);
  m_promptWindow->setWindowIcon(appIcon());

  // Sessions above, the selected one below.
  auto* central = new QWidget(this);
  auto* v = new QVBoxLayout(central);
  v->setContentsMargins(14, 10, 14, 6);
  auto* split = new QSplitter(Qt::Vertical, central);
  split->setChildrenCollapsible(false);
  m_sessionView = new QTableView(split);
  setUpEventTable(m_sessionView);
  m_sessionView->setSelectionMode(QAbstractItemView::SingleSelection);
  m_sessionView->setModel(m_sessions);
  m_sessionView->setTextElideMode(Qt::ElideRight);
  m_sessionView->horizontalHeader()->setStretchLastSection(false);
  m_sessionView->horizontalHeader()->setSectionResizeMode(SessionListModel::SessionColumn, QHeaderView::Stretch);
  const int em = fontMetrics().horizontalAdvance(QLatin1Char('m'));
  m_sessionView->setColumnWidth(SessionListModel::StateColumn, em * 19);
  m_sessionView->setColumnWidth(SessionListModel::StartedColumn, em * 12);
  m_sessionView->setColumnWidth(SessionListModel::EventsColumn, em * 6);
  m_sessionView->setColumnWidth(SessionListModel::AsksColumn, em * 5);
  m_sessionView->setColumnWidth(SessionListModel::DenialsColumn, em * 6);
  m_sessionView->setColumnWidth(SessionListModel::ExitColumn, em * 9);
  m_page = new SessionPage(&m_db, split);
  split->addWidget(m_sessionView);
  split->addWidget(m_page);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 5);
  split->setSizes({160, 700});
  v->addWidget(split);
  setCentralWidget(central);

  // Menus and the toolbar.
  auto* open = new QAction(tr("&Open audit database…"), this);
  open->setShortcut(QKeySequence::Open);
  auto* reload = new QAction(tr("&Refresh"), this);
  reload->setShortcut(QKeySequence::Refresh);
  auto* exportAct = new QAction(tr("&Export events as JSON lines…"), this);
  exportAct->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  exportAct->setToolTip(tr("The selected events, or every event the filters show"));
  auto* quit = new QAction(tr("&Quit"), this);
  quit->setShortcut(QKeySequence::Quit);
  connect(open, &QAction::triggered, this, &MainWindow::chooseDatabase);
  connect(reload, &QAction::triggered, this, [this] {
    showCurrent(true);
    refresh();
  });
  connect(exportAct, &QAction::triggered, this, &MainWindow::exportEvents);
  connect(quit, &QAction::triggered, qApp, &QApplication::quit);
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(open);
  file->addAction(exportAct);
  file->addSeparator();
  file->addAction(quit);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(reload);

  auto* tb = addToolBar(tr("Main"));
  tb->setMovable(false);
  tb->setToolButtonStyle(Qt::ToolButtonTextOnly);
  tb->addAction(open);
  tb->addAction(reload);
  tb->addAction(exportAct);
  auto* spacer = new QWidget(tb);
  spacer->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  tb->addWidget(spacer);
  m_promptButton = new QToolButton(tb);
  m_promptButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
  connect(m_promptButton, &QToolButton::clicked, m_promptWindow, &PromptWindow::bringToFront);
  tb->addWidget(m_promptButton);

  m_listening = new QLabel(this);
  m_dbLabel = new QLabel(this);
  m_listening->setStyleSheet(QStringLiteral("color: #57606a; padding: 0 6px;"));
  m_dbLabel->setStyleSheet(QStringLiteral("color: #57606a; padding: 0 6px;"));
  statusBar()->addWidget(m_listening, 1);
  statusBar()->addPermanentWidget(m_dbLabel);

  connect(m_sessionView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &MainWindow::onSelectionChanged);
  connect(m_page, &SessionPage::status, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
  connect(hub, &SessionHub::sessionAdded, this, [this](LiveSession* s) {
    m_sessions->addLive(s);
    if (!m_sessionView->currentIndex().isValid()) selectSession(s->uuid());
  });
  connect(hub, &SessionHub::sessionChanged, this, [this](LiveSession* s) {
    m_sessions->liveChanged(s);
    if (m_page->isShowing(s->uuid())) showCurrent(false);
  });
  connect(prompts, &PromptController::promptArrived, this, &MainWindow::onPromptArrived);
  connect(prompts, &PromptController::queueChanged, this, &MainWindow::updatePromptButton);
  connect(prompts, &PromptController::currentChanged, this, &MainWindow::updatePromptButton);
  connect(server, &GuiServer::peerRefused, this,
          [this](const QString& why) { statusBar()->showMessage(tr("Refused a connection: %1").arg(why), 10000); });

  if (QSystemTrayIcon::isSystemTrayAvailable()) {
    m_tray = new QSystemTrayIcon(appIcon(), this);
    m_tray->setToolTip(tr("cottonbox"));
    auto* menu = new QMenu(this);
    menu->addAction(tr("Show cottonbox"), this, [this] {
      showNormal();
      raise();
      activateWindow();
    });
    menu->addAction(tr("Show the waiting prompt"), m_promptWindow, &PromptWindow::bringToFront);
    menu->addSeparator();
    menu->addAction(quit);
    m_tray->setContextMenu(menu);
    connect(m_tray, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason r) {
      if (r != QSystemTrayIcon::Trigger) return;
      if (m_prompts->hasCurrent())
        m_promptWindow->bringToFront();
      else {
        showNormal();
        raise();
        activateWindow();
      }
    });
    connect(m_tray, &QSystemTrayIcon::messageClicked, m_promptWindow, &PromptWindow::bringToFront);
    m_tray->show();
  }

  m_refresh.setInterval(2000);
  connect(&m_refresh, &QTimer::timeout, this, &MainWindow::refresh);
  m_refresh.start();
  updatePromptButton();
  updateListening();
}

MainWindow::~MainWindow() { delete m_promptWindow; }

void MainWindow::updateListening() {
  if (m_server->isListening())
    m_listening->setText(tr("Listening for `cottonbox run` on %1").arg(m_server->socketPath()));
  else
    m_listening->setText(
        tr("Not listening: %1 — live sessions and prompts are off; review still works")
            .arg(m_server->errorString().isEmpty() ? tr("started with --no-listen") : m_server->errorString()));
}

bool MainWindow::openDatabase(const QString& path) {
  m_dbPath = path;
  QString error;
  bool ok = m_db.open(path, &error);
  m_dbLabel->setText(ok ? tr("Audit database: %1").arg(path) : tr("No audit database yet at %1").arg(path));
  m_dbLabel->setToolTip(error);
  if (!ok) {
    m_sessions->setStoredSessions({});
    return false;
  }
  refresh();
  return true;
}

void MainWindow::chooseDatabase() {
  QString dir = m_dbPath.isEmpty() ? QString() : QFileInfo(m_dbPath).absolutePath();
  QString f = QFileDialog::getOpenFileName(this, tr("Open an audit database"), dir,
                                           tr("Audit databases (*.db *.sqlite);;All files (*)"));
  if (f.isEmpty()) return;
  if (!openDatabase(f)) QMessageBox::warning(this, tr("cottonbox"), m_dbLabel->toolTip());
}

void MainWindow::refresh() {
  if (!m_db.isOpen()) {
    if (m_dbPath.isEmpty() || !QFileInfo::exists(m_dbPath)) return;
    QString error;
    if (!m_db.open(m_dbPath, &error)) return;
    m_dbLabel->setText(tr("Audit database: %1").arg(m_dbPath));
  }
  QString error;
  auto sessions = m_db.sessions(&error);
  if (!sessions) {
    statusBar()->showMessage(error, 5000);
    return;
  }
  m_sessions->setStoredSessions(*sessions);
  showCurrent(false);
}

bool MainWindow::selectSession(const QString& uuid) {
  int r = m_sessions->rowOf(uuid);
  if (r < 0) return false;
  m_sessionView->setCurrentIndex(m_sessions->index(r, 0));
  return true;
}

void MainWindow::onSelectionChanged() { showCurrent(true); }

void MainWindow::showCurrent(bool reload) {
  QModelIndex i = m_sessionView->currentIndex();
  if (!i.isValid()) return;
  const auto& row = m_sessions->row(i.row());
  if (row.live) {
    m_page->showLive(row.live, row.stored);
  } else if (row.stored) {
    if (reload || !m_page->isShowing(row.uuid))
      m_page->showStored(*row.stored);
    else
      m_page->refreshHeader(row.stored);
  }
}

void MainWindow::updatePromptButton() {
  int n = m_prompts->hasCurrent() ? m_prompts->waiting() + 1 : 0;
  m_promptButton->setEnabled(n > 0);
  m_promptButton->setText(n ? tr("⚠  %1 waiting — show").arg(counted(static_cast<uint64_t>(n), "prompt", "prompts"))
                            : tr("No prompts waiting"));
  m_promptButton->setStyleSheet(
      n ? QStringLiteral(
              "QToolButton { background: #fff3d6; color: #8a5a00; font-weight: bold; border: 1px solid #f0d48a;"
              " border-radius: 6px; padding: 3px 12px; }")
        : QStringLiteral("QToolButton { color: #8c959f; padding: 3px 12px; }"));
  if (m_tray)
    m_tray->setToolTip(n ? tr("cottonbox — %1 waiting").arg(counted(static_cast<uint64_t>(n), "prompt", "prompts"))
                         : tr("cottonbox"));
}

void MainWindow::onPromptArrived(const Prompt& p) {
  updatePromptButton();
  if (!m_tray || (isVisible() && !isMinimized())) return;
  const Event& ev = p.ask.row.ev;
  m_tray->showMessage(tr("%1 wants to %2").arg(ev.proc ? safe(ev.proc->comm) : tr("A process"), qs(p.ask.summary)),
                      tr("Session %1 — denied automatically in %2 unless you answer.")
                          .arg(p.sessionLabel, duration(p.ask.deadline_ns - p.ask.asked_ns)),
                      QSystemTrayIcon::Warning, 15000);
}

void MainWindow::exportEvents() {
  QString file = QFileDialog::getSaveFileName(this, tr("Export events as JSON lines"), m_page->defaultExportName(),
                                              tr("JSON lines (*.jsonl);;All files (*)"));
  if (file.isEmpty()) return;
  QString error;
  int n = 0;
  if (!m_page->exportEvents(file, &error, &n))
    QMessageBox::warning(this, tr("cottonbox"), tr("Could not export: %1").arg(error));
  else
    statusBar()->showMessage(tr("Wrote %1 events to %2").arg(n).arg(file), 8000);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  // With a tray, closing keeps the socket open: supervisors still find a GUI.
  if (m_tray && m_tray->isVisible() && m_server->isListening()) {
    hide();
    if (!m_trayHintShown) {
      m_tray->showMessage(tr("cottonbox keeps listening"),
                          tr("Prompts will still appear. Quit from the tray menu to stop."),
                          QSystemTrayIcon::Information, 6000);
      m_trayHintShown = true;
    }
    e->ignore();
    return;
  }
  m_promptWindow->close();
  e->accept();
  qApp->quit();
}

}  // namespace cb::gui
