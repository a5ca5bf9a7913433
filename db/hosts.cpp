#include "db/hosts.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace cb::db {
namespace {

template <typename T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

void widen(HostContact& h, int64_t ts) {
  if (h.first_ns == 0 || ts < h.first_ns) h.first_ns = ts;
  h.last_ns = std::max(h.last_ns, ts);
}

}  // namespace

std::vector<HostContact> summarize_hosts(const std::vector<StoredEvent>& events,
                                         const std::vector<StoredLookup>& lookups) {
  std::vector<HostContact> out;
  std::map<std::tuple<std::string, uint16_t, std::string>, size_t> index;
  for (const auto& e : events) {
    const Event& ev = e.row.ev;
    const NetObject& n = ev.net;
    if (!n.ip()) continue;
    std::string host = n.hosts.empty() ? n.addr_text : n.hosts.front();
    std::string proto(net_proto_name(n.proto));
    auto key = std::make_tuple(host, n.port, proto);
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) {
      HostContact h;
      h.host = host;
      h.port = n.port;
      h.proto = proto;
      out.push_back(std::move(h));
    }
    HostContact& h = out[it->second];
    for (const auto& name : n.hosts) add_unique(h.names, name);
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
    p->events += e.row.count;
    widen(h, ev.ts_ns);
    h.events += e.row.count;
    if (!e.row.allowed) h.denied += e.row.count;
    if (e.row.verdict.decision == Decision::Ask) h.asked += e.row.count;
  }
  size_t contacted = out.size();
  for (const auto& l : lookups) {
    const LookupRow& r = l.row;
    bool matched = false;
    for (size_t i = 0; i < contacted; ++i) {
      HostContact& h = out[i];
      if (std::find(h.names.begin(), h.names.end(), r.name) == h.names.end()) continue;
      matched = true;
      ++h.lookups;
      if (r.denied) ++h.lookups_refused;
    }
    if (matched || !r.denied) continue;
    auto key = std::make_tuple(r.name, uint16_t{0}, std::string("dns"));
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) {
      HostContact h;
      h.host = r.name;
      h.names = {r.name};
      h.proto = "dns";
      out.push_back(std::move(h));
    }
    HostContact& h = out[it->second];
    ++h.lookups;
    ++h.lookups_refused;
    widen(h, r.ts_ns);
    if (r.proc_id) {
      auto p = std::find_if(h.processes.begin(), h.processes.end(),
                            [&](const HostContact::Process& x) { return x.proc_id == r.proc_id; });
      if (p == h.processes.end()) h.processes.push_back({r.proc_id, 0, "", 0});
    }
  }
  std::stable_sort(out.begin(), out.begin() + static_cast<ptrdiff_t>(contacted),
                   [](const HostContact& a, const HostContact& b) { return a.first_ns < b.first_ns; });
  return out;
}

}  // namespace cb::db
