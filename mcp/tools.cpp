#include "mcp/tools.h"

#include <map>
#include <optional>
#include <stdexcept>

#include "audit/commands.h"
#include "audit/policy_source.h"
#include "db/bytes.h"
#include "db/json.h"
#include "db/store.h"
#include "policy/explain.h"
#include "policy/policy.h"
#include "proto/explain_json.h"

namespace cb::mcp {
namespace {

using nlohmann::json;

constexpr int64_t kDefaultPage = 100;
constexpr int64_t kMaxPage = 1000;

// A tool's failure on good JSON: reported to the model as isError.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string dump(const json& j, int indent = -1) { return j.dump(indent, ' ', false, json::error_handler_t::replace); }

json result(const std::string& summary, json data) {
  return {{"content", json::array({{{"type", "text"}, {"text", summary}}, {{"type", "text"}, {"text", dump(data)}}})},
          {"structuredContent", std::move(data)},
          {"isError", false}};
}

json failure(const std::string& why) {
  return {{"content", json::array({{{"type", "text"}, {"text", why}}})}, {"isError", true}};
}

// ------------------------------------------------------------ arguments

std::optional<int64_t> opt_int(const json& a, const char* key) {
  if (!a.contains(key) || a[key].is_null()) return std::nullopt;
  if (a[key].is_number_integer()) return a[key].get<int64_t>();
  if (a[key].is_string()) {
    const std::string& s = a[key].get_ref<const std::string&>();
    char* end = nullptr;
    long long v = strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end && !*end) return v;
  }
  throw ToolError(std::string("'") + key + "' must be an integer");
}

int64_t need_int(const json& a, const char* key) {
  auto v = opt_int(a, key);
  if (!v) throw ToolError(std::string("'") + key + "' is required");
  return *v;
}

std::optional<std::string> opt_str(const json& a, const char* key) {
  if (!a.contains(key) || a[key].is_null()) return std::nullopt;
  if (!a[key].is_string()) throw ToolError(std::string("'") + key + "' must be a string");
  return a[key].get<std::string>();
}

std::vector<std::string> str_list(const json& a, const char* key) {
  std::vector<std::string> out;
  if (!a.contains(key) || a[key].is_null()) return out;
  if (a[key].is_string()) return {a[key].get<std::string>()};
  if (!a[key].is_array()) throw ToolError(std::string("'") + key + "' must be a list of strings");
  for (const auto& e : a[key]) {
    if (!e.is_string()) throw ToolError(std::string("'") + key + "' must be a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

int64_t page_size(const json& a) {
  int64_t n = opt_int(a, "limit").value_or(kDefaultPage);
  if (n <= 0) throw ToolError("'limit' must be positive");
  return std::min(n, kMaxPage);
}

// Cursors: opaque to clients; here base64 of {"tool", "after"|"offset"}.
std::string make_cursor(const std::string& tool, const char* key, int64_t value) {
  return db::base64_encode(dump({{"tool", tool}, {key, value}}));
}

std::optional<int64_t> read_cursor(const json& a, const std::string& tool, const char* key) {
  auto c = opt_str(a, "cursor");
  if (!c) return std::nullopt;
  auto raw = db::base64_decode(*c);
  json j = raw ? json::parse(*raw, nullptr, false) : json();
  if (!j.is_object() || j.value("tool", "") != tool || !j.contains(key) || !j[key].is_number_integer())
    throw ToolError("invalid cursor: pass back the next_cursor of a " + tool + " result unchanged");
  return j[key].get<int64_t>();
}

std::unique_ptr<db::Reader> open_reader(const std::string& path) {
  auto r = db::Reader::open(path);
  if (!r) throw ToolError(r.error().message);
  return std::move(*r);
}

template <typename T>
T value_or_throw(Result<T> r) {
  if (!r) throw ToolError(r.error().message);
  return std::move(*r);
}

// Policies given as files or as text.
std::vector<std::pair<std::string, std::string>> policy_texts(const json& a) {
  std::vector<std::pair<std::string, std::string>> texts;
  auto files = str_list(a, "policy_files");
  if (!files.empty()) texts = value_or_throw(audit::read_policy_files(files));
  if (auto t = opt_str(a, "policy_text")) texts.emplace_back("policy_text.yaml", *t);
  if (texts.empty()) throw ToolError("give the policy: 'policy_files' (paths) or 'policy_text' (YAML)");
  return texts;
}

std::map<std::string, std::string> vars_of(const json& a) {
  std::map<std::string, std::string> v;
  if (a.contains("vars") && !a["vars"].is_null()) {
    if (!a["vars"].is_object()) throw ToolError("'vars' must map names to strings");
    for (auto& [k, x] : a["vars"].items()) {
      if (!x.is_string()) throw ToolError("'vars' must map names to strings");
      v[k] = x.get<std::string>();
    }
  }
  return audit::default_vars(v);
}

// An offset page of an array inside `data`.
void page_array(json& data, const char* key, const std::string& tool, const json& a) {
  int64_t offset = read_cursor(a, tool, "offset").value_or(0);
  int64_t n = page_size(a);
  json& arr = data[key];
  int64_t total = static_cast<int64_t>(arr.size());
  if (offset < 0 || offset > total) throw ToolError("invalid cursor: past the end");
  json page = json::array();
  for (int64_t i = offset; i < std::min(total, offset + n); ++i) page.push_back(std::move(arr[i]));
  arr = std::move(page);
  data["total"] = total;
  data["next_cursor"] = offset + n < total ? json(make_cursor(tool, "offset", offset + n)) : json(nullptr);
}

std::string page_note(const json& data) {
  return data["next_cursor"].is_null() ? "" : " (more: pass next_cursor as cursor)";
}

// ------------------------------------------------------------ the tools

json list_sessions(const std::string& path, const json& a) {
  auto r = open_reader(path);
  auto sessions = value_or_throw(r->sessions());
  json data = {{"sessions", json::array()}};
  for (const auto& s : sessions) data["sessions"].push_back(db::session_json(s));
  page_array(data, "sessions", "list_sessions", a);
  return result(std::to_string(data["total"].get<int64_t>()) + " sessions in " + path + "; " +
                    std::to_string(data["sessions"].size()) + " here" + page_note(data),
                data);
}

json session_summary(const std::string& path, const json& a) {
  auto r = open_reader(path);
  int64_t id = need_int(a, "session");
  auto s = value_or_throw(r->session(id));
  db::EventQuery q;
  q.session = id;
  auto events = value_or_throw(r->events(q));
  std::map<std::string, std::map<std::string, uint64_t>> by_action;
  json denials = json::array(), asks = json::array();
  for (const auto& e : events) {
    std::string verdict(decision_name(e.row.verdict.decision));
    by_action[std::string(action_name(e.row.ev.action))][verdict] += e.row.count;
    auto brief = [&] {
      // The identity is who it was; the command name is what it called itself.
      const ProcessInfo* p = e.row.ev.proc.get();
      return json{
          {"id", e.id},
          {"comm", db::to_valid_utf8(p ? p->comm : "")},
          {"identity", p && e.identity_recorded ? json(p->names) : json(nullptr)},
          {"action", action_name(e.row.ev.action)},
          {"path", db::to_valid_utf8(e.row.ev.path)},
          {"rule", e.row.verdict.rule_id.empty() ? json(nullptr) : json(db::to_valid_utf8(e.row.verdict.rule_id))},
          {"decision", e.row.allowed ? "allow" : "deny"}};
    };
    if (!e.row.allowed && denials.size() < 50) denials.push_back(brief());
    if (e.row.verdict.decision == Decision::Ask && asks.size() < 50) asks.push_back(brief());
  }
  json data = {{"session", db::session_json(s)}, {"by_action", by_action}, {"denials", denials}, {"asks", asks}};
  std::string summary = "session " + std::to_string(id) + " (" + std::string(session_state_name(s.state)) +
                        "): " + std::to_string(s.events) + " events, " + std::to_string(s.denials) + " denied, " +
                        std::to_string(s.asks) + " asked, " + std::to_string(s.processes) + " processes";
  if (!s.degraded.empty()) summary += "; degraded: " + db::to_valid_utf8(s.degraded.front());
  return result(summary, data);
}

db::EventQuery event_query(const json& a, const std::string& tool) {
  db::EventQuery q;
  if (auto s = opt_int(a, "session")) q.session = *s;
  q.action = opt_str(a, "action");
  q.decision = opt_str(a, "decision");
  if (q.decision && *q.decision != "allow" && *q.decision != "deny" && *q.decision != "ask" && *q.decision != "log")
    throw ToolError("'decision' must be allow, deny, ask or log");
  q.path_glob = opt_str(a, "path");
  q.host = opt_str(a, "host");
  if (auto p = opt_int(a, "pid")) q.pid = static_cast<int32_t>(*p);
  q.after_id = opt_int(a, "after_id").value_or(0);
  if (auto c = read_cursor(a, tool, "after")) q.after_id = *c;
  q.limit = page_size(a);
  return q;
}

json query_events(const std::string& path, const json& a) {
  auto r = open_reader(path);
  db::EventQuery q = event_query(a, "query_events");
  auto events = value_or_throw(r->events(q));
  json data = {{"events", json::array()}};
  for (const auto& e : events) data["events"].push_back(db::event_json(e));
  bool full = static_cast<int64_t>(events.size()) >= q.limit;
  data["next_cursor"] = full ? json(make_cursor("query_events", "after", events.back().id)) : json(nullptr);
  return result(
      std::to_string(events.size()) + " events" +
          (events.empty() ? ""
                          : ", ids " + std::to_string(events.front().id) + " to " + std::to_string(events.back().id)) +
          page_note(data),
      data);
}

json process_tree(const std::string& path, const json& a) {
  auto r = open_reader(path);
  int64_t id = need_int(a, "session");
  (void)value_or_throw(r->session(id));
  auto procs = value_or_throw(r->processes(id));
  json data = {{"session", id}, {"processes", json::array()}};
  for (const auto& p : procs) data["processes"].push_back(db::process_json(p));
  page_array(data, "processes", "process_tree", a);
  return result("session " + std::to_string(id) + ": " + std::to_string(data["total"].get<int64_t>()) +
                    " processes (parent_proc_id links them)" + page_note(data),
                data);
}

// An event with the chain behind it: the identities of the process and its
// parents, nearest first, as the rules see them ("" for none).
json event_with_chain(const db::StoredEvent& e) {
  json j = db::event_json(e);
  json chain = json::array();
  if (e.row.ev.proc) {
    const ProcessInfo& p = *e.row.ev.proc;
    chain.push_back(p.names.empty() ? std::string() : db::to_valid_utf8(p.names.front()));
    for (const auto& anc : p.ancestors) chain.push_back(db::to_valid_utf8(anc));
  }
  j["chain"] = chain;
  if (e.row.ev.proc) j["argv"] = !e.row.ev.proc->argv.empty() ? json(e.row.ev.proc->argv) : json::array();
  return j;
}

json who_touched(const std::string& path, const json& a) {
  auto r = open_reader(path);
  auto p = opt_str(a, "path");
  if (!p || p->empty()) throw ToolError("'path' is required: a path (with what lies below it) or a glob");
  std::string glob = *p;
  if (glob.find_first_of("*?[{") == std::string::npos) {
    while (glob.size() > 1 && glob.back() == '/') glob.pop_back();
    glob = glob + "{,/**}";  // the path itself and everything below it
  }
  json args = a;
  args["path"] = glob;
  db::EventQuery q = event_query(args, "who_touched");
  auto events = value_or_throw(r->events(q));
  json data = {{"path", *p}, {"glob", glob}, {"events", json::array()}};
  for (const auto& e : events) data["events"].push_back(event_with_chain(e));
  bool full = static_cast<int64_t>(events.size()) >= q.limit;
  data["next_cursor"] = full ? json(make_cursor("who_touched", "after", events.back().id)) : json(nullptr);
  return result(std::to_string(events.size()) + " events on " + *p + page_note(data), data);
}

json who_contacted(const std::string& path, const json& a) {
  auto r = open_reader(path);
  auto h = opt_str(a, "host");
  if (!h || h->empty())
    throw ToolError("'host' is required: a name, a pattern (*.example.com), an address or a block (10.0.0.0/8)");
  db::EventQuery q = event_query(a, "who_contacted");
  auto events = value_or_throw(r->events(q));
  json data = {{"host", *h}, {"events", json::array()}};
  for (const auto& e : events) data["events"].push_back(event_with_chain(e));
  bool full = static_cast<int64_t>(events.size()) >= q.limit;
  data["next_cursor"] = full ? json(make_cursor("who_contacted", "after", events.back().id)) : json(nullptr);
  return result(std::to_string(events.size()) + " network events with " + *h + page_note(data), data);
}

json why(const std::string& path, const json& a) {
  if (auto id = opt_int(a, "event_id")) {
    auto r = open_reader(path);
    auto rep = value_or_throw(audit::why_event(*r, *id));
    return result(rep.text, rep.json);
  }
  audit::WhyQuery q;
  auto action = opt_str(a, "action");
  auto p = opt_str(a, "path");
  if (!action || !p) throw ToolError("give 'event_id', or 'action' and 'path' with the policy");
  q.action = *action;
  q.path = *p;
  q.target = opt_str(a, "target").value_or("");
  q.process = opt_str(a, "process").value_or("");
  q.exe = opt_str(a, "exe").value_or("");
  q.ancestors = str_list(a, "ancestors");
  q.argv = str_list(a, "argv");
  if (auto d = opt_int(a, "deletes")) q.deletes = static_cast<uint32_t>(*d);
  if (a.contains("is_dir") && a["is_dir"].is_boolean()) q.is_dir = a["is_dir"];
  auto rep = value_or_throw(audit::why_query(policy_texts(a), vars_of(a), path, q));
  return result(rep.text, rep.json);
}

json replay(const std::string& path, const json& a) {
  std::vector<int64_t> ids;
  if (a.contains("sessions") && a["sessions"].is_array()) {
    for (const auto& s : a["sessions"]) {
      if (!s.is_number_integer()) throw ToolError("'sessions' must be a list of session ids");
      ids.push_back(s.get<int64_t>());
    }
  } else if (auto s = opt_int(a, "session")) {
    ids.push_back(*s);
  }
  if (ids.empty()) throw ToolError("'sessions' (a list of ids) is required");
  auto r = open_reader(path);
  auto rep = value_or_throw(audit::replay_sessions(*r, ids, policy_texts(a), vars_of(a)));
  json data = std::move(rep.json);
  page_array(data, "changes", "replay", a);
  return result(data["summary"].get<std::string>() + " (" + std::to_string(data["total"].get<int64_t>()) +
                    " changes, " + std::to_string(data["uncertain"].size()) + " uncertain)" + page_note(data),
                data);
}

json check_policy(const std::string& path, const json& a) {
  auto texts = policy_texts(a);
  LoadOptions lo;
  lo.vars = vars_of(a);
  LoadResult lr = load_policy_text(texts, lo);
  json data = json::object();
  if (!lr.policy) {
    json errors = json::array();
    for (const auto& d : lr.errors)
      errors.push_back({{"file", db::to_valid_utf8(d.loc.file)},
                        {"line", d.loc.line},
                        {"col", d.loc.col},
                        {"message", db::to_valid_utf8(d.message)},
                        {"text", db::to_valid_utf8(format_diagnostic(d))}});
    data = {{"ok", false}, {"errors", errors}};
    return result(std::to_string(lr.errors.size()) + " error(s): " + errors[0]["text"].get<std::string>(), data);
  }
  Policy& p = *lr.policy;
  add_self_protection(p, audit::session_protection(path, p.files));
  json rules = json::array();
  auto statics = static_denials(p);
  for (const auto& r : p.rules) {
    std::vector<std::string> actions, paths;
    for (int i = 0; i < static_cast<int>(Action::Count); ++i)
      if (r.actions & (ActionMask{1} << i)) actions.emplace_back(action_name(static_cast<Action>(i)));
    for (const auto& g : r.paths) paths.push_back(g.text());
    std::string layer = r.builtin() ? "builtin" : r.decision == Decision::Allow ? "none" : "notify";
    for (const auto& sd : statics)
      if (sd.rule_id == r.id && !r.builtin()) layer = "mount";
    rules.push_back({{"id", db::to_valid_utf8(r.id)},
                     {"decision", decision_name(r.decision)},
                     {"actions", actions},
                     {"paths", paths},
                     {"processes", r.processes},
                     {"when", r.when_text.empty() ? json(nullptr) : json(db::to_valid_utf8(r.when_text))},
                     {"builtin", r.builtin()},
                     {"location", proto::rule_location(r).empty() ? json(nullptr) : json(proto::rule_location(r))},
                     {"layer", layer}});
  }
  data = {{"ok", true}, {"hash", p.hash}, {"default", decision_name(p.default_decision)}, {"rules", rules}};
  return result("policy OK: " + std::to_string(rules.size()) + " rules (with cottonbox's built-ins), default " +
                    std::string(decision_name(p.default_decision)),
                data);
}

struct ToolDef {
  const char* name;
  const char* title;
  const char* description;
  json (*fn)(const std::string&, const json&);
  json schema;
};

json prop(const char* type, const char* description) { return {{"type", type}, {"description", description}}; }

json string_list(const char* description) {
  return {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", description}};
}

const std::vector<ToolDef>& defs() {
  static const std::vector<ToolDef> d = [] {
    json page = {{"cursor", prop("string", "next_cursor of the previous page")},
                 {"limit", prop("integer", "page size (default 100, at most 1000)")}};
    json filters = {{"session", prop("integer", "only this session")},
                    {"action", prop("string", "an action or group: file.delete, file.mutate, net.*")},
                    {"decision", prop("string", "allow, deny (what happened), ask or log (what the policy said)")},
                    {"path", prop("string", "a glob matched against path and target")},
                    {"host", prop("string",
                                  "only connections and datagrams to this host: a name, a pattern (*.example.com), "
                                  "an address or a block (10.0.0.0/8), as host: in rules")},
                    {"pid", prop("integer", "only this process id")},
                    {"after_id", prop("integer", "only events with a larger id")}};
    filters.update(page);
    json policy = {
        {"policy_files", string_list("policy files (YAML) on this machine")},
        {"policy_text", prop("string", "a policy as YAML text")},
        {"vars", {{"type", "object"}, {"description", "NAME: VALUE for ${NAME} (CWD, HOME, USER are set)"}}}};
    auto obj = [](json props, const std::vector<std::string>& required = {}) {
      json s = {{"type", "object"}, {"properties", props}};
      if (!required.empty()) s["required"] = required;
      return s;
    };
    json why_props = {
        {"event_id", prop("integer", "a recorded event: why it was decided as it was")},
        {"action", prop("string", "or a hypothetical event: its action")},
        {"path", prop("string", "its path")},
        {"target", prop("string", "its second path (a rename's destination)")},
        {"process", prop("string", "the process's identity: a trusted program's name, as process: names it")},
        {"exe", prop("string", "the process's executable")},
        {"ancestors", string_list("its parents' identities, nearest first")},
        {"argv", string_list("its command line")},
        {"deletes", prop("integer", "proc.deletes")},
        {"is_dir", prop("boolean", "the path is a directory")}};
    why_props.update(policy);
    json replay_props = {
        {"sessions", {{"type", "array"}, {"items", {{"type", "integer"}}}, {"description", "session ids"}}}};
    replay_props.update(policy);
    replay_props.update(page);
    return std::vector<ToolDef>{
        {"list_sessions", "List sessions", "The recorded sessions, oldest first, with their state and counts.",
         list_sessions, obj(page)},
        {"session_summary", "Summarize a session",
         "One session: its command, state, degradations, events by action and verdict, its denials and asks.",
         session_summary, obj({{"session", prop("integer", "session id")}}, {"session"})},
        {"query_events", "Query events",
         "Recorded events with the filters of `cottonbox events`, in id order, in pages.", query_events, obj(filters)},
        {"process_tree", "Process tree",
         "A session's processes with their command lines, parents (parent_proc_id) and exit statuses.", process_tree,
         obj({{"session", prop("integer", "session id")}, {"cursor", page["cursor"]}, {"limit", page["limit"]}},
             {"session"})},
        {"who_touched", "Who touched a path",
         "Every event on a path (and below it) or a glob, with the chain behind each: the identities of the process "
         "and its parents, nearest first (\"\" for one with none).",
         who_touched, obj(filters, {"path"})},
        {"who_contacted", "Who contacted a host",
         "Every connection (net.connect) and datagram (net.send) to a host: a name, a name pattern (*.example.com), "
         "an address or a CIDR block (IPv4-mapped IPv6 addresses are the IPv4 host), matched against the address "
         "and every name the session resolved to it; with the chain behind each, as who_touched gives it.",
         who_contacted, obj(filters, {"host"})},
        {"why", "Explain a decision",
         "Which rule decided a recorded event (or would decide a hypothetical one), its text and location, which "
         "conditions matched with what values, which earlier rules were passed over and why, and which layer "
         "enforces it.",
         why, obj(why_props)},
        {"replay", "Replay sessions against a policy",
         "Judges every recorded event of the sessions against another policy and reports what would be decided "
         "differently, grouped by rule, with the events; and which events cannot be judged exactly.",
         replay, obj(replay_props, {"sessions"})},
        {"check_policy", "Check a policy",
         "Validates a policy (errors with file:line:col) and lists its compiled rules with cottonbox's built-ins.",
         check_policy, obj(policy)},
    };
  }();
  return d;
}

}  // namespace

json Tools::list() const {
  json tools = json::array();
  for (const auto& d : defs())
    tools.push_back({{"name", d.name},
                     {"title", d.title},
                     {"description", d.description},
                     {"inputSchema", d.schema},
                     {"annotations", {{"readOnlyHint", true}, {"openWorldHint", false}}}});
  return tools;
}

bool Tools::has(const std::string& name) const {
  for (const auto& d : defs())
    if (name == d.name) return true;
  return false;
}

json Tools::call(const std::string& name, const json& args) const {
  for (const auto& d : defs()) {
    if (name != d.name) continue;
    try {
      return d.fn(db_, args);
    } catch (const ToolError& e) {
      return failure(std::string(name) + ": " + e.what());
    } catch (const std::exception& e) {
      return failure(std::string(name) + ": " + e.what());
    }
  }
  return failure("unknown tool " + name);
}

}  // namespace cb::mcp
