#include "net/resolver.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace cb::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxMessage = 65535;
constexpr size_t kMaxTcpBuffer = 2 * (kMaxMessage + 2);  // a client may pipeline, not hoard
constexpr int kRounds = 2;                               // every upstream, then every one again

// What an epoll event belongs to: the kind in the top byte, an id below.
enum class Tag : uint8_t { Timer, Udp, Listen, Client, Upstream };
uint64_t tag(Tag t, uint64_t id) { return static_cast<uint64_t>(t) << 56 | id; }

int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint16_t random_id() {
  uint16_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) != sizeof v)
    v = static_cast<uint16_t>(Clock::now().time_since_epoch().count());
  return v;
}

UniqueFd make_socket(int family, int type) {
  return UniqueFd(::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
}

}  // namespace

struct Resolver::Impl {
  struct Listener {
    Endpoint at;
    UniqueFd udp, tcp;
  };

  struct Client {  // a TCP connection from a session process
    uint64_t id = 0;
    UniqueFd fd;
    Endpoint peer;
    TcpFramer in;
    std::vector<uint8_t> out;
    Clock::time_point idle_deadline;
    size_t in_flight = 0;
    bool reading = true;
  };

  struct Pending {  // one client query on its way upstream
    uint64_t id = 0;
    bool tcp = false;
    int udp_fd = -1;      // the listener to answer from (UDP clients)
    uint64_t client = 0;  // the connection (TCP clients)
    Endpoint peer;
    sockaddr_storage peer_sa{};  // UDP clients: where to answer, as recvfrom gave it
    socklen_t peer_len = 0;
    DnsMessage query;
    std::vector<uint8_t> bytes;  // as the client sent it
    size_t attempt = 0;          // index into upstreams × rounds
    UniqueFd up;
    bool up_tcp = false;
    bool up_connected = false;
    uint16_t up_id = 0;
    TcpFramer up_in;
    std::vector<uint8_t> up_out;
    Clock::time_point deadline;
    LookupRecord record;
  };

  ResolverOptions opts;
  NameMap& map;
  UniqueFd epoll, timer;
  std::vector<Listener> listeners;
  std::map<uint64_t, Client> clients;
  std::map<uint64_t, Pending> pending;
  uint64_t next_id = 1;
  Stats stats;
  std::vector<uint8_t> buf = std::vector<uint8_t>(kMaxMessage + 1);

  Impl(ResolverOptions o, NameMap& m) : opts(std::move(o)), map(m) {}

  Result<Ok> setup() {
    epoll.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll) return Error::from_errno("epoll_create1");
    timer.reset(timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    if (!timer) return Error::from_errno("timerfd_create");
    if (auto r = watch(timer.get(), EPOLLIN, tag(Tag::Timer, 0)); !r) return r;
    for (size_t i = 0; i < opts.listen.size(); ++i) {
      Listener l;
      l.at = opts.listen[i];
      sockaddr_storage ss;
      socklen_t len = l.at.to_sockaddr(ss);
      l.udp = make_socket(ss.ss_family, SOCK_DGRAM);
      if (!l.udp) return Error::from_errno("socket");
      if (::bind(l.udp.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0)
        return Error::from_errno("cannot serve DNS on udp " + l.at.text());
      // The TCP side on the same port as the UDP one, which bind may have chosen.
      sockaddr_storage bound;
      socklen_t blen = sizeof bound;
      getsockname(l.udp.get(), reinterpret_cast<sockaddr*>(&bound), &blen);
      l.at = Endpoint::from_sockaddr(bound);
      len = l.at.to_sockaddr(ss);
      l.tcp = make_socket(ss.ss_family, SOCK_STREAM);
      if (!l.tcp) return Error::from_errno("socket");
      int one = 1;
      setsockopt(l.tcp.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(l.tcp.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(l.tcp.get(), 64) != 0)
        return Error::from_errno("cannot serve DNS on tcp " + l.at.text());
      if (auto r = watch(l.udp.get(), EPOLLIN, tag(Tag::Udp, i)); !r) return r;
      if (auto r = watch(l.tcp.get(), EPOLLIN, tag(Tag::Listen, i)); !r) return r;
      listeners.push_back(std::move(l));
    }
    if (opts.upstreams.empty()) return Error{0, "no upstream resolver to forward to"};
    return Ok{};
  }

  Result<Ok> watch(int fd, uint32_t events, uint64_t data) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = data;
    if (epoll_ctl(epoll.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return Error::from_errno("epoll_ctl");
    return Ok{};
  }
  void rewatch(int fd, uint32_t events, uint64_t data) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = data;
    epoll_ctl(epoll.get(), EPOLL_CTL_MOD, fd, &ev);
  }

  // ------------------------------------------------------------ the loop

  void run_once() {
    epoll_event events[64];
    int n = epoll_wait(epoll.get(), events, 64, 0);
    for (int i = 0; i < n; ++i) {
      uint64_t d = events[i].data.u64;
      auto kind = static_cast<Tag>(d >> 56);
      uint64_t id = d & ((uint64_t{1} << 56) - 1);
      switch (kind) {
        case Tag::Timer: {
          uint64_t expirations;
          while (::read(timer.get(), &expirations, sizeof expirations) > 0) {
          }
          break;
        }
        case Tag::Udp: on_udp(listeners[id]); break;
        case Tag::Listen: on_accept(listeners[id]); break;
        case Tag::Client: on_client(id, events[i].events); break;
        case Tag::Upstream: on_upstream(id, events[i].events); break;
      }
    }
    expire();
    arm_timer();
  }

  void arm_timer() {
    Clock::time_point next = Clock::time_point::max();
    for (const auto& [id, p] : pending) next = std::min(next, p.deadline);
    for (const auto& [id, c] : clients) next = std::min(next, c.idle_deadline);
    itimerspec its{};
    if (next != Clock::time_point::max()) {
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(next - Clock::now()).count();
      if (ns < 1000) ns = 1000;  // 0 would disarm it
      its.it_value.tv_sec = ns / 1'000'000'000;
      its.it_value.tv_nsec = ns % 1'000'000'000;
    }
    timerfd_settime(timer.get(), 0, &its, nullptr);
  }

  void expire() {
    auto now = Clock::now();
    std::vector<uint64_t> late;
    for (const auto& [id, p] : pending)
      if (p.deadline <= now) late.push_back(id);
    for (uint64_t id : late) {
      auto it = pending.find(id);
      if (it == pending.end()) continue;
      ++stats.timeouts;
      it->second.record.note = "upstream " + it->second.record.upstream + " did not answer in time";
      forward(it->second);  // the next upstream, or SERVFAIL
    }
    std::vector<uint64_t> idle;
    for (const auto& [id, c] : clients)
      if (c.idle_deadline <= now && c.in_flight == 0) idle.push_back(id);
    for (uint64_t id : idle) clients.erase(id);
  }

  // ------------------------------------------------------------ clients

  void on_udp(Listener& l) {
    for (int k = 0; k < 64; ++k) {
      sockaddr_storage from;
      socklen_t flen = sizeof from;
      ssize_t n = recvfrom(l.udp.get(), buf.data(), buf.size(), MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n < 0) return;
      if (static_cast<size_t>(n) > kMaxMessage) continue;
      Pending p;
      p.tcp = false;
      p.udp_fd = l.udp.get();
      p.peer = Endpoint::from_sockaddr(from);
      p.peer_sa = from;
      p.peer_len = flen;
      p.bytes.assign(buf.begin(), buf.begin() + n);
      query(std::move(p));
    }
  }

  void on_accept(Listener& l) {
    for (;;) {
      sockaddr_storage from;
      socklen_t flen = sizeof from;
      int fd = accept4(l.tcp.get(), reinterpret_cast<sockaddr*>(&from), &flen, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      if (clients.size() >= opts.max_tcp_clients) {
        ::close(fd);  // the client retries; the limit keeps a flood of idle connections cheap
        continue;
      }
      Client c;
      c.id = next_id++;
      c.fd.reset(fd);
      c.peer = Endpoint::from_sockaddr(from);
      c.idle_deadline = Clock::now() + opts.tcp_idle;
      if (!watch(fd, EPOLLIN, tag(Tag::Client, c.id))) continue;
      clients.emplace(c.id, std::move(c));
    }
  }

  void on_client(uint64_t id, uint32_t events) {
    auto it = clients.find(id);
    if (it == clients.end()) return;
    Client& c = it->second;
    if (events & (EPOLLHUP | EPOLLERR)) {
      // Gone both ways (or reset): nothing more can reach it.
      clients.erase(it);
      return;
    }
    if (events & EPOLLOUT) flush(c);
    if ((events & EPOLLIN) && c.reading) {
      for (;;) {
        ssize_t n = ::read(c.fd.get(), buf.data(), buf.size());
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) break;
          clients.erase(it);
          return;
        }
        if (n == 0) {
          // Half-closed: answer what was asked, then close.
          c.reading = false;
          break;
        }
        c.in.append(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
        if (c.in.buffered() > kMaxTcpBuffer) {
          clients.erase(it);
          return;
        }
      }
      c.idle_deadline = Clock::now() + opts.tcp_idle;
      while (auto msg = c.in.next()) {
        Pending p;
        p.tcp = true;
        p.client = c.id;
        p.peer = c.peer;
        p.bytes = std::move(*msg);
        ++c.in_flight;
        ++stats.tcp_queries;
        query(std::move(p));
        // query() may have answered at once and the client may be gone.
        if (!clients.count(id)) return;
      }
    }
    it = clients.find(id);
    if (it == clients.end()) return;
    if (!it->second.reading && it->second.in_flight == 0 && it->second.out.empty()) clients.erase(it);
  }

  void flush(Client& c) {
    while (!c.out.empty()) {
      ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        c.out.clear();
        c.reading = false;
        break;
      }
      c.out.erase(c.out.begin(), c.out.begin() + n);
    }
    uint32_t want = (c.reading ? uint32_t{EPOLLIN} : 0u) | (c.out.empty() ? 0u : uint32_t{EPOLLOUT});
    rewatch(c.fd.get(), want, tag(Tag::Client, c.id));
  }

  // Sends `msg` to the client of `p` and records the lookup.
  void reply(Pending& p, std::vector<uint8_t> msg) {
    if (opts.on_lookup) {
      p.record.tcp = p.tcp;
      p.record.client = p.peer;
      if (p.record.ts_ns == 0) p.record.ts_ns = realtime_ns();
      opts.on_lookup(p.record);
    }
    if (!p.tcp) {
      if (!msg.empty())
        sendto(p.udp_fd, msg.data(), msg.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&p.peer_sa), p.peer_len);
      return;
    }
    auto it = clients.find(p.client);
    if (it == clients.end()) return;
    Client& c = it->second;
    if (c.in_flight > 0) --c.in_flight;
    if (msg.empty()) {
      // A TCP client that sent bytes we cannot even answer: close it.
      clients.erase(it);
      return;
    }
    auto framed = tcp_frame(msg);
    c.out.insert(c.out.end(), framed.begin(), framed.end());
    flush(c);
    if (!c.reading && c.in_flight == 0 && c.out.empty()) clients.erase(it);
  }

  void reply_rcode(Pending& p, Rcode rc, std::string note) {
    p.record.rcode = rc;
    if (!note.empty()) p.record.note = std::move(note);
    if (rc == Rcode::ServFail) ++stats.servfail;
    if (rc == Rcode::Refused || (rc == Rcode::NxDomain && p.record.denied)) ++stats.refused;
    reply(p, build_reply(p.query, rc));
  }

  void query(Pending p) {
    ++stats.queries;
    p.record.ts_ns = realtime_ns();
    auto parsed = parse_dns(p.bytes);
    if (!parsed) {
      ++stats.formerr;
      p.record.rcode = Rcode::FormErr;
      p.record.note = "the query did not parse: " + parsed.error().message;
      reply(p, build_formerr(p.bytes));
      return;
    }
    p.query = std::move(*parsed);
    const DnsHeader& h = p.query.header;
    if (h.qr()) {
      // A response sent to a resolver: drop it (answering could loop).
      if (p.tcp) {
        if (auto it = clients.find(p.client); it != clients.end() && it->second.in_flight) --it->second.in_flight;
      }
      return;
    }
    if (p.query.questions.size() == 1) {
      p.record.name = p.query.questions[0].name.key();
      p.record.type = p.query.questions[0].type;
    }
    if (h.opcode() != 0) {
      reply_rcode(p, Rcode::NotImp, "only standard queries are served");
      return;
    }
    if (p.query.questions.size() != 1 || !p.query.answers.empty() || !p.query.authority.empty()) {
      ++stats.formerr;
      reply_rcode(p, Rcode::FormErr, "a query must ask exactly one question and carry no records");
      return;
    }
    if (judged_away(p, nullptr)) return;
    if (pending.size() >= opts.max_pending) {
      reply_rcode(p, Rcode::ServFail, "too many lookups in flight");
      return;
    }
    p.id = next_id++;
    auto [it, inserted] = pending.emplace(p.id, std::move(p));
    forward(it->second);
  }

  // Asks the judge; answers REFUSED or NXDOMAIN when it says so.
  bool judged_away(Pending& p, const ChainAnswer* answer) {
    if (!opts.judge) return false;
    Lookup l{p.record.name, p.record.type, answer, p.peer, p.tcp};
    LookupVerdict v = opts.judge(l);
    if (v == LookupVerdict::Allow) return false;
    p.record.denied = true;
    reply_rcode(p, v == LookupVerdict::Refuse ? Rcode::Refused : Rcode::NxDomain, "denied by the policy");
    return true;
  }

  // ------------------------------------------------------------ upstream

  // Sends `p` to its next upstream attempt; SERVFAIL when none is left.
  void forward(Pending& p) {
    p.up.reset();
    p.up_in = TcpFramer{};
    p.up_out.clear();
    p.up_connected = false;
    size_t total = opts.upstreams.size() * kRounds;
    while (p.attempt < total) {
      const Endpoint& to = opts.upstreams[p.attempt % opts.upstreams.size()];
      ++p.attempt;
      p.record.upstream = to.text();
      p.up_tcp = p.tcp;
      if (open_upstream(p, to)) {
        ++stats.forwarded;
        p.deadline = Clock::now() + opts.timeout;
        return;
      }
    }
    finish_servfail(p.id, p.record.note.empty() ? "no upstream resolver could be reached" : p.record.note);
  }

  bool open_upstream(Pending& p, const Endpoint& to) {
    sockaddr_storage ss;
    socklen_t len = to.to_sockaddr(ss);
    p.up = make_socket(ss.ss_family, p.up_tcp ? SOCK_STREAM : SOCK_DGRAM);
    if (!p.up) return false;
    p.up_id = random_id();
    std::vector<uint8_t> msg = p.bytes;
    msg[0] = static_cast<uint8_t>(p.up_id >> 8);
    msg[1] = static_cast<uint8_t>(p.up_id);
    // A connected UDP socket: the kernel drops datagrams from anyone but
    // the upstream, and the source port is the kernel's random choice.
    int rc = ::connect(p.up.get(), reinterpret_cast<sockaddr*>(&ss), len);
    if (rc != 0 && !(p.up_tcp && errno == EINPROGRESS)) {
      p.record.note = "cannot reach upstream " + to.text() + ": " + strerror(errno);
      return false;
    }
    if (!p.up_tcp) {
      if (::send(p.up.get(), msg.data(), msg.size(), MSG_DONTWAIT) < 0) {
        p.record.note = "cannot send to upstream " + to.text() + ": " + strerror(errno);
        return false;
      }
      p.up_connected = true;
      return static_cast<bool>(watch(p.up.get(), EPOLLIN, tag(Tag::Upstream, p.id)));
    }
    p.up_out = tcp_frame(msg);
    return static_cast<bool>(watch(p.up.get(), EPOLLOUT | EPOLLIN, tag(Tag::Upstream, p.id)));
  }

  void on_upstream(uint64_t id, uint32_t events) {
    auto it = pending.find(id);
    if (it == pending.end()) return;
    Pending& p = it->second;
    if (!p.up_tcp) {
      for (;;) {
        ssize_t n = ::recv(p.up.get(), buf.data(), buf.size(), MSG_TRUNC | MSG_DONTWAIT);
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) return;
          p.record.note = "upstream " + p.record.upstream + ": " + strerror(errno);
          forward(p);  // ICMP port unreachable and the like
          return;
        }
        if (static_cast<size_t>(n) > kMaxMessage) continue;
        if (answer(p, std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)))) return;
      }
    }
    if ((events & EPOLLOUT) && !p.up_out.empty()) {
      ssize_t n = ::send(p.up.get(), p.up_out.data(), p.up_out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        p.record.note = "cannot reach upstream " + p.record.upstream + " over TCP: " + strerror(errno);
        forward(p);
        return;
      }
      if (n > 0) p.up_out.erase(p.up_out.begin(), p.up_out.begin() + n);
      if (p.up_out.empty()) rewatch(p.up.get(), EPOLLIN, tag(Tag::Upstream, p.id));
    }
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
      for (;;) {
        ssize_t n = ::read(p.up.get(), buf.data(), buf.size());
        if (n < 0) {
          if (errno == EAGAIN || errno == EINTR) break;
          p.record.note = "upstream " + p.record.upstream + " over TCP: " + strerror(errno);
          forward(p);
          return;
        }
        if (n == 0) {
          p.record.note = "upstream " + p.record.upstream + " closed the TCP connection without an answer";
          forward(p);
          return;
        }
        p.up_in.append(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
        while (auto msg = p.up_in.next())
          if (answer(p, *msg)) return;
        if (p.up_in.buffered() > kMaxTcpBuffer) {
          forward(p);
          return;
        }
      }
    }
  }

  // An upstream's message for `p`: true when `p` is done (and erased).
  bool answer(Pending& p, std::span<const uint8_t> bytes) {
    if (bytes.size() < kHeaderSize) return false;
    uint16_t id = static_cast<uint16_t>(bytes[0] << 8 | bytes[1]);
    if (id != p.up_id || !(bytes[2] & 0x80)) return false;  // not ours: keep waiting
    auto parsed = parse_dns(bytes);
    if (!parsed) return finish_servfail(p.id, "the upstream's answer did not parse: " + parsed.error().message);
    DnsMessage& r = *parsed;
    const DnsQuestion& q = p.query.questions[0];
    if (r.questions.size() != 1 || !r.questions[0].name.equals_ignoring_case(q.name) || r.questions[0].type != q.type ||
        r.questions[0].cls != q.cls)
      return false;  // an answer to some other question: not ours
    ChainAnswer chain = follow_chain(r);
    p.record.chain = chain.chain;
    p.record.rcode = static_cast<Rcode>(r.header.rcode());
    if (chain.loop) return finish_servfail(p.id, "the answer's CNAME chain loops");
    if (chain.off_chain) return finish_servfail(p.id, "the answer holds addresses for names off its CNAME chain");
    // The judge sees the chain and the addresses before the client does.
    if (opts.judge && (!chain.chain.empty() || !chain.addresses.empty())) {
      if (judged_away(p, &chain)) return erase(p.id);
    }
    if (!map.add(chain, NameOrigin::Dns, realtime_ns())) return finish_servfail(p.id, "the session's name map is full");
    for (const auto& a : chain.addresses) p.record.addresses.push_back(a.addr);

    // The upstream's bytes, the client's id, without the additional
    // section but for its OPT record.
    std::vector<uint8_t> out(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(r.additional_offset));
    out.insert(out.end(), r.opt_bytes.begin(), r.opt_bytes.end());
    out[0] = static_cast<uint8_t>(p.query.header.id >> 8);
    out[1] = static_cast<uint8_t>(p.query.header.id);
    out[10] = 0;
    out[11] = r.opt_bytes.empty() ? 0 : 1;
    if (r.header.tc()) {
      p.record.truncated = true;
      ++stats.truncated;
    }
    if (!p.tcp && out.size() > p.query.udp_limit()) {
      // More than the client takes over UDP: it asks again over TCP.
      p.record.truncated = true;
      ++stats.truncated;
      out = build_reply(p.query, Rcode::NoError, /*truncated=*/true);
    }
    reply(p, std::move(out));
    return erase(p.id);
  }

  bool finish_servfail(uint64_t id, std::string note) {
    auto it = pending.find(id);
    if (it == pending.end()) return true;
    reply_rcode(it->second, Rcode::ServFail, std::move(note));
    return erase(id);
  }

  bool erase(uint64_t id) {
    pending.erase(id);  // closes its upstream socket, which leaves the epoll set
    return true;
  }
};

Resolver::Resolver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Resolver::~Resolver() = default;

Result<std::unique_ptr<Resolver>> Resolver::start(ResolverOptions opts, NameMap& map) {
  auto impl = std::make_unique<Impl>(std::move(opts), map);
  if (auto r = impl->setup(); !r) return r.error();
  return std::unique_ptr<Resolver>(new Resolver(std::move(impl)));
}

int Resolver::fd() const { return impl_->epoll.get(); }

void Resolver::set_on_lookup(std::function<void(const LookupRecord&)> f) { impl_->opts.on_lookup = std::move(f); }
void Resolver::run_once() { impl_->run_once(); }

std::vector<Endpoint> Resolver::listening() const {
  std::vector<Endpoint> out;
  for (const auto& l : impl_->listeners) out.push_back(l.at);
  return out;
}

Resolver::Stats Resolver::stats() const { return impl_->stats; }

ResolverThread::ResolverThread(std::unique_ptr<Resolver> r)
    : resolver_(std::move(r)), stop_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "cb-resolver");
    pollfd fds[2] = {{resolver_->fd(), POLLIN, 0}, {stop_fd_.get(), POLLIN, 0}};
    for (;;) {
      if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
      if (fds[1].revents) break;
      if (fds[0].revents) resolver_->run_once();
    }
  });
}

ResolverThread::~ResolverThread() { stop(); }

void ResolverThread::stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  if (::write(stop_fd_.get(), &one, sizeof one) < 0) {
  }
  thread_.join();
}

}  // namespace cb::net
