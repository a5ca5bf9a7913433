#include "db/hosts.h"

#include <algorithm>
#include <cerrno>

namespace cb::db {
namespace {

template <typename T>
bool add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) != v.end()) return false;
  v.push_back(x);
  return true;
}

void widen(HostContact& h, int64_t ts) {
  if (h.first_ns == 0 || ts < h.first_ns) h.first_ns = ts;
  h.last_ns = std::max(h.last_ns, ts);
}

}  // namespace

void HostTally::count_lookups(size_t i, const std::string& name) {
  auto l = lookups_.find(name);
  if (l == lookups_.end()) return;
  contacted_[i].lookups += l->second.all;
  contacted_[i].lookups_refused += l->second.refused;
}

void HostTally::add(const EventRow& e) {
  const Event& ev = e.ev;
  const NetObject& n = ev.net;
  if (!n.ip()) return;
  std::string host = n.hosts.empty() ? n.addr_text : n.hosts.front();
  std::string proto(net_proto_name(n.proto));
  auto key = std::make_tuple(host, n.port, proto);
  auto it = index_.find(key);
  if (it == index_.end()) {
    if (contacted_.size() >= max_) {
      dropped_ += e.count;
      return;
    }
    it = index_.emplace(key, contacted_.size()).first;
    HostContact h;
    h.host = host;
    h.port = n.port;
    h.proto = proto;
    contacted_.push_back(std::move(h));
  }
  size_t i = it->second;
  HostContact& h = contacted_[i];
  for (const auto& name : n.hosts) {
    if (!add_unique(h.names, name)) continue;
    by_name_[name].push_back(i);
    count_lookups(i, name);
  }
  add_unique(h.addresses, n.addr_text);
  add_unique(h.actions, std::string(action_name(ev.action)));
  uint64_t proc_id = ev.proc ? ev.proc->proc_id : 0;
  auto p = std::find_if(h.processes.begin(), h.processes.end(), [&](const HostContact::Process& x) {
    return proc_id != 0 ? x.proc_id == proc_id : x.proc_id == 0 && x.pid == ev.pid;
  });
  if (p == h.processes.end()) {
    h.processes.push_back({proc_id, ev.pid, ev.proc ? ev.proc->comm : std::string(), 0});
    p = h.processes.end() - 1;
  }
  p->events += e.count;
  widen(h, ev.ts_ns);
  h.events += e.count;
  if (!e.allowed) h.denied += e.count;
  if (e.verdict.decision == Decision::Ask) h.asked += e.count;
}

void HostTally::add(const LookupRow& r) {
  auto it = lookups_.find(r.name);
  if (it == lookups_.end()) {
    if (lookups_.size() >= max_) {
      ++dropped_;
      return;
    }
    it = lookups_.emplace(r.name, NameLookups{}).first;
  }
  NameLookups& l = it->second;
  ++l.all;
  if (r.denied) {
    if (l.refused++ == 0) {
      refused_order_.push_back(r.name);
      l.first_refused_ns = r.ts_ns;
    }
    l.first_refused_ns = std::min(l.first_refused_ns, r.ts_ns);
    l.last_refused_ns = std::max(l.last_refused_ns, r.ts_ns);
    if (r.proc_id) add_unique(l.refused_by, r.proc_id);
  }
  if (auto rows = by_name_.find(r.name); rows != by_name_.end())
    for (size_t i : rows->second) {
      ++contacted_[i].lookups;
      if (r.denied) ++contacted_[i].lookups_refused;
    }
}

std::vector<HostContact> HostTally::rows() const {
  std::vector<HostContact> out = contacted_;
  std::stable_sort(out.begin(), out.end(),
                   [](const HostContact& a, const HostContact& b) { return a.first_ns < b.first_ns; });
  // A refused name that an event reached anyway is counted on that row.
  for (const auto& name : refused_order_) {
    if (by_name_.contains(name)) continue;
    const NameLookups& l = lookups_.at(name);
    HostContact h;
    h.host = name;
    h.names = {name};
    h.proto = "dns";
    h.lookups = h.lookups_refused = l.refused;
    h.first_ns = l.first_refused_ns;
    h.last_ns = l.last_refused_ns;
    for (uint64_t id : l.refused_by) h.processes.push_back({id, 0, "", 0});
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<HostContact> summarize_hosts(const std::vector<StoredEvent>& events,
                                         const std::vector<StoredLookup>& lookups) {
  HostTally t;
  for (const auto& e : events) t.add(e.row);
  for (const auto& l : lookups) t.add(l.row);
  return t.rows();
}

Result<HostPattern> parse_host_query(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  NetParseError err;
  auto p = parse_host_pattern(text, &err);
  if (!p) return Error{EINVAL, "bad host '" + std::string(text) + "': " + err.message};
  return std::move(*p);
}

bool contacted(const HostPattern& p, const NetObject& n) {
  if (!n.ip()) return false;
  if (p.kind == HostPattern::Kind::Address) return p.cidr.contains(n.addr);
  for (const auto& name : n.names)
    if (p.match_name(normalize_host_name(name))) return true;
  // Names as asked for, when a producer filled only those.
  for (const auto& name : n.hosts)
    if (p.match_name(normalize_host_name(name))) return true;
  return false;
}

}  // namespace cb::db
