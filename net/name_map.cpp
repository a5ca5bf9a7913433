#include "net/name_map.h"

#include <algorithm>
#include <mutex>
#include <set>

namespace cb::net {
namespace {

constexpr int kMaxChain = 16;

bool is_address_record(const DnsRecord& r) {
  if (r.cls != kClassIn) return false;
  return r.type == dns_type::A || r.type == dns_type::AAAA || !r.hints.empty();
}

std::string entry_key(const std::string& asked, const std::vector<std::string>& chain, const IpAddr& addr) {
  std::string k = asked;
  for (const auto& c : chain) k += '\0' + c;
  k += '\x01';
  k.append(reinterpret_cast<const char*>(addr.b.data()), addr.size());
  k += static_cast<char>(addr.family);
  return k;
}

void push_unique(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

}  // namespace

std::string_view name_origin_name(NameOrigin o) {
  switch (o) {
    case NameOrigin::Dns: return "dns";
    case NameOrigin::HostsFile: return "hosts";
  }
  return "";
}

size_t IpAddrHash::operator()(const IpAddr& a) const {
  // FNV-1a over the address bytes: addresses come from the session, but a
  // bucket flood costs only time on a map that is capped in size.
  uint64_t h = 1469598103934665603ull ^ a.family;
  for (size_t i = 0; i < a.size(); ++i) h = (h ^ a.b[i]) * 1099511628211ull;
  return static_cast<size_t>(h);
}

ChainAnswer follow_chain(const DnsMessage& response) {
  ChainAnswer out;
  if (response.questions.size() != 1) return out;
  out.asked = response.questions[0].name.key();
  std::set<std::string> on_chain = {out.asked};
  std::string cur = out.asked;
  for (int hop = 0;; ++hop) {
    const DnsRecord* next = nullptr;
    for (const auto& r : response.answers)
      if (r.type == dns_type::CNAME && r.name.key() == cur) next = &r;
    if (!next) break;
    std::string target = next->target.key();
    if (hop >= kMaxChain || on_chain.count(target)) {
      out.loop = true;
      break;
    }
    out.chain.push_back(target);
    on_chain.insert(target);
    cur = target;
  }
  for (const auto& r : response.answers) {
    if (!is_address_record(r)) continue;
    std::string owner = r.name.key();
    if (!on_chain.count(owner)) {
      out.off_chain = true;
      continue;
    }
    if (r.type == dns_type::A || r.type == dns_type::AAAA) out.addresses.push_back({r.addr, r.ttl, owner});
    for (const auto& h : r.hints) out.addresses.push_back({h, r.ttl, owner});
  }
  for (const auto& r : response.authority)
    if (is_address_record(r)) out.off_chain = true;
  return out;
}

bool NameMap::add(const std::string& asked, const std::vector<std::string>& chain, const IpAddr& addr, uint32_t ttl,
                  NameOrigin origin, int64_t now_ns) {
  if (addr.empty() || asked.empty()) return false;
  std::unique_lock lk(mu_);
  std::string key = entry_key(asked, chain, addr);
  if (auto it = by_key_.find(key); it != by_key_.end()) {
    Resolution& r = entries_[it->second];
    r.ttl = ttl;
    r.last_ns = std::max(r.last_ns, now_ns);
    ++r.answers;
    return true;
  }
  if (entries_.size() >= max_) return false;
  size_t i = entries_.size();
  entries_.push_back(Resolution{asked, chain, addr, ttl, origin, now_ns, now_ns, 1});
  by_key_.emplace(std::move(key), i);
  by_addr_[addr].push_back(i);
  by_name_[asked].push_back(i);
  return true;
}

bool NameMap::add(const ChainAnswer& answer, NameOrigin origin, int64_t now_ns) {
  {
    std::shared_lock lk(mu_);
    size_t fresh = 0;
    for (const auto& a : answer.addresses) fresh += !by_key_.count(entry_key(answer.asked, answer.chain, a.addr));
    if (entries_.size() + fresh > max_) return false;
  }
  // Only this map's one writer (the resolver) adds, so the room checked
  // above is still there.
  bool ok = true;
  for (const auto& a : answer.addresses) ok &= add(answer.asked, answer.chain, a.addr, a.ttl, origin, now_ns);
  return ok;
}

void NameMap::annotate(NetObject& n) const {
  n.hosts.clear();
  n.names.clear();
  if (n.addr.empty()) return;
  std::shared_lock lk(mu_);
  auto it = by_addr_.find(n.addr);
  if (it == by_addr_.end()) return;
  for (size_t i : it->second) push_unique(n.hosts, entries_[i].asked);
  n.names = n.hosts;
  for (size_t i : it->second)
    for (const auto& c : entries_[i].chain) push_unique(n.names, c);
}

std::vector<Resolution> NameMap::lookup(const IpAddr& addr) const {
  std::shared_lock lk(mu_);
  std::vector<Resolution> out;
  if (auto it = by_addr_.find(addr); it != by_addr_.end())
    for (size_t i : it->second) out.push_back(entries_[i]);
  return out;
}

std::vector<IpAddr> NameMap::addresses_of(std::string_view name) const {
  std::string key = normalize_host_name(name);
  std::shared_lock lk(mu_);
  std::vector<IpAddr> out;
  if (auto it = by_name_.find(key); it != by_name_.end())
    for (size_t i : it->second)
      if (std::find(out.begin(), out.end(), entries_[i].addr) == out.end()) out.push_back(entries_[i].addr);
  return out;
}

std::vector<Resolution> NameMap::all() const {
  std::shared_lock lk(mu_);
  return entries_;
}

size_t NameMap::size() const {
  std::shared_lock lk(mu_);
  return entries_.size();
}

void fill_net_object(Event& ev, const NameMap* names) {
  if (action_object(ev.action) != ObjectKind::Address) return;
  ev.net = net_object_from_path(ev.path);
  if (names && ev.net.ip()) names->annotate(ev.net);
}

}  // namespace cb::net
