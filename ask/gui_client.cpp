#include "ask/gui_client.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "base/fd.h"
#include "proto/protocol.h"

namespace cb {
namespace {

// Events waiting for a slow GUI beyond this are dropped, oldest first: the
// GUI is a view, the audit database is the record.
constexpr size_t kMaxQueuedEvents = 8192;
// Encoded bytes kept ready for the socket; more stay queued (and droppable).
constexpr size_t kMaxOutBuffer = 256u << 10;
constexpr int kHandshakeMs = 2000;
constexpr int kEndFlushMs = 2000;
constexpr int kMaxLoggedMalformed = 3;

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t mono_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool send_all(int fd, std::string_view data, int timeout_ms) {
  int64_t until = mono_ms() + timeout_ms;
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return false;
    int left = static_cast<int>(until - mono_ms());
    if (left <= 0) return false;
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, left);
  }
  return true;
}

AskAnswer to_ask_answer(const proto::Answer& a) {
  if (a.timeout) return AskAnswer::Timeout;
  switch (a.scope) {
    case proto::Scope::Once: return a.allow ? AskAnswer::AllowOnce : AskAnswer::DenyOnce;
    case proto::Scope::Tree: return a.allow ? AskAnswer::AllowTree : AskAnswer::DenyTree;
    case proto::Scope::Always: return a.allow ? AskAnswer::AllowAlways : AskAnswer::DenyAlways;
  }
  return AskAnswer::DenyOnce;
}

}  // namespace

std::string default_gui_socket_path() { return proto::default_socket_path(); }

struct GuiClient::Impl {
  GuiClient* owner = nullptr;
  UniqueFd sock;
  UniqueFd wake;  // eventfd: something was queued, or stop
  std::thread thread;
  proto::LineReader reader;
  std::string server_name;  // recorded as answered_by
  std::string cwd;          // the session's, for shorter summaries
  int64_t session = 0;

  std::atomic<bool> connected{true};

  struct Item {
    uint64_t seq;
    proto::Message msg;
  };
  struct PendingAsk {
    int64_t deadline_ns = 0;
    Event ev;
  };

  std::mutex mu;
  std::condition_variable drained;  // queues and out buffer empty, or disconnected
  // Two queues so that dropping the oldest event is O(1); `seq` restores the
  // order in which the supervisor produced them.
  std::deque<Item> events;
  std::deque<Item> others;  // never dropped: asks, processes, session lines
  uint64_t next_seq = 0;
  uint64_t dropped = 0;
  bool stop = false;
  bool out_empty = true;
  std::map<uint64_t, PendingAsk> asks;

  // Thread-only state.
  std::string out;
  uint64_t dropped_sent = 0;
  int malformed_logged = 0;

  void enqueue(proto::Message m, bool droppable) {
    if (!connected.load(std::memory_order_relaxed)) return;
    bool was_empty;
    {
      std::lock_guard<std::mutex> g(mu);
      was_empty = events.empty() && others.empty();
      if (droppable) {
        if (events.size() >= kMaxQueuedEvents) {
          events.pop_front();
          ++dropped;
        }
        events.push_back({next_seq++, std::move(m)});
      } else {
        others.push_back({next_seq++, std::move(m)});
      }
    }
    // The thread drains everything each time it wakes, so only the first
    // item after an empty queue costs a syscall.
    if (was_empty) poke();
  }

  void poke() {
    uint64_t one = 1;
    (void)!write(wake.get(), &one, sizeof one);
  }

  // Moves queued messages into `out` (encoding happens here, off the
  // supervisor's thread) until the buffer is full.
  void fill() {
    std::vector<proto::Message> batch;
    uint64_t lost = 0;
    {
      std::lock_guard<std::mutex> g(mu);
      size_t budget = out.size() < kMaxOutBuffer ? 512 : 0;
      while (budget-- > 0 && (!events.empty() || !others.empty())) {
        bool from_events = others.empty() || (!events.empty() && events.front().seq < others.front().seq);
        auto& q = from_events ? events : others;
        batch.push_back(std::move(q.front().msg));
        q.pop_front();
      }
      lost = dropped;
      if (!batch.empty()) out_empty = false;
    }
    if (lost > dropped_sent) {
      // Said before the events that follow the gap.
      out += proto::encode(proto::DroppedMsg{lost});
      out += '\n';
      dropped_sent = lost;
    }
    for (auto& m : batch) {
      out += proto::encode(m);
      out += '\n';
    }
  }

  void set_out_empty() {
    std::lock_guard<std::mutex> g(mu);
    out_empty = true;
    if (events.empty() && others.empty()) drained.notify_all();
  }

  void disconnect() {
    connected = false;
    std::lock_guard<std::mutex> g(mu);
    events.clear();
    others.clear();
    asks.clear();
    out_empty = true;
    drained.notify_all();
  }

  void on_line(const std::string& line) {
    auto m = proto::decode(line);
    if (!m) {
      if (malformed_logged++ < kMaxLoggedMalformed)
        std::cerr << "cottonbox: ignored a malformed line from the GUI: " << m.error().message << "\n";
      return;
    }
    auto* a = std::get_if<proto::Answer>(&*m);
    if (!a) return;  // welcome again, or a type this build does not know
    {
      std::lock_guard<std::mutex> g(mu);
      // An answer for an ask that has ended (or never was) changes nothing.
      if (asks.erase(a->ask_id) == 0) return;
    }
    if (owner->answer) owner->answer(a->ask_id, to_ask_answer(*a), a->by.empty() ? server_name : a->by, a->rule);
  }

  void loop() {
    char buf[64 << 10];
    while (true) {
      {
        std::lock_guard<std::mutex> g(mu);
        if (stop) break;
      }
      if (out.size() < kMaxOutBuffer) fill();
      if (out.empty()) set_out_empty();
      pollfd p[2] = {{sock.get(), static_cast<short>(POLLIN | (out.empty() ? 0 : POLLOUT)), 0},
                     {wake.get(), POLLIN, 0}};
      if (poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (p[1].revents & POLLIN) {
        uint64_t n;
        (void)!read(wake.get(), &n, sizeof n);
      }
      if (p[0].revents & POLLOUT) {
        ssize_t n = send(sock.get(), out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
          out.erase(0, static_cast<size_t>(n));
        else if (n < 0 && errno != EAGAIN && errno != EINTR) {
          disconnect();
          break;
        }
      }
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        ssize_t n = recv(sock.get(), buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
          reader.feed(std::string_view(buf, static_cast<size_t>(n)));
          while (auto line = reader.next()) on_line(*line);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          // The GUI went away: stop delivering.  Pending asks end at the
          // supervisor's own deadline, denied.
          disconnect();
          break;
        }
      }
    }
  }
};

GuiClient::GuiClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

GuiClient::~GuiClient() {
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    impl_->stop = true;
  }
  impl_->poke();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<GuiClient>> GuiClient::connect(const std::string& socket_path, const SessionStart& session,
                                                      int64_t session_id) {
  if (socket_path.empty()) return Error{ENOENT, "XDG_RUNTIME_DIR is not set"};
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) return Error{ENAMETOOLONG, socket_path + ": path too long"};
  socket_path.copy(addr.sun_path, socket_path.size());
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error::from_errno("socket");
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return Error::from_errno(socket_path);
  // The directory is private, but check anyway: asks go to whoever listens.
  auto uid = proto::peer_uid(fd.get());
  if (!uid) return uid.error();
  if (*uid != getuid())
    return Error{EPERM, socket_path + " is served by another user (uid " + std::to_string(*uid) + ")"};

  auto impl = std::make_unique<Impl>();
  impl->session = session_id;
  impl->cwd = session.cwd;
  proto::Hello hello;
  hello.client = "cottonbox " + std::string(proto::software_version());
  hello.session.id = session_id;
  hello.session.start = session;
  hello.session.state = SessionState::Running;
  if (!send_all(fd.get(), proto::encode(hello) + "\n", kHandshakeMs))
    return Error::from_errno(socket_path + ": cannot send the session announcement");

  // The welcome tells us a GUI speaking our version is really there.
  int64_t until = mono_ms() + kHandshakeMs;
  std::optional<proto::Welcome> welcome;
  char buf[4096];
  while (!welcome) {
    int left = static_cast<int>(until - mono_ms());
    if (left <= 0) return Error{ETIMEDOUT, socket_path + ": no welcome from the GUI"};
    pollfd p{fd.get(), POLLIN, 0};
    if (poll(&p, 1, left) <= 0) continue;
    ssize_t n = recv(fd.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return Error{ECONNRESET, socket_path + ": the GUI closed the connection"};
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return Error::from_errno(socket_path);
    }
    impl->reader.feed(std::string_view(buf, static_cast<size_t>(n)));
    while (auto line = impl->reader.next()) {
      auto m = proto::decode(*line);
      if (!m) continue;
      if (auto* w = std::get_if<proto::Welcome>(&*m)) {
        welcome = *w;
        break;
      }
    }
  }
  if (welcome->version != proto::kVersion)
    return Error{EPROTO, "the GUI speaks protocol version " + std::to_string(welcome->version) + ", this cottonbox " +
                             std::to_string(proto::kVersion)};
  impl->server_name = welcome->name.empty() ? "gui" : welcome->name;
  impl->sock = std::move(fd);
  impl->wake.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl->wake) return Error::from_errno("eventfd");

  std::unique_ptr<GuiClient> c(new GuiClient(std::move(impl)));
  c->impl_->owner = c.get();
  // Lines that arrived with the welcome (an early answer cannot exist yet;
  // anything else is ignored) are handled by the thread as usual.
  c->impl_->thread = std::thread([p = c->impl_.get()] {
    while (auto line = p->reader.next()) p->on_line(*line);
    p->loop();
  });
  return c;
}

std::string GuiClient::name() const { return impl_->server_name; }

bool GuiClient::connected() const { return impl_->connected.load(); }

void GuiClient::ask(const AskRequest& req) {
  if (!connected()) return;
  proto::AskMsg m;
  m.ask_id = req.ask_id;
  m.session = req.session ? req.session : impl_->session;
  m.session_name = req.session_name;
  m.row = req.row;
  for (const auto& l : req.chain) m.chain.push_back({l.pid, l.comm, l.argv});
  m.count = req.count;
  // The same words the updates use, with paths below the session's cwd shortened.
  m.summary = summarize(req.row.ev, req.count, impl_->cwd);
  if (m.summary.empty()) m.summary = req.summary;
  m.asked_ns = req.asked_ns;
  m.deadline_ns = req.deadline_ns;
  m.why = req.why;
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    impl_->asks[req.ask_id] = {req.deadline_ns, req.row.ev};
  }
  impl_->enqueue(std::move(m), false);
}

void GuiClient::update(uint64_t ask_id, uint32_t count) {
  std::string summary;
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    auto it = impl_->asks.find(ask_id);
    if (it == impl_->asks.end()) return;
    summary = summarize(it->second.ev, count, impl_->cwd);
  }
  impl_->enqueue(proto::AskUpdate{ask_id, count, std::move(summary)}, false);
}

void GuiClient::cancel(uint64_t ask_id) {
  int64_t deadline;
  {
    std::lock_guard<std::mutex> g(impl_->mu);
    auto it = impl_->asks.find(ask_id);
    if (it == impl_->asks.end()) return;
    deadline = it->second.deadline_ns;
    impl_->asks.erase(it);
  }
  impl_->enqueue(proto::AskCancel{ask_id, now_ns() >= deadline ? "timeout" : "ended"}, false);
}

void GuiClient::event(const EventRow& row) {
  if (!connected()) return;
  impl_->enqueue(proto::EventMsg{impl_->session, row}, true);
}

void GuiClient::process(const ProcessRow& row) { impl_->enqueue(proto::ProcessMsg{impl_->session, row}, false); }
void GuiClient::process_exec(const ProcessExec& e) { impl_->enqueue(proto::ExecMsg{e}, false); }
void GuiClient::process_exit(const ProcessExit& e) { impl_->enqueue(proto::ExitMsg{e}, false); }
void GuiClient::approval(const ApprovalRow& a) { impl_->enqueue(proto::ApprovalMsg{a}, false); }
void GuiClient::degraded(const std::string& reason) { impl_->enqueue(proto::DegradedMsg{reason}, false); }

void GuiClient::session_end(const SessionEnd& end) {
  impl_->enqueue(proto::EndMsg{impl_->session, end}, false);
  std::unique_lock<std::mutex> g(impl_->mu);
  impl_->drained.wait_for(g, std::chrono::milliseconds(kEndFlushMs), [&] {
    return !impl_->connected.load() || (impl_->events.empty() && impl_->others.empty() && impl_->out_empty);
  });
}

}  // namespace cb
