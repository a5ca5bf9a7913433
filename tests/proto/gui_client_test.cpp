// The supervisor's side of the GUI connection, against a scripted server on a
// real Unix socket: the handshake, asks and answers, folding updates, a slow
// GUI (events dropped and counted, asks never), a GUI that goes away.
#include "ask/gui_client.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "base/fd.h"
#include "proto/protocol.h"

namespace cb {
namespace {

using namespace std::chrono_literals;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class TempDir {
 public:
  TempDir() {
    char t[] = "/tmp/cb-guiclient.XXXXXX";
    path_ = mkdtemp(t);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// One connection at a time, read line by line with a timeout.
class FakeServer {
 public:
  explicit FakeServer(const std::string& path) : path_(path) {
    listen_.reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    path.copy(a.sun_path, path.size());
    EXPECT_EQ(bind(listen_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listen_.get(), 4), 0);
  }

  bool accept(int timeout_ms = 3000) {
    pollfd p{listen_.get(), POLLIN, 0};
    if (poll(&p, 1, timeout_ms) != 1) return false;
    conn_.reset(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    return conn_.valid();
  }

  // The next decoded message, skipping nothing; nullopt on timeout or EOF.
  std::optional<proto::Message> next(int timeout_ms = 3000) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      if (auto l = reader_.next()) {
        auto m = proto::decode(*l);
        EXPECT_TRUE(m) << *l;
        if (m) return *m;
        continue;
      }
      int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count());
      if (left <= 0) return std::nullopt;
      pollfd p{conn_.get(), POLLIN, 0};
      if (poll(&p, 1, left) != 1) continue;
      char buf[65536];
      ssize_t n = read(conn_.get(), buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      reader_.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
  }

  template <typename T>
  std::optional<T> next_of(int timeout_ms = 3000) {
    while (auto m = next(timeout_ms))
      if (auto* t = std::get_if<T>(&*m)) return *t;
    return std::nullopt;
  }

  void send_line(const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(conn_.get(), l.data(), l.size()), static_cast<ssize_t>(l.size()));
  }
  void send(const proto::Message& m) { send_line(proto::encode(m)); }
  void close_conn() { conn_.reset(); }

  // Answers the hello with a welcome, in the background.
  std::thread welcome_in_background(proto::Welcome w = {proto::kVersion, "test-server", "tester"}) {
    return std::thread([this, w] {
      if (!accept()) return;
      auto h = next_of<proto::Hello>();
      if (h) hello = *h;
      send(w);
    });
  }

  std::optional<proto::Hello> hello;

 private:
  std::string path_;
  UniqueFd listen_, conn_;
  proto::LineReader reader_;
};

SessionStart session_start() {
  SessionStart s;
  s.uuid = "u-1";
  s.name = "agent";
  s.argv = {"sh", "-c", "rm build/x.o"};
  s.cwd = "/home/u/proj";
  s.user = "u";
  s.started_ns = now_ns();
  s.tracer = "seccomp";
  s.ask_mode = "gui";
  return s;
}

AskRequest ask_request(uint64_t id, int64_t deadline_ns) {
  AskRequest r;
  r.ask_id = id;
  r.session = 3;
  r.row.seq = 10 + id;
  r.row.ev.action = Action::FileDelete;
  r.row.ev.path = "/home/u/proj/build/x.o";
  r.row.ev.pid = 4001;
  r.row.verdict.decision = Decision::Ask;
  r.row.verdict.rule_id = "ask-build";
  r.chain = {{4001, "rm", {"rm", "build/x.o"}}, {4000, "sh", {"sh", "-c", "rm build/x.o"}}};
  r.summary = "delete 1 file";
  r.asked_ns = now_ns();
  r.deadline_ns = deadline_ns;
  return r;
}

struct Answers {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::tuple<uint64_t, AskAnswer, std::string>> got;
  void attach(GuiClient& c) {
    c.answer = [this](uint64_t id, AskAnswer a, const std::string& by, const std::string& rule) {
      (void)rule;
      std::lock_guard<std::mutex> g(mu);
      got.emplace_back(id, a, by);
      cv.notify_all();
    };
  }
  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> g(mu);
    return cv.wait_for(g, 3s, [&] { return got.size() >= n; });
  }
};

TEST(GuiClient, FailsWhenNothingListens) {
  TempDir d;
  auto c = GuiClient::connect(d.path() + "/gui.sock", session_start(), 3);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().err, ENOENT);
  EXPECT_FALSE(GuiClient::connect("", session_start(), 3));
}

TEST(GuiClient, FailsWithoutAWelcomeOrWithAnotherVersion) {
  TempDir d;
  std::string path = d.path() + "/gui.sock";
  FakeServer s(path);
  std::thread t = s.welcome_in_background({proto::kVersion + 1, "future", "gui"});
  auto c = GuiClient::connect(path, session_start(), 3);
  t.join();
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("version"), std::string::npos) << c.error().message;

  // A server that accepts and never answers: the caller falls back after the handshake timeout.
  std::thread silent([&] { s.accept(); });
  auto t0 = std::chrono::steady_clock::now();
  auto c2 = GuiClient::connect(path, session_start(), 3);
  silent.join();
  EXPECT_FALSE(c2);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(GuiClient, AnnouncesAsksAndDeliversAnswers) {
  TempDir d;
  std::string path = d.path() + "/gui.sock";
  FakeServer s(path);
  std::thread t = s.welcome_in_background();
  auto c = GuiClient::connect(path, session_start(), 3);
  t.join();
  ASSERT_TRUE(c) << c.error().message;
  GuiClient& gui = **c;
  ASSERT_TRUE(s.hello);
  EXPECT_EQ(s.hello->version, proto::kVersion);
  EXPECT_EQ(s.hello->session.id, 3);
  EXPECT_EQ(s.hello->session.start.uuid, "u-1");
  EXPECT_EQ(s.hello->session.start.argv[2], "rm build/x.o");
  EXPECT_EQ(gui.name(), "tester");
  EXPECT_TRUE(gui.connected());
  Answers answers;
  answers.attach(gui);

  ProcessRow pr;
  pr.proc_id = 1;
  pr.comm = "sh";
  gui.process(pr);
  gui.degraded("no Landlock");
  gui.ask(ask_request(1, now_ns() + 60'000'000'000));
  auto p = s.next_of<proto::ProcessMsg>();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->row.comm, "sh");
  auto dg = s.next_of<proto::DegradedMsg>();
  ASSERT_TRUE(dg);
  EXPECT_EQ(dg->reason, "no Landlock");
  auto a = s.next_of<proto::AskMsg>();
  ASSERT_TRUE(a);
  EXPECT_EQ(a->ask_id, 1u);
  EXPECT_EQ(a->summary, "delete 1 file");
  EXPECT_EQ(a->row.verdict.rule_id, "ask-build");
  ASSERT_EQ(a->chain.size(), 2u);
  EXPECT_EQ(a->chain[1].comm, "sh");

  // Folding: the count grows, the words follow.
  gui.update(1, 240);
  auto u = s.next_of<proto::AskUpdate>();
  ASSERT_TRUE(u);
  EXPECT_EQ(u->count, 240u);
  EXPECT_EQ(u->summary, "delete 240 files under build/");

  // Garbage and answers to unknown asks change nothing; the real answer arrives.
  s.send_line("this is not json");
  s.send_line(R"({"type":"answer","ask_id":99,"decision":"allow"})");
  s.send_line(R"({"type":"some_future_thing","x":1})");
  s.send(proto::Answer{1, true, proto::Scope::Tree, "", "", false});
  ASSERT_TRUE(answers.wait_for(1));
  {
    std::lock_guard<std::mutex> g(answers.mu);
    ASSERT_EQ(answers.got.size(), 1u);
    EXPECT_EQ(std::get<0>(answers.got[0]), 1u);
    EXPECT_EQ(std::get<1>(answers.got[0]), AskAnswer::AllowTree);
    EXPECT_EQ(std::get<2>(answers.got[0]), "tester");
  }
  // A second answer to the same ask is ignored.
  s.send(proto::Answer{1, false, proto::Scope::Once, "", "", false});

  // Each answer maps to the supervisor's vocabulary.
  struct Case {
    proto::Answer a;
    AskAnswer want;
  } cases[] = {
      {{2, true, proto::Scope::Once, "", "", false}, AskAnswer::AllowOnce},
      {{3, false, proto::Scope::Once, "", "", false}, AskAnswer::DenyOnce},
      {{4, false, proto::Scope::Tree, "", "", false}, AskAnswer::DenyTree},
      {{5, true, proto::Scope::Always, "  - id: x\n", "", false}, AskAnswer::AllowAlways},
      {{6, false, proto::Scope::Always, "  - id: y\n", "", false}, AskAnswer::DenyAlways},
      {{7, false, proto::Scope::Once, "", "bob", true}, AskAnswer::Timeout},
  };
  for (auto& k : cases) gui.ask(ask_request(k.a.ask_id, now_ns() + 60'000'000'000));
  for (auto& k : cases) {
    ASSERT_TRUE(s.next_of<proto::AskMsg>());
    s.send(k.a);
  }
  ASSERT_TRUE(answers.wait_for(1 + std::size(cases)));
  {
    std::lock_guard<std::mutex> g(answers.mu);
    for (size_t i = 0; i < std::size(cases); ++i) {
      EXPECT_EQ(std::get<0>(answers.got[i + 1]), cases[i].a.ask_id);
      EXPECT_EQ(std::get<1>(answers.got[i + 1]), cases[i].want) << i;
    }
    EXPECT_EQ(std::get<2>(answers.got.back()), "bob");
  }

  // Cancels say why.
  gui.ask(ask_request(20, now_ns() - 1));
  gui.ask(ask_request(21, now_ns() + 60'000'000'000));
  gui.cancel(20);
  gui.cancel(21);
  auto c1 = s.next_of<proto::AskCancel>();
  auto c2 = s.next_of<proto::AskCancel>();
  ASSERT_TRUE(c1 && c2);
  EXPECT_EQ(c1->reason, "timeout");
  EXPECT_EQ(c2->reason, "ended");

  gui.session_end({now_ns(), 0, 0, SessionState::Ended});
  auto e = s.next_of<proto::EndMsg>();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->session, 3);
  EXPECT_EQ(e->end.exit_status, 0);
}

TEST(GuiClient, ASlowGuiLosesEventsNeverAsks) {
  TempDir d;
  std::string path = d.path() + "/gui.sock";
  FakeServer s(path);
  std::thread t = s.welcome_in_background();
  auto c = GuiClient::connect(path, session_start(), 3);
  t.join();
  ASSERT_TRUE(c);
  GuiClient& gui = **c;

  // The server reads nothing for now: the socket buffer fills, then the queue.
  EventRow row;
  row.ev.action = Action::FileWrite;
  row.ev.path = "/home/u/proj/" + std::string(200, 'f');
  auto t0 = std::chrono::steady_clock::now();
  constexpr int kEvents = 60000;
  for (int i = 0; i < kEvents; ++i) {
    row.seq = static_cast<uint64_t>(i);
    gui.event(row);
    if (i == kEvents / 2) gui.ask(ask_request(1, now_ns() + 60'000'000'000));
  }
  // The supervisor never waits on the GUI.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);

  gui.session_end({now_ns(), 0, 0, SessionState::Ended});  // bounded wait, the GUI is stuck
  uint64_t events = 0, dropped = 0, last_seq = 0;
  bool ask = false, end = false, ordered = true;
  while (auto m = s.next(2000)) {
    if (auto* e = std::get_if<proto::EventMsg>(&*m)) {
      if (events && e->row.seq <= last_seq) ordered = false;
      last_seq = e->row.seq;
      ++events;
    } else if (auto* dm = std::get_if<proto::DroppedMsg>(&*m)) {
      EXPECT_GE(dm->events, dropped);
      dropped = dm->events;
    } else if (std::holds_alternative<proto::AskMsg>(*m)) {
      ask = true;
    } else if (std::holds_alternative<proto::EndMsg>(*m)) {
      end = true;
      break;
    }
  }
  EXPECT_TRUE(ask);
  EXPECT_TRUE(end);
  EXPECT_TRUE(ordered);
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(events + dropped, static_cast<uint64_t>(kEvents));
}

TEST(GuiClient, AGuiThatGoesAwayStopsDelivery) {
  TempDir d;
  std::string path = d.path() + "/gui.sock";
  FakeServer s(path);
  std::thread t = s.welcome_in_background();
  auto c = GuiClient::connect(path, session_start(), 3);
  t.join();
  ASSERT_TRUE(c);
  GuiClient& gui = **c;
  Answers answers;
  answers.attach(gui);
  gui.ask(ask_request(1, now_ns() + 60'000'000'000));
  ASSERT_TRUE(s.next_of<proto::AskMsg>());
  s.close_conn();
  for (int i = 0; i < 100 && gui.connected(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(gui.connected());
  // Nothing blocks, nothing is answered: the supervisor's deadline decides.
  EventRow row;
  for (int i = 0; i < 1000; ++i) gui.event(row);
  gui.ask(ask_request(2, now_ns() + 60'000'000'000));
  auto t0 = std::chrono::steady_clock::now();
  gui.session_end({now_ns(), 0, 0, SessionState::Ended});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 500ms);
  std::lock_guard<std::mutex> g(answers.mu);
  EXPECT_TRUE(answers.got.empty());
}

TEST(GuiClient, RefusesAServerOfAnotherUser) {
  if (getuid() != 0) GTEST_SKIP() << "needs root to serve the socket as another uid";
  TempDir d;
  std::string path = d.path() + "/gui.sock";
  chmod(d.path().c_str(), 01777);
  pid_t child = fork();
  if (child == 0) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(2);
    FakeServer s(path);
    chmod(path.c_str(), 0777);
    if (!s.accept(3000)) _exit(3);
    s.next(3000);
    s.send(proto::Welcome{proto::kVersion, "impostor", "gui"});
    sleep(1);
    _exit(0);
  }
  for (int i = 0; i < 200 && access(path.c_str(), F_OK) != 0; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(50ms);
  auto c = GuiClient::connect(path, session_start(), 3);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().err, EPERM) << c.error().message;
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace cb
