#include "proto/protocol.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "db/bytes.h"
#include "db/json.h"

namespace cb::proto {
namespace {

using nlohmann::json;

// ------------------------------------------------------------------ decoding --

struct Malformed {
  std::string what;
};

// Typed access to one JSON object; a wrong type throws Malformed naming the key.
class Obj {
 public:
  Obj(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) fail("", "an object");
  }

  bool has(const char* k) const { return j_.contains(k) && !j_.at(k).is_null(); }

  int64_t i64(const char* k, int64_t dflt = 0) const {
    if (!has(k)) return dflt;
    const json& v = j_.at(k);
    if (!v.is_number_integer()) fail(k, "an integer");
    return v.get<int64_t>();
  }
  uint64_t u64(const char* k, uint64_t dflt = 0) const {
    if (!has(k)) return dflt;
    const json& v = j_.at(k);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) fail(k, "a non-negative integer");
    return v.get<uint64_t>();
  }
  int32_t i32(const char* k, int32_t dflt = 0) const { return static_cast<int32_t>(i64(k, dflt)); }
  bool boolean(const char* k, bool dflt = false) const {
    if (!has(k)) return dflt;
    const json& v = j_.at(k);
    if (!v.is_boolean()) fail(k, "true or false");
    return v.get<bool>();
  }
  std::string str(const char* k, std::string dflt = {}) const {
    if (!has(k)) return dflt;
    const json& v = j_.at(k);
    if (!v.is_string()) fail(k, "a string");
    return v.get<std::string>();
  }
  // A byte string written by db::put_bytes: the exact bytes from "<k>_b64" if present.
  std::string bytes(const char* k) const {
    std::string b64 = std::string(k) + "_b64";
    if (has(b64.c_str())) {
      auto raw = db::base64_decode(str(b64.c_str()));
      if (!raw) fail(b64.c_str(), "base64");
      return *raw;
    }
    return str(k);
  }
  std::vector<std::string> strings(const char* k) const {
    std::vector<std::string> out;
    if (!has(k)) return out;
    const json& v = j_.at(k);
    if (!v.is_array()) fail(k, "an array of strings");
    for (const auto& e : v) {
      if (!e.is_string()) fail(k, "an array of strings");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  std::vector<std::string> bytes_array(const char* k) const {
    std::string b64 = std::string(k) + "_b64";
    if (!has(b64.c_str())) return strings(k);
    std::vector<std::string> out;
    for (const auto& s : strings(b64.c_str())) {
      auto raw = db::base64_decode(s);
      if (!raw) fail(b64.c_str(), "base64");
      out.push_back(std::move(*raw));
    }
    return out;
  }
  Obj obj(const char* k) const {
    if (!j_.contains(k)) fail(k, "present");
    return Obj(j_.at(k), where_ + k + ".");
  }
  const json& raw(const char* k) const { return j_.at(k); }

  [[noreturn]] void fail(const char* k, const char* expected) const {
    throw Malformed{"\"" + where_ + k + "\" must be " + expected};
  }

 private:
  const json& j_;
  std::string where_;
};

template <typename E, size_t N>
E enum_by_name(const Obj& o, const char* key, std::string_view (*name)(E), const E (&all)[N], E dflt) {
  if (!o.has(key)) return dflt;
  std::string s = o.str(key);
  for (E e : all)
    if (name(e) == s) return e;
  throw Malformed{"\"" + std::string(key) + "\": unknown value \"" + s + "\""};
}

constexpr Source kSources[] = {Source::Seccomp, Source::Ebpf, Source::Supervisor};
constexpr Layer kLayers[] = {Layer::None, Layer::Notify, Layer::Filter, Layer::Mount, Layer::Landlock};
constexpr SessionState kStates[] = {SessionState::Running, SessionState::Ended, SessionState::Aborted};

json null_if(int64_t v, bool is_null) { return is_null ? json(nullptr) : json(v); }

EventRow decode_event(const Obj& o, int64_t* session) {
  EventRow r;
  Event& ev = r.ev;
  if (session) *session = o.i64("session");
  r.seq = o.u64("seq");
  ev.ts_ns = o.i64("ts_ns");
  ev.pid = o.i32("pid");
  ev.tid = o.i32("tid");
  std::string action = o.str("action");
  auto a = parse_action(action);
  if (!a) throw Malformed{"\"action\": unknown action \"" + action + "\""};
  ev.action = *a;
  ev.syscall = o.str("syscall");
  ev.syscall_nr = o.i32("syscall_nr", -1);
  ev.path = o.bytes("path");
  ev.target = o.bytes("target");
  ev.aliases = o.bytes_array("aliases");
  ev.flags = o.u64("flags");
  ev.is_dir = o.boolean("is_dir");
  ev.target_pid = o.i32("target_pid");
  ev.source = enum_by_name(o, "source", source_name, kSources, Source::Seccomp);
  if (o.has("net")) {
    Obj n = o.obj("net");
    std::string proto = n.str("proto");
    NetProto p = NetProto::Other;
    for (NetProto x : {NetProto::Tcp, NetProto::Udp, NetProto::Unix})
      if (net_proto_name(x) == proto) p = x;
    auto addr = IpAddr::parse(n.str("addr"));
    if (n.has("addr") && !addr) n.fail("addr", "an IP address");
    uint64_t port = n.u64("port");
    if (port > 65535) n.fail("port", "a port (0-65535)");
    ev.net = make_net_object(p, addr.value_or(IpAddr{}), static_cast<uint16_t>(port));
    ev.net.hosts = n.strings("hosts");
    ev.net.names = n.strings("names");
  }
  if (o.has("comm") || o.has("proc_id")) {
    auto p = std::make_shared<ProcessInfo>();
    p->pid = ev.pid;
    p->ppid = o.i32("ppid");
    p->proc_id = o.u64("proc_id");
    p->comm = o.bytes("comm");
    p->exe = o.bytes("exe");
    p->names = o.strings("identity");
    p->identity.why = o.bytes("no_identity");
    ev.proc = std::move(p);
  }
  r.allowed = o.str("decision", "allow") != "deny";
  std::string verdict = o.str("verdict", "allow");
  auto d = parse_decision(verdict);
  if (!d) throw Malformed{"\"verdict\": unknown decision \"" + verdict + "\""};
  r.verdict.decision = *d;
  r.verdict.rule_id = o.str("rule");
  r.verdict.message = o.str("message");
  r.verdict.builtin = o.boolean("builtin");
  r.layer = enum_by_name(o, "layer", layer_name, kLayers, Layer::None);
  r.result_errno = o.i32("errno", -1);
  r.enforced = o.boolean("enforced", true);
  r.count = static_cast<uint32_t>(o.u64("count", 1));
  return r;
}

db::SessionSummary decode_session(const Obj& o) {
  db::SessionSummary s;
  SessionStart& st = s.start;
  s.id = o.i64("id");
  st.uuid = o.str("uuid");
  st.name = o.str("name");
  s.state = enum_by_name(o, "state", session_state_name, kStates, SessionState::Running);
  st.argv = o.bytes_array("argv");
  st.cwd = o.bytes("cwd");
  st.uid = static_cast<uint32_t>(o.u64("uid"));
  st.user = o.str("user");
  st.hostname = o.str("hostname");
  st.policy_files = o.bytes_array("policy_files");
  st.policy_hash = o.str("policy_hash");
  st.started_ns = o.i64("started_ns");
  if (o.has("ended_ns")) {
    SessionEnd e;
    e.ended_ns = o.i64("ended_ns");
    e.exit_status = o.i32("exit_status", -1);
    e.exit_signal = o.i32("exit_signal");
    e.state = s.state;
    s.end = e;
  }
  s.degraded = o.strings("degraded");
  st.observe = o.boolean("observe");
  st.tracer = o.str("tracer");
  st.ask_mode = o.str("ask_mode");
  st.supervisor_pid = o.i32("supervisor_pid");
  st.boot_id = o.str("boot_id");
  s.events_lost = o.u64("events_lost");
  s.events = o.u64("events");
  s.denials = o.u64("denials");
  s.asks = o.u64("asks");
  s.processes = o.u64("processes");
  return s;
}

ApprovalRow decode_approval(const Obj& o) {
  ApprovalRow a;
  a.asked_ns = o.i64("asked_ns");
  a.answered_ns = o.i64("answered_ns");
  a.answered_by = o.str("answered_by");
  a.answer = o.str("answer");
  a.rule_written = o.str("rule_written");
  return a;
}

Message decode_object(const json& j) {
  Obj o(j, "");
  if (!o.has("type")) throw Malformed{"no \"type\""};
  std::string type = o.str("type");
  if (type == "hello") {
    Hello h;
    h.version = o.i32("version", 0);
    h.client = o.str("client");
    h.session = decode_session(o.obj("session"));
    return h;
  }
  if (type == "event") {
    EventMsg m;
    m.row = decode_event(o.obj("event"), &m.session);
    return m;
  }
  if (type == "process") {
    Obj p = o.obj("process");
    ProcessMsg m;
    m.session = p.i64("session");
    m.row.proc_id = p.u64("proc_id");
    m.row.parent_proc_id = p.u64("parent_proc_id");
    m.row.pid = p.i32("pid");
    m.row.ppid = p.i32("ppid");
    m.row.uid = static_cast<uint32_t>(p.u64("uid"));
    m.row.comm = p.bytes("comm");
    m.row.exe = p.bytes("exe");
    m.row.argv = p.bytes_array("argv");
    m.row.cwd = p.bytes("cwd");
    m.row.started_ns = p.i64("started_ns");
    m.row.names = p.strings("identity");
    m.row.identity.why = p.bytes("no_identity");
    return m;
  }
  if (type == "exec") {
    ExecMsg m;
    m.exec.proc_id = o.u64("proc_id");
    m.exec.ts_ns = o.i64("ts_ns");
    m.exec.comm = o.bytes("comm");
    m.exec.exe = o.bytes("exe");
    m.exec.argv = o.bytes_array("argv");
    m.exec.names = o.strings("identity");
    m.exec.identity.why = o.bytes("no_identity");
    return m;
  }
  if (type == "exit") {
    ExitMsg m;
    m.exit.proc_id = o.u64("proc_id");
    m.exit.ended_ns = o.i64("ended_ns");
    m.exit.exit_status = o.i32("exit_status", -1);
    m.exit.exit_signal = o.i32("exit_signal");
    return m;
  }
  if (type == "approval") {
    ApprovalMsg m;
    m.approval = decode_approval(o.obj("approval"));
    m.approval.event_seq = o.u64("seq");
    return m;
  }
  if (type == "degraded") return DegradedMsg{o.str("reason")};
  if (type == "dropped") return DroppedMsg{o.u64("events")};
  if (type == "ask") {
    AskMsg m;
    m.ask_id = o.u64("ask_id");
    m.session = o.i64("session");
    m.session_name = o.str("session_name");
    m.row = decode_event(o.obj("event"), nullptr);
    m.summary = o.str("summary");
    m.count = static_cast<uint32_t>(o.u64("count", 1));
    m.asked_ns = o.i64("asked_ns");
    m.deadline_ns = o.i64("deadline_ns");
    if (o.has("why")) {
      m.why = o.raw("why");
      if (!m.why.is_object() && !m.why.is_null()) o.fail("why", "an object");
    }
    if (o.has("chain")) {
      const json& c = o.raw("chain");
      if (!c.is_array()) o.fail("chain", "an array");
      for (const auto& e : c) {
        Obj l(e, "chain[].");
        m.chain.push_back({l.i32("pid"), l.bytes("comm"), l.bytes_array("argv")});
      }
    }
    return m;
  }
  if (type == "ask_update")
    return AskUpdate{o.u64("ask_id"), static_cast<uint32_t>(o.u64("count", 1)), o.str("summary")};
  if (type == "ask_cancel") return AskCancel{o.u64("ask_id"), o.str("reason")};
  if (type == "end") {
    EndMsg m;
    m.session = o.i64("session");
    m.end.ended_ns = o.i64("ended_ns");
    m.end.exit_status = o.i32("exit_status", -1);
    m.end.exit_signal = o.i32("exit_signal");
    m.end.state = enum_by_name(o, "state", session_state_name, kStates, SessionState::Ended);
    return m;
  }
  if (type == "welcome") return Welcome{o.i32("version", 0), o.str("server"), o.str("name")};
  if (type == "answer") {
    Answer a;
    if (!o.has("ask_id")) throw Malformed{"answer without \"ask_id\""};
    a.ask_id = o.u64("ask_id");
    std::string d = o.str("decision");
    if (d != "allow" && d != "deny") throw Malformed{"\"decision\" must be \"allow\" or \"deny\""};
    a.allow = d == "allow";
    std::string scope = o.str("scope", "once");
    auto s = parse_scope(scope);
    if (!s) throw Malformed{"\"scope\" must be \"once\", \"tree\" or \"always\""};
    a.scope = *s;
    a.rule = o.str("rule");
    a.by = o.str("by");
    a.timeout = o.str("reason") == "timeout";
    return a;
  }
  return Unknown{type};
}

// ------------------------------------------------------------------ encoding --

json chain_json(const std::vector<ChainLink>& chain) {
  json a = json::array();
  for (const auto& l : chain) {
    json e = json::object();
    e["pid"] = l.pid;
    db::put_bytes(e, "comm", l.comm);
    db::put_bytes_array(e, "argv", l.argv);
    a.push_back(std::move(e));
  }
  return a;
}

json text(std::string_view s) { return db::to_valid_utf8(s); }

struct Encoder {
  json operator()(const Hello& h) const {
    return {{"type", "hello"},
            {"version", h.version},
            {"client", text(h.client)},
            {"session", db::session_json(h.session)}};
  }
  json operator()(const EventMsg& m) const { return {{"type", "event"}, {"event", db::event_json(m.session, m.row)}}; }
  json operator()(const ProcessMsg& m) const {
    db::StoredProcess sp;
    sp.session = m.session;
    sp.row = m.row;
    sp.identity_recorded = true;
    json p = db::process_json(sp);
    // Counts and the exit belong to later messages.
    for (auto k : {"events", "denials", "ended_ns", "exit_status", "exit_signal"}) p.erase(k);
    return {{"type", "process"}, {"process", std::move(p)}};
  }
  json operator()(const ExecMsg& m) const {
    json j = {{"type", "exec"}, {"proc_id", m.exec.proc_id}, {"ts_ns", m.exec.ts_ns}};
    db::put_bytes(j, "comm", m.exec.comm);
    db::put_bytes(j, "exe", m.exec.exe);
    db::put_bytes_array(j, "argv", m.exec.argv);
    j["identity"] = m.exec.names;
    if (m.exec.names.empty() && !m.exec.identity.why.empty()) db::put_bytes(j, "no_identity", m.exec.identity.why);
    return j;
  }
  json operator()(const ExitMsg& m) const {
    return {{"type", "exit"},
            {"proc_id", m.exit.proc_id},
            {"ended_ns", m.exit.ended_ns},
            {"exit_status", null_if(m.exit.exit_status, m.exit.exit_status < 0)},
            {"exit_signal", null_if(m.exit.exit_signal, m.exit.exit_signal == 0)}};
  }
  json operator()(const ApprovalMsg& m) const {
    return {{"type", "approval"}, {"seq", m.approval.event_seq}, {"approval", db::approval_json(m.approval)}};
  }
  json operator()(const DegradedMsg& m) const { return {{"type", "degraded"}, {"reason", text(m.reason)}}; }
  json operator()(const DroppedMsg& m) const { return {{"type", "dropped"}, {"events", m.events}}; }
  json operator()(const AskMsg& m) const {
    json j = json::object();
    j["type"] = "ask";
    j["ask_id"] = m.ask_id;
    j["session"] = m.session;
    j["session_name"] = text(m.session_name);
    j["summary"] = text(m.summary);
    j["count"] = m.count;
    j["asked"] = db::iso8601_utc(m.asked_ns);
    j["asked_ns"] = m.asked_ns;
    j["deadline"] = db::iso8601_utc(m.deadline_ns);
    j["deadline_ns"] = m.deadline_ns;
    // The rule again, at the top, for programs that only want to know why.
    j["rule"] = {{"id", m.row.verdict.rule_id.empty() ? json(nullptr) : text(m.row.verdict.rule_id)},
                 {"message", m.row.verdict.message.empty() ? json(nullptr) : text(m.row.verdict.message)}};
    j["chain"] = chain_json(m.chain);
    j["event"] = db::event_json(m.session, m.row);
    if (!m.why.is_null()) j["why"] = m.why;
    return j;
  }
  json operator()(const AskUpdate& m) const {
    return {{"type", "ask_update"}, {"ask_id", m.ask_id}, {"count", m.count}, {"summary", text(m.summary)}};
  }
  json operator()(const AskCancel& m) const {
    return {{"type", "ask_cancel"}, {"ask_id", m.ask_id}, {"reason", text(m.reason)}};
  }
  json operator()(const EndMsg& m) const {
    return {{"type", "end"},
            {"session", m.session},
            {"ended", db::iso8601_utc(m.end.ended_ns)},
            {"ended_ns", m.end.ended_ns},
            {"exit_status", null_if(m.end.exit_status, m.end.exit_status < 0)},
            {"exit_signal", null_if(m.end.exit_signal, m.end.exit_signal == 0)},
            {"state", session_state_name(m.end.state)}};
  }
  json operator()(const Welcome& m) const {
    return {{"type", "welcome"}, {"version", m.version}, {"server", text(m.server)}, {"name", text(m.name)}};
  }
  json operator()(const Answer& a) const {
    json j = {{"type", "answer"},
              {"ask_id", a.ask_id},
              {"decision", a.allow ? "allow" : "deny"},
              {"scope", scope_name(a.scope)}};
    if (!a.rule.empty()) j["rule"] = text(a.rule);
    if (!a.by.empty()) j["by"] = text(a.by);
    if (a.timeout) j["reason"] = "timeout";
    return j;
  }
  json operator()(const Unknown& u) const { return {{"type", text(u.type)}}; }
};

}  // namespace

std::string_view software_version() { return COTTONBOX_VERSION; }

std::string_view scope_name(Scope s) {
  switch (s) {
    case Scope::Once: return "once";
    case Scope::Tree: return "tree";
    case Scope::Always: return "always";
  }
  return "once";
}

std::optional<Scope> parse_scope(std::string_view s) {
  if (s == "once") return Scope::Once;
  if (s == "tree") return Scope::Tree;
  if (s == "always") return Scope::Always;
  return std::nullopt;
}

std::string_view type_name(const Message& m) {
  return std::visit(
      [](const auto& x) -> std::string_view {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Hello>)
          return "hello";
        else if constexpr (std::is_same_v<T, EventMsg>)
          return "event";
        else if constexpr (std::is_same_v<T, ProcessMsg>)
          return "process";
        else if constexpr (std::is_same_v<T, ExecMsg>)
          return "exec";
        else if constexpr (std::is_same_v<T, ExitMsg>)
          return "exit";
        else if constexpr (std::is_same_v<T, ApprovalMsg>)
          return "approval";
        else if constexpr (std::is_same_v<T, DegradedMsg>)
          return "degraded";
        else if constexpr (std::is_same_v<T, DroppedMsg>)
          return "dropped";
        else if constexpr (std::is_same_v<T, AskMsg>)
          return "ask";
        else if constexpr (std::is_same_v<T, AskUpdate>)
          return "ask_update";
        else if constexpr (std::is_same_v<T, AskCancel>)
          return "ask_cancel";
        else if constexpr (std::is_same_v<T, EndMsg>)
          return "end";
        else if constexpr (std::is_same_v<T, Welcome>)
          return "welcome";
        else if constexpr (std::is_same_v<T, Answer>)
          return "answer";
        else
          return x.type;
      },
      m);
}

std::string encode(const Message& m) {
  // Every string went through to_valid_utf8 or put_bytes, so dump() cannot
  // throw; JSON escapes '\n' inside strings, so the line stays one line.
  return std::visit(Encoder{}, m).dump();
}

Result<Message> decode(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{EINVAL, "not JSON"};
  if (!j.is_object()) return Error{EINVAL, "not a JSON object"};
  try {
    return decode_object(j);
  } catch (const Malformed& m) {
    return Error{EINVAL, m.what};
  } catch (const nlohmann::json::exception& e) {
    return Error{EINVAL, e.what()};
  }
}

void LineReader::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    size_t nl = bytes.find('\n');
    std::string_view piece = nl == std::string_view::npos ? bytes : bytes.substr(0, nl + 1);
    bytes.remove_prefix(piece.size());
    if (skipping_) {
      if (nl != std::string_view::npos) skipping_ = false;
      continue;
    }
    size_t line_len = buf_.size() - tail_ + (nl == std::string_view::npos ? piece.size() : piece.size() - 1);
    if (line_len > max_) {
      // Drop what we have of the line and the rest of it as it arrives.
      buf_.resize(tail_);
      ++oversized_;
      skipping_ = nl == std::string_view::npos;
      continue;
    }
    buf_.append(piece);
    if (nl != std::string_view::npos) tail_ = buf_.size();
  }
}

std::optional<std::string> LineReader::next() {
  if (pos_ == tail_) return std::nullopt;
  size_t nl = buf_.find('\n', pos_);
  std::string line = buf_.substr(pos_, nl - pos_);
  pos_ = nl + 1;
  // Compact when every complete line is consumed, or the dead head is large.
  if (pos_ == tail_ || pos_ > (64u << 10)) {
    buf_.erase(0, pos_);
    tail_ -= pos_;
    pos_ = 0;
  }
  return line;
}

std::string default_socket_path() {
  const char* rt = getenv("XDG_RUNTIME_DIR");
  if (!rt || !*rt || rt[0] != '/') return {};
  return std::string(rt) + "/cottonbox/gui.sock";
}

Result<uint32_t> peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return Error::from_errno("SO_PEERCRED");
  return static_cast<uint32_t>(cred.uid);
}

Result<Ok> prepare_socket_dir(const std::string& socket_path) {
  std::string dir = dirname_of(socket_path);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Error::from_errno("cannot create " + dir);
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return Error::from_errno(dir);
  if (!S_ISDIR(st.st_mode)) return Error{ENOTDIR, dir + " is not a directory"};
  if (st.st_uid != geteuid()) return Error{EPERM, dir + " belongs to another user"};
  if ((st.st_mode & 077) != 0 && chmod(dir.c_str(), 0700) != 0) return Error::from_errno("cannot restrict " + dir);
  return Ok{};
}

}  // namespace cb::proto
