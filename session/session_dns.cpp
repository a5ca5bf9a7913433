#include "session/session_dns.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "base/paths.h"
#include "net/endpoint.h"
#include "net/policy_judge.h"

namespace cb {

std::vector<std::string> host_resolver_sockets() {
  std::vector<std::string> out;
  for (const char* p : {"/run/nscd/socket", "/run/systemd/resolve/io.systemd.Resolve"}) {
    struct stat st;
    if (lstat(p, &st) == 0 && S_ISSOCK(st.st_mode)) out.emplace_back(p);
  }
  return out;
}

bool session_uses_resolver(pid_t init_pid, const net::Endpoint& served) {
  auto text = net::read_text_file("/proc/" + std::to_string(init_pid) + "/root/etc/resolv.conf");
  if (!text) return false;
  auto servers = net::parse_resolv_conf_servers(*text);
  return servers.size() == 1 && servers.front() == served;
}

bool policy_names_hosts(const Policy& p) {
  for (const auto& r : p.rules)
    for (const auto& h : r.hosts)
      if (h.kind == HostPattern::Kind::Name) return true;
  return false;
}

Result<std::unique_ptr<SessionDns>> start_session_dns(const Policy& policy, const SessionDnsOptions& o) {
  auto dns = std::make_unique<SessionDns>();
  std::string host_text;
  if (auto t = net::read_text_file(o.host_resolv)) host_text = std::move(*t);
  if (!o.upstream.empty()) {
    auto e = net::Endpoint::parse(o.upstream);
    if (!e) return Error{EINVAL, "--resolver " + o.upstream + ": not an address[:port]"};
    dns->upstreams.push_back(*e);
  } else {
    dns->upstreams = net::parse_resolv_conf_servers(host_text);
    // glibc's own default when the file names none.
    if (dns->upstreams.empty()) dns->upstreams.push_back(*net::Endpoint::parse("127.0.0.1"));
  }
  int64_t now = realtime_ns();
  if (auto hosts = net::read_text_file(o.host_hosts))
    for (const auto& h : net::parse_hosts(*hosts))
      for (const auto& name : h.names) (void)dns->names.add(name, {}, h.addr, 0, net::NameOrigin::HostsFile, now);

  // A loopback address of its own: a host service on 127.0.0.1:53 or
  // systemd-resolved's 127.0.0.53 stay untouched, and each session has
  // its own (a session's resolver records into that session's map only).
  std::random_device rd;
  std::mt19937 gen(rd());
  Error last{EADDRINUSE, "no free address"};
  for (int attempt = 0; attempt < 16; ++attempt) {
    uint8_t b[4] = {127, 84, static_cast<uint8_t>(gen() % 256), static_cast<uint8_t>(1 + gen() % 254)};
    net::ResolverOptions ro;
    ro.listen.push_back(net::Endpoint{IpAddr::v4(b), 53});
    ro.upstreams = dns->upstreams;
    ro.judge = net::policy_judge(policy);
    auto r = net::Resolver::start(std::move(ro), dns->names);
    if (r) {
      dns->resolver = std::move(*r);
      dns->served = dns->resolver->listening().front();
      break;
    }
    last = r.error();
    if (last.err != EADDRINUSE) break;
  }
  if (!dns->resolver) {
    if (last.err == EACCES || last.err == EPERM)
      return Error{last.err,
                   "the session's resolver cannot serve port 53 (it needs root, CAP_NET_BIND_SERVICE or "
                   "net.ipv4.ip_unprivileged_port_start <= 53)"};
    return Error{last.err, "the session's resolver could not start: " + last.message};
  }

  dns->resolv_conf = TempFile::make("/tmp/cottonbox-resolv.XXXXXX", 0644);
  if (dns->resolv_conf.path().empty()) return Error{errno, std::string("resolv.conf: ") + strerror(errno)};
  {
    std::ofstream f(dns->resolv_conf.path(), std::ios::trunc);
    f << net::session_resolv_conf(dns->served, host_text);
    if (!f.flush()) return Error{EIO, "cannot write the session's resolv.conf"};
  }
  chmod(dns->resolv_conf.path().c_str(), 0444);
  dns->replaced.emplace_back(o.host_resolv, dns->resolv_conf.path());
  if (!o.empty_file.empty())
    for (const auto& s : host_resolver_sockets()) dns->replaced.emplace_back(s, o.empty_file);
  return dns;
}

}  // namespace cb
