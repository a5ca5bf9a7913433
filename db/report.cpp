#include "db/report.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <map>
#include <set>

#include "db/bytes.h"
#include "db/json.h"

namespace cb::db {
namespace {

// Invisible or reordering code points: shown as \uXXXX so that a name cannot
// look like another one.
bool is_format_control(char32_t cp) {
  return cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

void append_hex_bytes(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char b : bytes) out += {'\\', 'x', kHex[b >> 4], kHex[b & 15]};
}

void append_u(std::string& out, char32_t cp) {
  char buf[16];
  snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  out += buf;
}

// Shared by escape_for_terminal and the $'...' shell form; `quote` is
// escaped too when given.
std::string escape(std::string_view s, char quote) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    Utf8Step st = utf8_step(s, i);
    std::string_view seq = s.substr(i, st.len);
    i += st.len;
    if (!st.valid) {
      append_hex_bytes(out, seq);
    } else if (st.cp == '\n') {
      out += "\\n";
    } else if (st.cp == '\t') {
      out += "\\t";
    } else if (st.cp == '\r') {
      out += "\\r";
    } else if (st.cp == '\\') {
      out += "\\\\";
    } else if (quote && st.cp == static_cast<char32_t>(quote)) {
      out += '\\';
      out += quote;
    } else if (st.cp < 0x20 || st.cp == 0x7f || (st.cp >= 0x80 && st.cp <= 0x9f)) {
      append_hex_bytes(out, seq);
    } else if (is_format_control(st.cp)) {
      append_u(out, st.cp);
    } else {
      out += seq;
    }
  }
  return out;
}

// True when escape() would change more than backslashes: then only the
// $'...' form of the shell can carry the word.
bool needs_escapes(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    Utf8Step st = utf8_step(s, i);
    i += st.len;
    if (!st.valid || st.cp < 0x20 || st.cp == 0x7f || (st.cp >= 0x80 && st.cp <= 0x9f) || is_format_control(st.cp))
      return true;
  }
  return false;
}

// Columns count code points: cells are escaped, hence valid UTF-8.
size_t display_width(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

class Table {
 public:
  // align: one 'l' or 'r' per column.
  Table(std::vector<std::string> header, std::string align) : align_(std::move(align)) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size() - 1; }

  void print(std::ostream& out) const {
    std::vector<size_t> width(align_.size(), 0);
    for (const auto& r : rows_)
      for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], display_width(r[c]));
    for (const auto& r : rows_) {
      std::string line;
      for (size_t c = 0; c < r.size(); ++c) {
        bool last = c + 1 == r.size();
        std::string pad(width[c] - display_width(r[c]), ' ');
        if (align_[c] == 'r')
          line += pad + r[c];
        else
          line += last ? r[c] : r[c] + pad;
        if (!last) line += "  ";
      }
      out << line << '\n';
    }
  }

 private:
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string local_time(int64_t ns, const char* fmt) {
  time_t t = static_cast<time_t>(ns / 1'000'000'000);
  struct tm tm;
  localtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

std::string clock_ms(int64_t ns, bool with_date) {
  char ms[8];
  snprintf(ms, sizeof ms, ".%03d", static_cast<int>((ns / 1'000'000) % 1000));
  return local_time(ns, with_date ? "%m-%d %H:%M:%S" : "%H:%M:%S") + ms;
}

std::string duration(int64_t ns) {
  if (ns < 0) ns = 0;
  char buf[32];
  double s = static_cast<double>(ns) / 1e9;
  int64_t whole = ns / 1'000'000'000;
  if (s < 60)
    snprintf(buf, sizeof buf, "%.1fs", s);
  else if (whole < 3600)
    snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(whole / 60), static_cast<int>(whole % 60));
  else
    snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(whole / 3600), static_cast<int>(whole / 60 % 60));
  return buf;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string session_state_text(const SessionSummary& s) {
  std::string t;
  if (s.state == SessionState::Ended && s.end && s.end->exit_signal > 0) {
    t = "ended " + signal_name(s.end->exit_signal);
  } else if (s.state == SessionState::Ended && s.end && s.end->exit_status >= 0) {
    t = "ended " + std::to_string(s.end->exit_status);
  } else {
    t = std::string(session_state_name(s.state));
  }
  if (!s.degraded.empty()) t += " DEGRADED";
  if (s.start.observe) t += " OBSERVE";
  return t;
}

std::string session_command(const SessionSummary& s) {
  std::string cmd = shell_join(s.start.argv);
  if (!s.start.name.empty()) cmd = "[" + escape_for_terminal(s.start.name) + "] " + cmd;
  return cmd;
}

std::string decision_text(const EventRow& r) {
  std::string d = r.allowed ? "allow" : "DENY";
  switch (r.verdict.decision) {
    case Decision::Ask: d = "ask→" + d; break;
    case Decision::Log: d = "log"; break;
    default: break;
  }
  // --observe: recorded what would have been denied, applied nothing.
  if (!r.enforced && !r.allowed) d = "would " + d;
  return d;
}

std::string path_text(const Event& ev) {
  std::string p = escape_for_terminal(ev.path);
  // The names the session resolved to the address: "tcp:104.16.0.35:443 (registry.npmjs.org)".
  if (ev.net.ip() && !ev.net.hosts.empty()) {
    std::string names;
    for (const auto& h : ev.net.hosts) names += (names.empty() ? "" : ", ") + escape_for_terminal(h);
    p += " (" + names + ")";
  }
  if (ev.target.empty()) return p;
  if (ev.action == Action::FileRename) return p + " → " + escape_for_terminal(ev.target);
  return p + " [" + escape_for_terminal(ev.target) + "]";
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

void print_json_line(std::ostream& out, const nlohmann::json& j) {
  // Strings are already valid UTF-8 (json.h); `replace` is the last guard.
  out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

void note_lost(std::ostream& out, const SessionSummary& s) {
  if (s.events_lost > 0)
    out << "note: session " << s.id << " lost " << s.events_lost << " tracer records; its activity is incomplete\n";
}

}  // namespace

std::string escape_for_terminal(std::string_view bytes) { return escape(bytes, 0); }

std::string shell_quote(std::string_view arg) {
  if (arg.empty()) return "''";
  bool bare = std::all_of(arg.begin(), arg.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("_@%+=:,./-", c) != nullptr;
  });
  if (bare) return std::string(arg);
  if (!needs_escapes(arg)) {
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  return "$'" + escape(arg, '\'') + "'";
}

std::string shell_join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += shell_quote(a);
  }
  return out;
}

int report_error(const Error& e) {
  std::cerr << "cottonbox: " << e.message << "\n";
  return kExitFailure;
}

int print_sessions(Reader& reader, bool json, std::ostream& out) {
  auto sessions = reader.sessions();
  if (!sessions) return report_error(sessions.error());
  if (json) {
    for (const auto& s : *sessions) print_json_line(out, session_json(s));
    return 0;
  }
  if (sessions->empty()) {
    out << "no sessions in " << escape_for_terminal(reader.path()) << "\n";
    return 0;
  }
  Table t({"ID", "STATE", "STARTED", "DURATION", "EVENTS", "DENIED", "ASKED", "LOST", "COMMAND"}, "rllrrrrrl");
  for (const auto& s : *sessions) {
    int64_t end = s.end ? s.end->ended_ns : now_ns();
    t.add({std::to_string(s.id), session_state_text(s), local_time(s.start.started_ns, "%Y-%m-%d %H:%M:%S"),
           duration(end - s.start.started_ns), std::to_string(s.events), std::to_string(s.denials),
           std::to_string(s.asks), std::to_string(s.events_lost), session_command(s)});
  }
  t.print(out);
  return 0;
}

int print_events(Reader& reader, const EventQuery& q, bool json, std::ostream& out) {
  std::vector<SessionSummary> involved;
  if (q.session) {
    auto s = reader.session(*q.session);
    if (!s) return report_error(s.error());
    involved.push_back(std::move(*s));
  }
  auto events = reader.events(q);
  if (!events) return report_error(events.error());
  if (json) {
    for (const auto& e : *events) print_json_line(out, event_json(e));
    return 0;
  }
  if (events->empty()) {
    out << "no matching events\n";
  } else {
    std::set<int64_t> ids;
    for (const auto& e : *events) ids.insert(e.session);
    bool many_sessions = ids.size() > 1;
    bool many_days = local_time(events->front().row.ev.ts_ns, "%F") != local_time(events->back().row.ev.ts_ns, "%F");
    std::vector<std::string> header = {"TIME", "PID", "COMM", "ACTION", "DECISION", "RULE", "PATH"};
    std::string align = "lrlllll";
    if (many_sessions) header.insert(header.begin(), "SESSION"), align.insert(0, "r");
    Table t(header, align);
    for (const auto& e : *events) {
      const EventRow& r = e.row;
      std::string rule = r.verdict.rule_id.empty() ? "-" : escape_for_terminal(r.verdict.rule_id);
      if (r.verdict.builtin) rule = "builtin:" + rule;
      std::string path = path_text(r.ev);
      if (r.count > 1) path += " (×" + std::to_string(r.count) + ")";
      std::vector<std::string> row = {clock_ms(r.ev.ts_ns, many_days),
                                      std::to_string(r.ev.pid),
                                      escape_for_terminal(r.ev.proc ? r.ev.proc->comm : ""),
                                      std::string(action_name(r.ev.action)),
                                      decision_text(r),
                                      rule,
                                      path};
      if (many_sessions) row.insert(row.begin(), std::to_string(e.session));
      t.add(std::move(row));
    }
    t.print(out);
    if (!q.session) {
      for (int64_t id : ids)
        if (auto s = reader.session(id)) involved.push_back(std::move(*s));
    }
  }
  for (const auto& s : involved) note_lost(out, s);
  return 0;
}

int print_tree(Reader& reader, int64_t session, bool json, std::ostream& out) {
  auto s = reader.session(session);
  if (!s) return report_error(s.error());
  auto procs = reader.processes(session);
  if (!procs) return report_error(procs.error());

  // Children in the order they started; a parent that was never recorded
  // makes its children roots rather than hiding them.
  std::map<uint64_t, size_t> index;
  for (size_t i = 0; i < procs->size(); ++i) index[(*procs)[i].row.proc_id] = i;
  std::map<uint64_t, std::vector<size_t>> children;
  std::vector<size_t> roots;
  for (size_t i = 0; i < procs->size(); ++i) {
    uint64_t parent = (*procs)[i].row.parent_proc_id;
    if (parent != 0 && parent != (*procs)[i].row.proc_id && index.count(parent))
      children[parent].push_back(i);
    else
      roots.push_back(i);
  }
  auto by_start = [&](size_t a, size_t b) {
    const auto &x = (*procs)[a].row, &y = (*procs)[b].row;
    return std::tie(x.started_ns, x.proc_id) < std::tie(y.started_ns, y.proc_id);
  };
  std::sort(roots.begin(), roots.end(), by_start);
  for (auto& [_, v] : children) std::sort(v.begin(), v.end(), by_start);

  // Depth-first without recursion: a fork chain thousands deep must not
  // overflow the stack.
  struct Item {
    size_t i;
    std::string prefix;  // drawn before the connector
    bool last;
    bool root;
    int depth;
  };
  std::vector<Item> stack;
  for (size_t k = roots.size(); k-- > 0;) stack.push_back({roots[k], "", k + 1 == roots.size(), true, 0});
  std::set<uint64_t> shown;  // parent links that form a cycle are cut

  if (!json) {
    out << "session " << s->id << ": " << session_command(*s) << "  (" << session_state_text(*s) << ")\n";
    if (procs->empty()) out << "no processes recorded\n";
  }
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    const StoredProcess& p = (*procs)[it.i];
    if (!shown.insert(p.row.proc_id).second) continue;
    if (json) {
      auto j = process_json(p);
      j["depth"] = it.depth;
      print_json_line(out, j);
    } else {
      std::string status;
      if (p.exit && p.exit->exit_signal > 0)
        status = "killed by " + signal_name(p.exit->exit_signal);
      else if (p.exit && p.exit->exit_status >= 0)
        status = "exit " + std::to_string(p.exit->exit_status);
      else
        status = s->state == SessionState::Running ? "running" : "exit unknown";
      std::string counts = plural(p.events, "action", "actions");
      if (p.denials > 0) counts += ", " + std::to_string(p.denials) + " denied";
      std::string cmd = p.row.argv.empty() ? "[" + escape_for_terminal(p.row.comm) + "]" : shell_join(p.row.argv);
      // One process, one line: a linker's argv would bury the tree (--json has it all).
      constexpr size_t kMaxCmd = 160;
      if (cmd.size() > kMaxCmd) cmd = cmd.substr(0, kMaxCmd - 3) + "...";
      std::string connector = it.root ? "" : (it.last ? "└─ " : "├─ ");
      out << it.prefix << connector << p.row.pid << " " << cmd << "  " << status << "  " << counts << "\n";
    }
    auto c = children.find(p.row.proc_id);
    if (c == children.end()) continue;
    std::string prefix = it.root ? it.prefix : it.prefix + (it.last ? "   " : "│  ");
    for (size_t k = c->second.size(); k-- > 0;)
      stack.push_back({c->second[k], prefix, k + 1 == c->second.size(), false, it.depth + 1});
  }
  if (!json) note_lost(out, *s);
  return 0;
}

int print_hosts(Reader& reader, int64_t session, bool json, std::ostream& out) {
  auto s = reader.session(session);
  if (!s) return report_error(s.error());
  auto hosts = reader.hosts(session);
  if (!hosts) return report_error(hosts.error());
  if (json) {
    for (const auto& h : *hosts) print_json_line(out, host_json(session, h));
    return 0;
  }
  out << "session " << s->id << ": " << session_command(*s) << "  (" << session_state_text(*s) << ")\n";
  if (hosts->empty()) {
    out << "no hosts contacted\n";
    note_lost(out, *s);
    return 0;
  }
  auto list = [](const std::vector<std::string>& v, size_t most) {
    std::string t;
    for (size_t i = 0; i < v.size() && i < most; ++i) t += (i ? ", " : "") + escape_for_terminal(v[i]);
    if (v.size() > most) t += " +" + std::to_string(v.size() - most) + " more";
    return t;
  };
  bool many_days = false;
  for (const auto& h : *hosts)
    many_days |= local_time(h.first_ns, "%F") != local_time(hosts->front().first_ns, "%F") ||
                 local_time(h.last_ns, "%F") != local_time(h.first_ns, "%F");
  Table t({"HOST", "PORT", "PROTO", "ADDRESSES", "PROCESSES", "FIRST", "LAST", "EVENTS", "DENIED", "LOOKUPS"},
          "lrlllllrrl");
  for (const auto& h : *hosts) {
    std::vector<std::string> procs;
    for (const auto& p : h.processes) {
      std::string who = p.comm.empty() ? "proc " + std::to_string(p.proc_id) : p.comm;
      if (p.pid) who += "[" + std::to_string(p.pid) + "]";
      if (p.events > 1) who += "×" + std::to_string(p.events);
      procs.push_back(who);
    }
    std::string lookups = h.lookups == 0 ? "-" : std::to_string(h.lookups);
    if (h.lookups_refused) lookups += " (" + std::to_string(h.lookups_refused) + " refused)";
    bool dns = h.proto == "dns";
    t.add({escape_for_terminal(h.host), dns ? "-" : std::to_string(h.port), h.proto,
           h.addresses.empty() ? "-" : list(h.addresses, 3), procs.empty() ? "-" : list(procs, 4),
           clock_ms(h.first_ns, many_days), clock_ms(h.last_ns, many_days), std::to_string(h.events),
           std::to_string(h.denied), lookups});
  }
  t.print(out);
  note_lost(out, *s);
  return 0;
}

}  // namespace cb::db
