// The GUI's end of the protocol (docs/protocol.md): listens on the user's
// socket, accepts supervisors of the same user only (SO_PEERCRED), turns
// their lines into messages and sends answers back.  Nothing here knows
// what a message means; SessionHub does.
#pragma once

#include <QHash>
#include <QObject>
#include <QString>
#include <memory>

#include "proto/protocol.h"

class QLocalServer;
class QLocalSocket;

namespace cb::gui {

class GuiServer : public QObject {
  Q_OBJECT
 public:
  explicit GuiServer(QObject* parent = nullptr);
  ~GuiServer() override;

  // Listens on `path` (default: proto::default_socket_path()).  Refuses to
  // take over a socket another live GUI is serving; removes a stale one.
  bool listen(const QString& path = QString());
  void close();
  bool isListening() const;
  QString socketPath() const { return m_path; }
  QString errorString() const { return m_error; }

  void send(quint64 connection, const proto::Message& message);
  void closeConnection(quint64 connection);
  int connectionCount() const { return static_cast<int>(m_connections.size()); }
  uint64_t malformedLines() const { return m_malformed; }
  uint64_t refusedPeers() const { return m_refused; }

 signals:
  void connected(quint64 connection);
  // Delivered synchronously, in order, for every line that decodes.
  void message(quint64 connection, const cb::proto::Message& message);
  void disconnected(quint64 connection);
  void malformedLine(quint64 connection, const QString& why);
  void peerRefused(const QString& why);

 private:
  struct Connection {
    QLocalSocket* socket = nullptr;
    proto::LineReader reader;
  };
  void onNewConnection();
  void onReadyRead(quint64 id);

  QLocalServer* m_server = nullptr;
  QString m_path;
  QString m_error;
  quint64 m_nextId = 1;
  QHash<quint64, std::shared_ptr<Connection>> m_connections;
  uint64_t m_malformed = 0;
  uint64_t m_refused = 0;
};

}  // namespace cb::gui
