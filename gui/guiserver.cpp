#include "gui/guiserver.h"

#include <sys/stat.h>
#include <unistd.h>

#include <QLocalServer>
#include <QLocalSocket>
#include <QtDebug>

#include "gui/text.h"

namespace cb::gui {

GuiServer::GuiServer(QObject* parent) : QObject(parent) {}

GuiServer::~GuiServer() { close(); }

bool GuiServer::listen(const QString& requested) {
  close();
  m_path = requested.isEmpty() ? qs(proto::default_socket_path()) : requested;
  if (m_path.isEmpty()) {
    m_error = tr("XDG_RUNTIME_DIR is not set, so there is no private place for the socket");
    return false;
  }
  std::string path = bytes(m_path);
  if (auto r = proto::prepare_socket_dir(path); !r) {
    m_error = qs(r.error().message);
    return false;
  }
  // A socket that answers belongs to another GUI: leave it alone.  One that
  // refuses is left over from a GUI that died.
  {
    QLocalSocket probe;
    probe.connectToServer(m_path);
    if (probe.waitForConnected(300)) {
      m_error = tr("another cottonbox GUI is already listening on %1").arg(m_path);
      return false;
    }
    QLocalServer::removeServer(m_path);
  }
  m_server = new QLocalServer(this);
  // The directory is 0700, so nobody else can reach the socket between
  // listen() and the chmod below.
  if (!m_server->listen(m_path)) {
    m_error = m_server->errorString();
    delete m_server;
    m_server = nullptr;
    return false;
  }
  ::chmod(path.c_str(), 0600);
  connect(m_server, &QLocalServer::newConnection, this, &GuiServer::onNewConnection);
  m_error.clear();
  return true;
}

void GuiServer::close() {
  const auto ids = m_connections.keys();
  for (quint64 id : ids) closeConnection(id);
  if (m_server) {
    m_server->close();
    delete m_server;
    m_server = nullptr;
  }
}

bool GuiServer::isListening() const { return m_server && m_server->isListening(); }

void GuiServer::onNewConnection() {
  while (QLocalSocket* s = m_server->nextPendingConnection()) {
    auto uid = proto::peer_uid(static_cast<int>(s->socketDescriptor()));
    if (!uid || *uid != getuid()) {
      ++m_refused;
      QString why = uid ? tr("refused a connection from uid %1").arg(*uid) : qs(uid.error().message);
      qWarning().noquote() << "cottonbox-gui:" << why;
      emit peerRefused(why);
      s->abort();
      s->deleteLater();
      continue;
    }
    quint64 id = m_nextId++;
    auto c = std::make_shared<Connection>();
    c->socket = s;
    s->setParent(this);
    m_connections.insert(id, c);
    connect(s, &QLocalSocket::readyRead, this, [this, id] { onReadyRead(id); });
    connect(s, &QLocalSocket::disconnected, this, [this, id] {
      onReadyRead(id);  // the last lines may arrive with the close
      closeConnection(id);
    });
    emit connected(id);
    // Bytes that arrived with the connection.
    if (s->bytesAvailable() > 0) onReadyRead(id);
  }
}

void GuiServer::onReadyRead(quint64 id) {
  auto c = m_connections.value(id);
  if (!c) return;
  QByteArray data = c->socket->readAll();
  c->reader.feed(std::string_view(data.constData(), static_cast<size_t>(data.size())));
  while (auto line = c->reader.next()) {
    if (line->empty()) continue;
    auto m = proto::decode(*line);
    if (!m) {
      // Logged and skipped: one bad line must not end a session's view.
      ++m_malformed;
      QString why = qs(m.error().message);
      qWarning().noquote() << "cottonbox-gui: skipped a malformed line:" << why;
      emit malformedLine(id, why);
      continue;
    }
    emit message(id, *m);
    if (!m_connections.contains(id)) return;  // a handler closed it
  }
}

void GuiServer::send(quint64 id, const proto::Message& m) {
  auto c = m_connections.value(id);
  if (!c) return;
  std::string line = proto::encode(m);
  line += '\n';
  c->socket->write(line.data(), static_cast<qint64>(line.size()));
  c->socket->flush();
}

void GuiServer::closeConnection(quint64 id) {
  auto c = m_connections.take(id);
  if (!c) return;
  c->socket->disconnect(this);
  c->socket->abort();
  c->socket->deleteLater();
  emit disconnected(id);
}

}  // namespace cb::gui
