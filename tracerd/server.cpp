#include "tracerd/server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "base/fd.h"
#include "trace/core_btf.h"
#include "trace/ebpf_programs.h"
#include "trace/tracer_service.h"
#include "tracerd/peer.h"

namespace cb::tracerd {

namespace {

struct Client {
  UniqueFd fd;
  ucred peer{};
  UniqueFd peer_pidfd;  // SO_PEERPIDFD (Linux 6.5): pins the caller that peer.pid names
  std::optional<uint32_t> slot;
};

void reply(int fd, const TracerdReply& r, const int* fds = nullptr, int nfds = 0) {
  iovec iov{const_cast<TracerdReply*>(&r), sizeof r};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * 2)] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (nfds > 0) {
    mh.msg_control = ctl;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * static_cast<size_t>(nfds));
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * static_cast<size_t>(nfds));
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * static_cast<size_t>(nfds));
  }
  (void)sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

TracerdReply refusal(int err, const std::string& why) {
  TracerdReply r;
  r.err = err;
  std::snprintf(r.message, sizeof r.message, "%s", why.c_str());
  r.service_pid = static_cast<uint32_t>(getpid());
  return r;
}

// Binds under a temporary name and renames into place: a client never
// meets a socket that is not listening yet.
Result<UniqueFd> listen_at(const std::string& path) {
  UniqueFd s(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!s) return Error::from_errno("socket");
  std::string tmp = path + ".new." + std::to_string(getpid());
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() + 20 >= sizeof a.sun_path) return Error{ENAMETOOLONG, "socket path too long: " + path};
  std::memcpy(a.sun_path, tmp.c_str(), tmp.size() + 1);
  unlink(tmp.c_str());
  if (bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return Error::from_errno("bind " + tmp);
  // Every user's sessions may register; what each may register is checked
  // per request (tracerd/peer.h).
  chmod(tmp.c_str(), 0666);
  if (listen(s.get(), 128) != 0) return Error::from_errno("listen " + tmp);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return Error::from_errno("rename " + tmp + " to " + path);
  }
  return s;
}

class Server {
 public:
  Server(EbpfPrograms progs, UniqueFd listener, const ServeOptions& o, std::ostream& log)
      : progs_(std::move(progs)), listener_(std::move(listener)), o_(o), log_(log) {}

  int run() {
    ep_.reset(epoll_create1(EPOLL_CLOEXEC));
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);
    sigfd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    timer_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    watch(listener_.get(), kListen);
    watch(sigfd_.get(), kSignal);
    watch(timer_.get(), kTimer);
    arm_idle();
    epoll_event evs[32];
    for (;;) {
      int n = epoll_wait(ep_.get(), evs, 32, -1);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return 125;
      for (int i = 0; i < n; ++i) {
        uint64_t tag = evs[i].data.u64;
        if (tag == kListen) {
          accept_all();
        } else if (tag == kSignal) {
          log_ << "cottonbox tracer: stopping (signal)\n";
          return 0;
        } else if (tag == kTimer) {
          uint64_t x;
          (void)!read(timer_.get(), &x, sizeof x);
          if (clients_.empty()) {
            log_ << "cottonbox tracer: no session for " << o_.idle_exit_s << " s; exiting\n";
            return 0;
          }
        } else {
          on_client(static_cast<int>(tag));
        }
      }
    }
  }

 private:
  static constexpr uint64_t kListen = 1ULL << 40, kSignal = kListen + 1, kTimer = kListen + 2;

  void watch(int fd, uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    epoll_ctl(ep_.get(), EPOLL_CTL_ADD, fd, &ev);
  }

  void arm_idle() {
    if (o_.keep || !clients_.empty()) return;
    itimerspec its{};
    its.it_value.tv_sec = std::max(o_.idle_exit_s, 0);
    if (its.it_value.tv_sec == 0) its.it_value.tv_nsec = 1;
    timerfd_settime(timer_.get(), 0, &its, nullptr);
  }

  void accept_all() {
    for (;;) {
      UniqueFd c(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!c) return;
      Client cl;
      socklen_t len = sizeof cl.peer;
      if (getsockopt(c.get(), SOL_SOCKET, SO_PEERCRED, &cl.peer, &len) != 0) continue;
      int pfd = -1;
      socklen_t plen = sizeof pfd;
      if (getsockopt(c.get(), SOL_SOCKET, kSoPeerPidfd, &pfd, &plen) == 0) cl.peer_pidfd.reset(pfd);
      int fd = c.get();
      cl.fd = std::move(c);
      watch(fd, static_cast<uint64_t>(fd));
      clients_.emplace(fd, std::move(cl));
    }
  }

  void drop(int fd) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    if (it->second.slot) {
      progs_.remove_slot(*it->second.slot);
      preparer_.wake(true);
      log_ << "cottonbox tracer: slot " << *it->second.slot << " (uid " << it->second.peer.uid << ") ended; "
           << progs_.live_slots() << " live\n";
    }
    epoll_ctl(ep_.get(), EPOLL_CTL_DEL, fd, nullptr);
    clients_.erase(it);
    arm_idle();
  }

  void on_client(int fd) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    Client& cl = it->second;
    TracerdRequest req;
    iovec iov{&req, sizeof req};
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * 4)] = {};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl;
    mh.msg_controllen = sizeof ctl;
    ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    std::vector<UniqueFd> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < k; ++i) {
        int f;
        std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
        fds.emplace_back(f);
      }
    }
    if (n <= 0) return drop(fd);
    if (static_cast<size_t>(n) != sizeof req || req.magic != kTracerdMagic) {
      reply(fd, refusal(EPROTO, "garbled request"));
      return drop(fd);
    }
    if (req.op == TracerdOp::Status) {
      TracerdReply r;
      r.sessions = static_cast<uint32_t>(progs_.live_slots());
      auto ids = progs_.program_ids();
      r.programs = static_cast<uint32_t>(ids.size());
      r.service_pid = static_cast<uint32_t>(getpid());
      std::string s;
      for (auto id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
      std::snprintf(r.message, sizeof r.message, "%s", s.c_str());
      reply(fd, r);
      return;
    }
    if (req.op != TracerdOp::Register) {
      reply(fd, refusal(EINVAL, "unknown request"));
      return;
    }
    if (cl.slot) {
      reply(fd, refusal(EALREADY, "this connection has registered a session already"));
      return;
    }
    if (fds.size() != 1) {
      reply(fd, refusal(EINVAL, "a registration carries one pidfd"));
      return;
    }
    auto who = admit(cl.peer, cl.peer_pidfd.get(), fds[0].get(), progs_.pidns().level, progs_);
    if (!who) {
      log_ << "cottonbox tracer: refused uid " << cl.peer.uid << " pid " << cl.peer.pid << ": " << who.error().message
           << "\n";
      reply(fd, refusal(who.error().err, who.error().message));
      return;
    }
    // Root sees everything its session does; a plain user, what its
    // processes do as that user.
    auto slot = progs_.add_slot(who->reader_ns, 0, cl.peer.uid == 0 ? EbpfPrograms::kAnyUid : cl.peer.uid);
    if (!slot) {
      reply(fd, refusal(slot.error().err, slot.error().message));
      return;
    }
    if (auto t = progs_.track(slot->slot, who->pid); !t) {
      progs_.remove_slot(slot->slot);
      reply(fd, refusal(t.error().err, t.error().message));
      return;
    }
    cl.slot = slot->slot;
    TracerdReply r;
    r.ring_bytes = slot->ring_bytes;
    r.slot = slot->slot;
    r.pidns_level = who->reader_ns.level;
    r.service_pid = static_cast<uint32_t>(getpid());
    int out[2] = {slot->ring.get(), slot->lost.get()};
    reply(fd, r, out, 2);
    preparer_.wake(false);
    log_ << "cottonbox tracer: slot " << slot->slot << " for pid " << who->pid << " (uid " << cl.peer.uid << "); "
         << progs_.live_slots() << " live\n";
    // The maps live on in the programs' outer maps and the session's fds.
  }

  // Makes slots ready ahead on a thread of its own, so that a session
  // registering waits for no grace period (EbpfPrograms::prepare_slot);
  // requests are answered meanwhile.
  class Preparer {
   public:
    explicit Preparer(EbpfPrograms& progs) : progs_(progs), thread_([this] { loop(); }) {}
    ~Preparer() {
      {
        std::lock_guard lk(mu_);
        stop_ = true;
      }
      cv_.notify_one();
      thread_.join();
    }
    // A slot was taken (or freed: then preparing may succeed again).
    void wake(bool freed) {
      {
        std::lock_guard lk(mu_);
        if (freed) able_ = true;
      }
      cv_.notify_one();
    }

   private:
    // Enough for a burst of sessions; each holds a ring of the configured size.
    static constexpr size_t kReady = 2;
    void loop() {
      std::unique_lock lk(mu_);
      for (;;) {
        cv_.wait(lk, [&] { return stop_ || (able_ && progs_.prepared_slots() < kReady); });
        if (stop_) return;
        lk.unlock();
        bool ok = progs_.prepare_slot();
        lk.lock();
        if (!ok) able_ = false;  // no free slot, or no memory: until one is freed
      }
    }
    EbpfPrograms& progs_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false, able_ = true;
    std::thread thread_;
  };

  EbpfPrograms progs_;
  Preparer preparer_{progs_};
  UniqueFd listener_;
  const ServeOptions& o_;
  std::ostream& log_;
  UniqueFd ep_, sigfd_, timer_;
  std::map<int, Client> clients_;
};

}  // namespace

int serve(const ServeOptions& o, std::ostream& log) {
  std::string path = o.socket.empty() ? tracer_socket_path() : o.socket;
  std::string dir = path.substr(0, path.rfind('/'));
  if (!dir.empty()) mkdir(dir.c_str(), 0755);
  // One service at a time: a second one (two sessions starting it at once)
  // leaves it to the first.
  std::string lock_path = tracer_lock_path(path);
  UniqueFd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lock) {
    log << "cottonbox tracer: cannot open " << lock_path << ": " << std::strerror(errno) << "\n";
    return 125;
  }
  if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    log << "cottonbox tracer: a tracer service runs already (" << lock_path << " is held)\n";
    return 0;
  }
  auto progs = EbpfPrograms::load();
  if (!progs) {
    log << "cottonbox tracer: cannot load the tracer: " << progs.error().message << "\n";
    return 125;
  }
  auto listener = listen_at(path);
  if (!listener) {
    log << "cottonbox tracer: " << listener.error().message << "\n";
    return 125;
  }
  if (o.ready_fd >= 0) {
    (void)!write(o.ready_fd, "1", 1);
    close(o.ready_fd);
  }
  log << "cottonbox tracer: serving at " << path << " (pid " << getpid() << ")\n";
  int rc = Server(std::move(*progs), std::move(*listener), o, log).run();
  unlink(path.c_str());
  return rc;
}

int print_status(const std::string& socket, bool json, std::ostream& out) {
  std::string path = socket.empty() ? tracer_socket_path() : socket;
  auto st = tracer_status(path);
  if (!st) {
    if (json)
      out << "{\"running\":false}\n";
    else
      out << "no tracer service at " << path << " (" << st.error().message << ")\n";
    return 1;
  }
  if (json) {
    out << "{\"running\":true,\"pid\":" << st->service_pid << ",\"sessions\":" << st->sessions
        << ",\"programs\":" << st->programs << ",\"program_ids\":[" << st->message << "]}\n";
  } else {
    out << "tracer service at " << path << ": pid " << st->service_pid << ", " << st->sessions << " sessions, "
        << st->programs << " programs (ids " << st->message << ")\n";
  }
  return 0;
}

}  // namespace cb::tracerd
