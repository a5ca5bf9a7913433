#include "gui/sessionhub.h"

#include "db/report.h"
#include "gui/guiserver.h"
#include "gui/text.h"

namespace cb::gui {

LiveSession::LiveSession(quint64 connection, proto::Hello hello, QObject* parent)
    : QObject(parent),
      m_connection(connection),
      m_hello(std::move(hello)),
      m_degraded(m_hello.session.degraded),
      m_eventModel(new EventModel(EventModel::kDefaultCapacity, this)),
      m_processModel(new ProcessTreeModel(this)),
      m_hostModel(new HostModel(HostModel::kDefaultCapacity, this)) {
  m_eventModel->setCwd(m_hello.session.start.cwd);
  m_processModel->setLive(true);
  m_hostModel->follow(m_eventModel, m_processModel);
}

QString LiveSession::uuid() const { return qs(m_hello.session.start.uuid); }

QString LiveSession::label() const {
  const auto& st = m_hello.session.start;
  QString what = !st.name.empty() ? safe(st.name) : st.argv.empty() ? tr("session") : safe(st.argv.front());
  return tr("%1 (#%2)").arg(what).arg(m_hello.session.id);
}

void LiveSession::apply(const proto::Message& msg) {
  std::visit(
      [this](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::EventMsg>) {
          const EventRow& r = m.row;
          m_events += r.count;
          bool denied = !r.allowed;
          if (denied) m_denials += r.count;
          if (r.verdict.decision == Decision::Ask) m_asks += r.count;
          if (r.ev.proc) m_processModel->countEvent(r.ev.proc->proc_id, denied);
          m_eventModel->enqueue(EventItem{0, m.session, r, std::nullopt});
        } else if constexpr (std::is_same_v<T, proto::ProcessMsg>) {
          m_processModel->addProcess(m.row);
        } else if constexpr (std::is_same_v<T, proto::ExecMsg>) {
          m_processModel->execProcess(m.exec);
        } else if constexpr (std::is_same_v<T, proto::ExitMsg>) {
          m_processModel->exitProcess(m.exit);
        } else if constexpr (std::is_same_v<T, proto::DegradedMsg>) {
          if (std::find(m_degraded.begin(), m_degraded.end(), m.reason) == m_degraded.end())
            m_degraded.push_back(m.reason);
        } else if constexpr (std::is_same_v<T, proto::DroppedMsg>) {
          m_dropped = m.events;
        } else if constexpr (std::is_same_v<T, proto::AskMsg>) {
          ++m_pendingAsks;
        } else if constexpr (std::is_same_v<T, proto::AskCancel>) {
          if (m_pendingAsks > 0) --m_pendingAsks;
        } else if constexpr (std::is_same_v<T, proto::EndMsg>) {
          m_end = m.end;
          m_state = State::Ended;
          m_pendingAsks = 0;
          m_eventModel->flush();
          m_processModel->setLive(false);
        }
      },
      msg);
}

// ------------------------------------------------------------------- hub --

SessionHub::SessionHub(GuiServer* server, PromptController* prompts, QObject* parent)
    : QObject(parent), m_server(server), m_prompts(prompts) {
  m_changeTimer.setInterval(250);
  m_changeTimer.setSingleShot(true);
  connect(&m_changeTimer, &QTimer::timeout, this, [this] {
    const auto dirty = m_dirty;
    m_dirty.clear();
    for (LiveSession* s : dirty) emit sessionChanged(s);
  });
  connect(server, &GuiServer::message, this, &SessionHub::onMessage);
  connect(server, &GuiServer::disconnected, this, &SessionHub::onDisconnected);
  connect(prompts, &PromptController::answered, this, &SessionHub::onAnswered);
}

LiveSession* SessionHub::byUuid(const QString& uuid) const {
  for (LiveSession* s : m_sessions)
    if (s->uuid() == uuid) return s;
  return nullptr;
}

void SessionHub::touch(LiveSession* s) {
  m_dirty.insert(s);
  if (!m_changeTimer.isActive()) m_changeTimer.start();
}

void SessionHub::onMessage(quint64 connection, const proto::Message& m) {
  LiveSession* s = m_byConnection.value(connection);
  if (auto* h = std::get_if<proto::Hello>(&m)) {
    if (s) return;  // said twice: the first one counts
    m_server->send(
        connection,
        proto::Welcome{proto::kVersion, "cottonbox-gui " + std::string(proto::software_version()), bytes(m_name)});
    if (h->version != proto::kVersion) {
      // The client refuses us when it sees our version; nothing to show.
      return;
    }
    s = new LiveSession(connection, *h, this);
    m_byConnection.insert(connection, s);
    m_sessions.push_back(s);
    emit sessionAdded(s);
    return;
  }
  if (!s) return;  // nothing before the hello
  s->apply(m);
  if (auto* a = std::get_if<proto::AskMsg>(&m)) {
    m_prompts->enqueue(Prompt{connection, s->label(), s->summary().start.cwd, *a});
  } else if (auto* u = std::get_if<proto::AskUpdate>(&m)) {
    m_prompts->update(connection, u->ask_id, u->count, u->summary);
  } else if (auto* c = std::get_if<proto::AskCancel>(&m)) {
    m_prompts->cancel(connection, c->ask_id);
  }
  touch(s);
}

void SessionHub::onDisconnected(quint64 connection) {
  LiveSession* s = m_byConnection.take(connection);
  m_prompts->dropConnection(connection);
  if (!s) return;
  s->m_eventModel->flush();
  s->m_processModel->setLive(false);
  if (s->m_state == LiveSession::State::Running) s->m_state = LiveSession::State::Lost;
  s->m_pendingAsks = 0;
  touch(s);
}

void SessionHub::onAnswered(const Prompt& p, const proto::Answer& a) {
  if (LiveSession* s = m_byConnection.value(p.connection)) {
    if (s->m_pendingAsks > 0) --s->m_pendingAsks;
    touch(s);
  }
  m_server->send(p.connection, a);
}

}  // namespace cb::gui
