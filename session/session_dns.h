// The session's resolver (net/resolver.h), made ready before the session's
// mounts are planned: it binds an address of its own on port 53, and the
// session sees a resolv.conf naming only that address, bound over the
// host's in the session's mount namespace.  Every answer it hands out is
// recorded in `names` first, which is what makes `host:` rules exact
// (docs/network.md).  The supervisor serves it from its loop.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/temp_file.h"
#include "net/name_map.h"
#include "net/resolver.h"
#include "policy/policy.h"

namespace cb {

struct SessionDns {
  net::NameMap names;
  std::unique_ptr<net::Resolver> resolver;
  net::Endpoint served;  // the only nameserver of the session's resolv.conf
  std::vector<net::Endpoint> upstreams;
  TempFile resolv_conf;  // bound over /etc/resolv.conf; removed once bound
  // For PlanInput::replaced_files: the resolv.conf, and an empty file over
  // each host resolver cache's socket that exists.
  std::vector<std::pair<std::string, std::string>> replaced;
};

struct SessionDnsOptions {
  std::string upstream;    // --resolver ADDR[:PORT]; empty: the host's resolv.conf nameservers
  std::string empty_file;  // an empty read-only file (the session's blocker)
  std::string host_resolv = "/etc/resolv.conf";
  std::string host_hosts = "/etc/hosts";
};

// Starts the resolver on a free loopback address of 127.84.0.0/16, port 53.
// Errors say why names cannot be known (port 53 refused to a plain user,
// a --resolver that does not parse).
Result<std::unique_ptr<SessionDns>> start_session_dns(const Policy& policy, const SessionDnsOptions& o);

// Whether the session's processes (seen through init's root) are given
// `served` as their only nameserver: false when the mount that replaces
// /etc/resolv.conf could not be made (no private mount namespace).
bool session_uses_resolver(pid_t init_pid, const net::Endpoint& served);

// Whether some rule names a host by name (not only by address): such rules
// match no connection when the session's names are unknown.
bool policy_names_hosts(const Policy& p);

// The sockets through which glibc's NSS modules would ask a host cache
// (nscd, systemd-resolved's varlink) instead of the session's resolver.
std::vector<std::string> host_resolver_sockets();

}  // namespace cb
