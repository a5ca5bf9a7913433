#include "db/json.h"

#include <ctime>

#include "db/bytes.h"

namespace cb::db {
namespace {

using nlohmann::json;

// Text that is ours or the policy author's (rule ids, messages, names): made
// valid, with no base64 twin since nobody needs its exact bytes back.
json text(std::string_view s) { return to_valid_utf8(s); }
json text_or_null(std::string_view s) { return s.empty() ? json(nullptr) : text(s); }

}  // namespace

std::string iso8601_utc(int64_t ns) {
  // Floor division: an instant before 1970 still prints a valid time.
  int64_t secs = ns / 1'000'000'000;
  int64_t frac = ns % 1'000'000'000;
  if (frac < 0) frac += 1'000'000'000, --secs;
  time_t t = static_cast<time_t>(secs);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, ".%09lldZ", static_cast<long long>(frac));
  return buf;
}

void put_bytes(json& j, const std::string& key, std::string_view bytes) {
  if (is_valid_utf8(bytes)) {
    j[key] = bytes;
  } else {
    j[key] = to_valid_utf8(bytes);
    j[key + "_b64"] = base64_encode(bytes);
  }
}

void put_bytes_array(json& j, const std::string& key, const std::vector<std::string>& v) {
  auto a = json::array();
  bool exact = true;
  for (const auto& s : v) {
    exact = exact && is_valid_utf8(s);
    a.push_back(to_valid_utf8(s));
  }
  j[key] = std::move(a);
  if (!exact) {
    auto b = json::array();
    for (const auto& s : v) b.push_back(base64_encode(s));
    j[key + "_b64"] = std::move(b);
  }
}

json event_json(int64_t session, const EventRow& r) {
  const Event& ev = r.ev;
  json j = json::object();
  j["ts"] = iso8601_utc(ev.ts_ns);
  j["ts_ns"] = ev.ts_ns;
  j["session"] = session;
  j["seq"] = r.seq;
  j["pid"] = ev.pid;
  j["tid"] = ev.tid;
  if (ev.proc) {
    j["ppid"] = ev.proc->ppid;
    j["proc_id"] = ev.proc->proc_id == 0 ? json(nullptr) : json(ev.proc->proc_id);
    put_bytes(j, "comm", ev.proc->comm);
    if (ev.proc->exe.empty())
      j["exe"] = nullptr;
    else
      put_bytes(j, "exe", ev.proc->exe);
    if (!ev.proc->names.empty()) j["identity"] = ev.proc->names;
    if (ev.proc->names.empty() && !ev.proc->identity.why.empty()) put_bytes(j, "no_identity", ev.proc->identity.why);
  } else {
    j["ppid"] = nullptr;
    j["proc_id"] = nullptr;
    j["comm"] = "";
    j["exe"] = nullptr;
  }
  j["action"] = action_name(ev.action);
  j["syscall"] = text(ev.syscall);
  put_bytes(j, "path", ev.path);
  put_bytes(j, "target", ev.target);
  if (!ev.aliases.empty()) put_bytes_array(j, "aliases", ev.aliases);
  j["flags"] = ev.flags;
  j["is_dir"] = ev.is_dir;
  j["target_pid"] = ev.target_pid;
  j["decision"] = r.allowed ? "allow" : "deny";
  j["verdict"] = decision_name(r.verdict.decision);
  j["rule"] = text_or_null(r.verdict.rule_id);
  j["builtin"] = r.verdict.builtin;
  j["message"] = text_or_null(r.verdict.message);
  j["source"] = source_name(ev.source);
  j["layer"] = layer_name(r.layer);
  j["errno"] = r.result_errno < 0 ? json(nullptr) : json(r.result_errno);
  j["enforced"] = r.enforced;
  j["count"] = r.count;
  if (ev.net.proto != NetProto::None) j["net"] = net_json(ev.net);
  return j;
}

json net_json(const NetObject& n) {
  json j = json::object();
  j["proto"] = net_proto_name(n.proto);
  j["addr"] = n.addr_text.empty() ? json(nullptr) : json(n.addr_text);
  j["port"] = n.ip() ? json(n.port) : json(nullptr);
  // Names are the resolver's presentation form: printable ASCII.
  j["hosts"] = json::array();
  for (const auto& h : n.hosts) j["hosts"].push_back(text(h));
  j["names"] = json::array();
  for (const auto& h : n.names) j["names"].push_back(text(h));
  return j;
}

json host_json(int64_t session, const HostContact& h) {
  json j = json::object();
  j["session"] = session;
  j["host"] = text(h.host);
  j["names"] = json::array();
  for (const auto& n : h.names) j["names"].push_back(text(n));
  j["addresses"] = json::array();
  for (const auto& a : h.addresses) j["addresses"].push_back(text(a));
  j["proto"] = h.proto;
  j["port"] = h.proto == "dns" ? json(nullptr) : json(h.port);
  j["actions"] = json::array();
  for (const auto& a : h.actions) j["actions"].push_back(a);
  j["processes"] = json::array();
  for (const auto& p : h.processes) {
    json pj = json::object();
    pj["proc_id"] = p.proc_id == 0 ? json(nullptr) : json(p.proc_id);
    pj["pid"] = p.pid == 0 ? json(nullptr) : json(p.pid);
    put_bytes(pj, "comm", p.comm);
    pj["events"] = p.events;
    j["processes"].push_back(std::move(pj));
  }
  j["first"] = iso8601_utc(h.first_ns);
  j["first_ns"] = h.first_ns;
  j["last"] = iso8601_utc(h.last_ns);
  j["last_ns"] = h.last_ns;
  j["events"] = h.events;
  j["denied"] = h.denied;
  j["asked"] = h.asked;
  j["lookups"] = h.lookups;
  j["lookups_refused"] = h.lookups_refused;
  return j;
}

json event_json(const StoredEvent& e) {
  json j = event_json(e.session, e.row);
  j["id"] = e.id;
  if (e.approval) j["approval"] = approval_json(*e.approval);
  return j;
}

json approval_json(const ApprovalRow& a) {
  return json{
      {"asked", iso8601_utc(a.asked_ns)},
      {"asked_ns", a.asked_ns},
      {"answered_ns", a.answered_ns},
      {"wait_ns", a.answered_ns - a.asked_ns},
      {"answered_by", text(a.answered_by)},
      {"answer", text(a.answer)},
      {"rule_written", text_or_null(a.rule_written)},
  };
}

json session_json(const SessionSummary& s) {
  const SessionStart& st = s.start;
  json j = json::object();
  j["id"] = s.id;
  j["uuid"] = text(st.uuid);
  j["name"] = text(st.name);
  j["state"] = session_state_name(s.state);
  put_bytes_array(j, "argv", st.argv);
  put_bytes(j, "cwd", st.cwd);
  j["uid"] = st.uid;
  j["user"] = text(st.user);
  j["hostname"] = text(st.hostname);
  put_bytes_array(j, "policy_files", st.policy_files);
  j["policy_hash"] = text(st.policy_hash);
  j["started"] = iso8601_utc(st.started_ns);
  j["started_ns"] = st.started_ns;
  if (s.end) {
    j["ended"] = iso8601_utc(s.end->ended_ns);
    j["ended_ns"] = s.end->ended_ns;
    j["exit_status"] = s.end->exit_status < 0 ? json(nullptr) : json(s.end->exit_status);
    j["exit_signal"] = s.end->exit_signal == 0 ? json(nullptr) : json(s.end->exit_signal);
  } else {
    for (auto k : {"ended", "ended_ns", "exit_status", "exit_signal"}) j[k] = nullptr;
  }
  auto degraded = json::array();
  for (const auto& d : s.degraded) degraded.push_back(text(d));
  j["degraded"] = std::move(degraded);
  j["observe"] = st.observe;
  j["tracer"] = text(st.tracer);
  j["ask_mode"] = text(st.ask_mode);
  j["supervisor_pid"] = st.supervisor_pid;
  j["boot_id"] = text(st.boot_id);
  j["events_lost"] = s.events_lost;
  j["events"] = s.events;
  j["denials"] = s.denials;
  j["asks"] = s.asks;
  j["processes"] = s.processes;
  return j;
}

json process_json(const StoredProcess& p) {
  const ProcessRow& r = p.row;
  json j = json::object();
  j["session"] = p.session;
  j["proc_id"] = r.proc_id;
  j["parent_proc_id"] = r.parent_proc_id == 0 ? json(nullptr) : json(r.parent_proc_id);
  j["pid"] = r.pid;
  j["ppid"] = r.ppid;
  j["uid"] = r.uid;
  put_bytes(j, "comm", r.comm);
  put_bytes(j, "exe", r.exe);
  put_bytes_array(j, "argv", r.argv);
  put_bytes(j, "cwd", r.cwd);
  j["identity"] = p.identity_recorded ? json(r.names) : json(nullptr);
  if (r.names.empty() && !r.identity.why.empty()) put_bytes(j, "no_identity", r.identity.why);
  j["started"] = iso8601_utc(r.started_ns);
  j["started_ns"] = r.started_ns;
  if (p.exit) {
    j["ended_ns"] = p.exit->ended_ns == 0 ? json(nullptr) : json(p.exit->ended_ns);
    j["exit_status"] = p.exit->exit_status < 0 ? json(nullptr) : json(p.exit->exit_status);
    j["exit_signal"] = p.exit->exit_signal == 0 ? json(nullptr) : json(p.exit->exit_signal);
  } else {
    for (auto k : {"ended_ns", "exit_status", "exit_signal"}) j[k] = nullptr;
  }
  j["events"] = p.events;
  j["denials"] = p.denials;
  return j;
}

}  // namespace cb::db
