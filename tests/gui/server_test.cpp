// The GUI's socket: private (0700 directory, 0600 socket, same uid only),
// not stolen from a running GUI, recovered from a dead one, and tolerant of
// bad lines.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <QDir>
#include <QLocalServer>
#include <QSignalSpy>
#include <QTest>
#include <csignal>

#include "gui/guiserver.h"
#include "gui/promptcontroller.h"
#include "gui/sessionhub.h"
#include "gui_tests.h"

namespace cb::gui::test {
namespace {

int connectRaw(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, path.size());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

void writeLine(int fd, const std::string& line) {
  std::string l = line + "\n";
  QCOMPARE(write(fd, l.data(), l.size()), static_cast<ssize_t>(l.size()));
}

proto::Hello hello(const std::string& uuid) {
  proto::Hello h;
  h.client = "test";
  h.session.id = 42;
  h.session.start.uuid = uuid;
  h.session.start.argv = {"sh"};
  h.session.start.cwd = "/p";
  return h;
}

}  // namespace

void ServerTest::init() {
  m_dir = std::make_unique<QTemporaryDir>();
  QVERIFY(m_dir->isValid());
  m_oldRuntime = qgetenv("XDG_RUNTIME_DIR");
  qputenv("XDG_RUNTIME_DIR", m_dir->path().toLocal8Bit());
}

void ServerTest::cleanup() {
  if (m_oldRuntime.isEmpty())
    qunsetenv("XDG_RUNTIME_DIR");
  else
    qputenv("XDG_RUNTIME_DIR", m_oldRuntime);
}

void ServerTest::socketIsPrivate() {
  // A group/world-readable directory left by someone is tightened.
  QVERIFY(QDir(m_dir->path()).mkdir(QStringLiteral("cottonbox")));
  chmod((m_dir->path() + QStringLiteral("/cottonbox")).toLocal8Bit().constData(), 0755);
  GuiServer s;
  QVERIFY2(s.listen(), qPrintable(s.errorString()));
  QCOMPARE(s.socketPath(), m_dir->path() + QStringLiteral("/cottonbox/gui.sock"));
  struct stat st;
  QCOMPARE(stat((m_dir->path() + QStringLiteral("/cottonbox")).toLocal8Bit().constData(), &st), 0);
  QCOMPARE(st.st_mode & 0777, 0700u);
  QCOMPARE(stat(s.socketPath().toLocal8Bit().constData(), &st), 0);
  QVERIFY(S_ISSOCK(st.st_mode));
  QCOMPARE(st.st_mode & 0777, 0600u);

  qunsetenv("XDG_RUNTIME_DIR");
  GuiServer none;
  QVERIFY(!none.listen());
  QVERIFY(none.errorString().contains(QStringLiteral("XDG_RUNTIME_DIR")));
}

void ServerTest::secondGuiDoesNotStealTheSocket() {
  GuiServer first;
  QVERIFY(first.listen());
  GuiServer second;
  QVERIFY(!second.listen());
  QVERIFY2(second.errorString().contains(QStringLiteral("already listening")), qPrintable(second.errorString()));
  QVERIFY(first.isListening());
  int fd = connectRaw(first.socketPath().toStdString());
  QVERIFY(fd >= 0);
  QTRY_COMPARE(first.connectionCount(), 1);
  close(fd);
}

void ServerTest::staleSocketIsReplaced() {
  std::string path = (m_dir->path() + QStringLiteral("/cottonbox/gui.sock")).toStdString();
  QVERIFY(QDir(m_dir->path()).mkdir(QStringLiteral("cottonbox")));
  chmod((m_dir->path() + QStringLiteral("/cottonbox")).toLocal8Bit().constData(), 0700);
  {
    // Bound, never listening: what a crashed GUI leaves behind.
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, path.size());
    QCOMPARE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    close(fd);
  }
  GuiServer s;
  QVERIFY2(s.listen(), qPrintable(s.errorString()));
  int fd = connectRaw(path);
  QVERIFY(fd >= 0);
  close(fd);
}

void ServerTest::linesBecomeSessionsAndBadLinesAreSkipped() {
  GuiServer s;
  PromptController prompts;
  SessionHub hub(&s, &prompts);
  QVERIFY(s.listen());
  QSignalSpy added(&hub, &SessionHub::sessionAdded);
  QSignalSpy malformed(&s, &GuiServer::malformedLine);
  int fd = connectRaw(s.socketPath().toStdString());
  QVERIFY(fd >= 0);
  writeLine(fd, "{\"type\":\"event\",\"event\":{\"action\":\"file.write\"}}");  // before hello: ignored
  writeLine(fd, proto::encode(hello("uuid-1")));
  writeLine(fd, "garbage");
  writeLine(fd, "{\"type\":\"from_the_future\"}");
  proto::EventMsg ev{42, makeEvent(1, Action::FileDelete, "/p/x", proc(1, 10, "rm"), Decision::Deny, false, "r")};
  writeLine(fd, proto::encode(ev));
  writeLine(fd, proto::encode(proto::AskMsg(ask(5, "/p/y", 60000))));
  QTRY_COMPARE(added.count(), 1);
  LiveSession* live = hub.sessions().front();
  QTRY_COMPARE(live->events(), uint64_t(1));
  QCOMPARE(live->denials(), uint64_t(1));
  QCOMPARE(malformed.count(), 1);
  QTRY_VERIFY(prompts.hasCurrent());
  QCOMPARE(prompts.current().ask.ask_id, uint64_t(5));
  QCOMPARE(prompts.current().sessionLabel, QStringLiteral("sh (#42)"));

  // The welcome came back, then the answer goes to the same connection.
  prompts.allowTree();
  proto::LineReader reader;
  std::vector<proto::Message> got;
  QTRY_VERIFY_WITH_TIMEOUT(([&] {
                             char buf[4096];
                             ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
                             if (n > 0) reader.feed(std::string_view(buf, static_cast<size_t>(n)));
                             while (auto l = reader.next())
                               if (auto m = proto::decode(*l)) got.push_back(*m);
                             return got.size() >= 2;
                           }()),
                           3000);
  QVERIFY(std::holds_alternative<proto::Welcome>(got[0]));
  QCOMPARE(std::get<proto::Welcome>(got[0]).name, std::string("gui"));
  const auto& a = std::get<proto::Answer>(got[1]);
  QCOMPARE(a.ask_id, uint64_t(5));
  QVERIFY(a.allow);
  QCOMPARE(a.scope, proto::Scope::Tree);

  // The supervisor goes away: its prompts go, its session says so.
  writeLine(fd, proto::encode(proto::AskMsg(ask(6, "/p/z", 60000))));
  QTRY_VERIFY(prompts.hasCurrent());
  close(fd);
  QTRY_VERIFY(!prompts.hasCurrent());
  QTRY_COMPARE(live->state(), LiveSession::State::Lost);
}

void ServerTest::otherUsersAreRefused() {
  if (getuid() != 0) QSKIP("needs root to connect as another uid");
  GuiServer s;
  QVERIFY(s.listen());
  QSignalSpy refused(&s, &GuiServer::peerRefused);
  // Open the way on purpose, to see the server's own check.
  chmod(m_dir->path().toLocal8Bit().constData(), 0755);
  chmod((m_dir->path() + QStringLiteral("/cottonbox")).toLocal8Bit().constData(), 0755);
  chmod(s.socketPath().toLocal8Bit().constData(), 0666);
  std::string path = s.socketPath().toStdString();
  pid_t child = fork();
  if (child == 0) {
    signal(SIGPIPE, SIG_IGN);
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(2);
    int fd = connectRaw(path);
    if (fd < 0) _exit(3);
    std::string l = proto::encode(hello("intruder")) + "\n";
    (void)!write(fd, l.data(), l.size());
    char c;
    // The server hangs up without a welcome.
    _exit(read(fd, &c, 1) <= 0 ? 0 : 4);
  }
  QTRY_COMPARE(refused.count(), 1);
  QVERIFY(refused.at(0).at(0).toString().contains(QStringLiteral("65534")));
  int status = -1;
  waitpid(child, &status, 0);
  QVERIFY(WIFEXITED(status));
  QCOMPARE(WEXITSTATUS(status), 0);
  QCOMPARE(s.connectionCount(), 0);
}

}  // namespace cb::gui::test
