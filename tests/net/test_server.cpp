#include "tests/net/test_server.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace cb::net::test {
namespace {

bool read_exact(int fd, uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

TestDnsServer::TestDnsServer(const Endpoint& at, Handler handler) : at_(at), handler_(std::move(handler)) {
  sockaddr_storage ss;
  socklen_t len = at_.to_sockaddr(ss);
  udp_.reset(::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (::bind(udp_.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) throw std::runtime_error("bind udp");
  socklen_t blen = sizeof ss;
  getsockname(udp_.get(), reinterpret_cast<sockaddr*>(&ss), &blen);
  at_ = Endpoint::from_sockaddr(ss);
  len = at_.to_sockaddr(ss);
  tcp_.reset(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  setsockopt(tcp_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(tcp_.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(tcp_.get(), 16) != 0)
    throw std::runtime_error("bind tcp");
  stop_.reset(eventfd(0, EFD_CLOEXEC));
  thread_ = std::thread([this] { run(); });
}

TestDnsServer::~TestDnsServer() {
  uint64_t one = 1;
  if (::write(stop_.get(), &one, sizeof one) < 0) {
  }
  thread_.join();
}

void TestDnsServer::run() {
  std::vector<uint8_t> buf(65536);
  for (;;) {
    pollfd fds[3] = {{udp_.get(), POLLIN, 0}, {tcp_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) continue;
    if (fds[2].revents) return;
    if (fds[0].revents) {
      sockaddr_storage from;
      socklen_t flen = sizeof from;
      ssize_t n = recvfrom(udp_.get(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n <= 0) continue;
      ++udp_queries_;
      std::vector<uint8_t> raw(buf.begin(), buf.begin() + n);
      auto q = parse_dns(raw);
      if (!q) continue;
      for (const auto& m : handler_(*q, raw, false).messages)
        sendto(udp_.get(), m.data(), m.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
    }
    if (fds[1].revents) {
      UniqueFd c(accept4(tcp_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) continue;
      timeval tv{2, 0};
      setsockopt(c.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      uint8_t head[2];
      while (read_exact(c.get(), head, 2)) {
        size_t len = static_cast<size_t>(head[0] << 8 | head[1]);
        std::vector<uint8_t> raw(len);
        if (!read_exact(c.get(), raw.data(), len)) break;
        ++tcp_queries_;
        auto q = parse_dns(raw);
        if (!q) break;
        for (const auto& m : handler_(*q, raw, true).messages) {
          auto framed = tcp_frame(m);
          if (::send(c.get(), framed.data(), framed.size(), MSG_NOSIGNAL) < 0) break;
        }
      }
    }
  }
}

std::vector<uint8_t> query(const std::string& name, uint16_t type, uint16_t id, bool edns) {
  DnsMessage q;
  q.header.id = id;
  q.header.set_rd(true);
  q.questions.push_back({*DnsName::from_text(name), type, kClassIn});
  if (edns) {
    DnsRecord opt;
    opt.type = dns_type::OPT;
    opt.cls = 4096;
    q.additional.push_back(opt);
  }
  return build_dns(q);
}

std::optional<std::vector<uint8_t>> ask_udp(const Endpoint& to, const std::vector<uint8_t>& msg, int timeout_ms) {
  sockaddr_storage ss;
  socklen_t len = to.to_sockaddr(ss);
  UniqueFd s(::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0) return std::nullopt;
  if (::send(s.get(), msg.data(), msg.size(), 0) < 0) return std::nullopt;
  pollfd p{s.get(), POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
  std::vector<uint8_t> buf(65536);
  ssize_t n = ::recv(s.get(), buf.data(), buf.size(), 0);
  if (n < 0) return std::nullopt;
  buf.resize(static_cast<size_t>(n));
  return buf;
}

std::vector<uint8_t> respond(const DnsMessage& q,
                             const std::vector<std::tuple<std::string, uint16_t, std::string>>& rrs, uint32_t ttl) {
  DnsMessage r;
  r.header = q.header;
  r.header.set_qr(true);
  r.header.set_ra(true);
  r.questions = q.questions;
  for (const auto& [owner, type, value] : rrs) {
    DnsRecord rec;
    rec.name = *DnsName::from_text(owner);
    rec.type = type;
    rec.ttl = ttl;
    if (type == dns_type::CNAME)
      rec.target = *DnsName::from_text(value);
    else
      rec.addr = *IpAddr::parse(value);
    r.answers.push_back(std::move(rec));
  }
  return build_dns(r);
}

}  // namespace cb::net::test
