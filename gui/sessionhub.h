// Live sessions: what each connected supervisor has said so far, and the
// routing between the socket, the prompt queue and the views.
#pragma once

#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>
#include <map>
#include <optional>
#include <vector>

#include "gui/eventmodel.h"
#include "gui/hostmodel.h"
#include "gui/processtreemodel.h"
#include "gui/promptcontroller.h"
#include "proto/protocol.h"

namespace cb::gui {

class GuiServer;

class LiveSession : public QObject {
  Q_OBJECT
 public:
  enum class State { Running, Ended, Lost };

  LiveSession(quint64 connection, proto::Hello hello, QObject* parent = nullptr);

  quint64 connection() const { return m_connection; }
  const db::SessionSummary& summary() const { return m_hello.session; }
  const proto::Hello& hello() const { return m_hello; }
  QString uuid() const;
  QString label() const;  // "name (#id)" or "command (#id)"
  State state() const { return m_state; }
  const std::optional<SessionEnd>& end() const { return m_end; }
  const std::vector<std::string>& degraded() const { return m_degraded; }
  uint64_t events() const { return m_events; }
  // Asks so far: those answered (their events) and those still waiting.
  uint64_t asks() const { return m_asks + static_cast<uint64_t>(m_pendingAsks > 0 ? m_pendingAsks : 0); }
  uint64_t denials() const { return m_denials; }
  uint64_t dropped() const { return m_dropped; }
  int pendingAsks() const { return m_pendingAsks; }

  EventModel* eventModel() const { return m_eventModel; }
  ProcessTreeModel* processModel() const { return m_processModel; }
  // The hosts its events reached, grown with the event model's batches.
  HostModel* hostModel() const { return m_hostModel; }

  // Takes in one message of this session (the hub routes them; tests too).
  void apply(const proto::Message& m);

 private:
  friend class SessionHub;

  quint64 m_connection;
  proto::Hello m_hello;
  State m_state = State::Running;
  std::optional<SessionEnd> m_end;
  std::vector<std::string> m_degraded;
  uint64_t m_events = 0, m_asks = 0, m_denials = 0, m_dropped = 0;
  int m_pendingAsks = 0;
  EventModel* m_eventModel;
  ProcessTreeModel* m_processModel;
  HostModel* m_hostModel;
};

class SessionHub : public QObject {
  Q_OBJECT
 public:
  SessionHub(GuiServer* server, PromptController* prompts, QObject* parent = nullptr);

  const std::vector<LiveSession*>& sessions() const { return m_sessions; }
  LiveSession* byConnection(quint64 connection) const { return m_byConnection.value(connection); }
  LiveSession* byUuid(const QString& uuid) const;
  // Recorded as the approvals' answered_by.
  void setName(const QString& name) { m_name = name; }

 signals:
  void sessionAdded(cb::gui::LiveSession* session);
  // Counts and state; a few times a second at most.
  void sessionChanged(cb::gui::LiveSession* session);

 private:
  void onMessage(quint64 connection, const proto::Message& m);
  void onDisconnected(quint64 connection);
  void onAnswered(const Prompt& p, const proto::Answer& a);
  void touch(LiveSession* s);

  GuiServer* m_server;
  PromptController* m_prompts;
  QString m_name = QStringLiteral("gui");
  std::vector<LiveSession*> m_sessions;
  QHash<quint64, LiveSession*> m_byConnection;
  QSet<LiveSession*> m_dirty;
  QTimer m_changeTimer;
};

}  // namespace cb::gui
