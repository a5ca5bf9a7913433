#include "net/endpoint.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/fd.h"

namespace cb::net {
namespace {

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

template <typename Fn>
void each_line(std::string_view text, Fn fn) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    std::string_view line = text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    fn(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

std::string_view strip_comment(std::string_view line, std::string_view marks) {
  size_t c = line.find_first_of(marks);
  return c == std::string_view::npos ? line : line.substr(0, c);
}

}  // namespace

std::optional<Endpoint> Endpoint::parse(std::string_view text, uint16_t default_port) {
  Endpoint e;
  e.port = default_port;
  std::string_view host = text;
  std::string_view port;
  if (text.starts_with("[")) {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (!rest.starts_with(":")) return std::nullopt;
      port = rest.substr(1);
      if (port.empty()) return std::nullopt;
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    size_t colon = text.find(':');
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (port.empty()) return std::nullopt;
  }
  auto a = IpAddr::parse(host);
  if (!a) return std::nullopt;
  e.addr = *a;
  if (!port.empty()) {
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    int p = std::stoi(std::string(port));
    if (p > 65535) return std::nullopt;
    e.port = static_cast<uint16_t>(p);
  }
  return e;
}

Endpoint Endpoint::from_sockaddr(const sockaddr_storage& ss) {
  Endpoint e;
  if (ss.ss_family == AF_INET) {
    const auto* s = reinterpret_cast<const sockaddr_in*>(&ss);
    e.addr = IpAddr::v4(reinterpret_cast<const uint8_t*>(&s->sin_addr));
    e.port = ntohs(s->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* s = reinterpret_cast<const sockaddr_in6*>(&ss);
    e.addr = IpAddr::v6(s->sin6_addr.s6_addr);
    e.port = ntohs(s->sin6_port);
  }
  return e;
}

socklen_t Endpoint::to_sockaddr(sockaddr_storage& ss) const {
  memset(&ss, 0, sizeof ss);
  if (addr.family == 4) {
    auto* s = reinterpret_cast<sockaddr_in*>(&ss);
    s->sin_family = AF_INET;
    s->sin_port = htons(port);
    memcpy(&s->sin_addr, addr.b.data(), 4);
    return sizeof(sockaddr_in);
  }
  auto* s = reinterpret_cast<sockaddr_in6*>(&ss);
  s->sin6_family = AF_INET6;
  s->sin6_port = htons(port);
  memcpy(&s->sin6_addr, addr.b.data(), 16);
  return sizeof(sockaddr_in6);
}

std::string Endpoint::text() const {
  std::string a = addr.text();
  if (addr.family == 6) a = "[" + a + "]";
  return a + ":" + std::to_string(port);
}

std::vector<Endpoint> parse_resolv_conf_servers(std::string_view text) {
  std::vector<Endpoint> out;
  each_line(text, [&](std::string_view line) {
    auto f = fields(strip_comment(line, "#;"));
    if (f.size() < 2 || f[0] != "nameserver") return;
    if (f[1].find('%') != std::string_view::npos) return;
    if (auto a = IpAddr::parse(f[1])) out.push_back(Endpoint{*a, 53});
  });
  return out;
}

std::string session_resolv_conf(const Endpoint& server, std::string_view host_text) {
  std::string out = "# written by cottonbox: this session resolves names through its supervisor\n";
  out += "nameserver " + server.addr.text() + "\n";
  each_line(host_text, [&](std::string_view line) {
    auto f = fields(strip_comment(line, "#;"));
    if (f.empty()) return;
    if (f[0] == "search" || f[0] == "domain") {
      out += std::string(strip_comment(line, "#;")) + "\n";
    } else if (f[0] == "options") {
      std::string kept = "options";
      for (size_t i = 1; i < f.size(); ++i) {
        // rotate and friends matter only with several servers; there is one.
        if (f[i] == "rotate") continue;
        kept += " " + std::string(f[i]);
      }
      if (kept != "options") out += kept + "\n";
    }
  });
  return out;
}

std::vector<HostsEntry> parse_hosts(std::string_view text) {
  std::vector<HostsEntry> out;
  each_line(text, [&](std::string_view line) {
    auto f = fields(strip_comment(line, "#"));
    if (f.size() < 2) return;
    auto a = IpAddr::parse(f[0]);
    if (!a || f[0].starts_with("[")) return;
    HostsEntry e{*a, {}};
    for (size_t i = 1; i < f.size(); ++i) e.names.push_back(normalize_host_name(f[i]));
    out.push_back(std::move(e));
  });
  return out;
}

Result<std::string> read_text_file(const std::string& path, size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::from_errno("cannot read " + path);
  std::string data;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error::from_errno("cannot read " + path);
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > max_bytes) return Error{EFBIG, path + " is larger than " + std::to_string(max_bytes) + " bytes"};
  }
  return data;
}

}  // namespace cb::net
