// The reader: a read-only connection for `cottonbox sessions|events|tree` and
// the GUI.  It never writes, so it works beside a live supervisor and on a
// file the user may only read.
#include <sys/stat.h>

#include <iterator>
#include <map>
#include <set>
#include <string_view>

#include "db/bytes.h"
#include "db/hosts.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "db/store.h"
#include "policy/glob.h"

namespace cb::db {
namespace {

// Reads result columns left to right, so that a SELECT list and the code that
// consumes it are written in the same order and cannot drift by an index.
class Cursor {
 public:
  explicit Cursor(const sql::Statement& s) : s_(s) {}
  bool null() const { return s_.column_is_null(i_); }
  int64_t i64() { return s_.column_int64(i_++); }
  int32_t i32() { return s_.column_int(i_++); }
  uint64_t u64() { return s_.column_uint64(i_++); }
  bool flag() { return s_.column_bool(i_++); }
  std::string bytes() { return s_.column_bytes(i_++); }
  std::optional<int64_t> opt_i64() {
    if (null()) return ++i_, std::nullopt;
    return i64();
  }
  void skip(int n = 1) { i_ += n; }
  void seek(int i) { i_ = i; }

 private:
  const sql::Statement& s_;
  int i_ = 0;
};

constexpr const char* kSessionColumns =
    "id, uuid, name, argv, cwd, uid, user, hostname, policy_files, policy_hash, started_ns,"
    " ended_ns, exit_status, exit_signal, state, degraded, observe, tracer, ask_mode,"
    " supervisor_pid, boot_id, events_lost, n_events, n_denials, n_asks, last_event_ns,"
    " (SELECT count(*) FROM processes p WHERE p.session = s.id)";

SessionSummary read_session(const sql::Statement& s, std::string_view boot) {
  Cursor c(s);
  SessionSummary x;
  x.id = c.i64();
  SessionStart& st = x.start;
  st.uuid = c.bytes();
  st.name = c.bytes();
  st.argv = detail::decode_string_array(c.bytes());
  st.cwd = c.bytes();
  st.uid = static_cast<uint32_t>(c.i64());
  st.user = c.bytes();
  st.hostname = c.bytes();
  st.policy_files = detail::decode_string_array(c.bytes());
  st.policy_hash = c.bytes();
  st.started_ns = c.i64();
  auto ended_ns = c.opt_i64();
  auto exit_status = c.opt_i64();
  auto exit_signal = c.opt_i64();
  x.state = detail::parse_session_state(c.bytes()).value_or(SessionState::Aborted);
  x.degraded = detail::decode_string_array(c.bytes());
  st.observe = c.flag();
  st.tracer = c.bytes();
  st.ask_mode = c.bytes();
  st.supervisor_pid = c.i32();
  st.boot_id = c.bytes();
  x.events_lost = c.u64();
  x.events = c.u64();
  x.denials = c.u64();
  x.asks = c.u64();
  auto last_event_ns = c.opt_i64();
  x.processes = c.u64();

  if (x.state == SessionState::Running && detail::running_session_is_stale(st.boot_id, st.supervisor_pid, boot)) {
    // What the next Writer::open will record; reported now without writing.
    x.state = SessionState::Aborted;
    x.end = SessionEnd{last_event_ns.value_or(st.started_ns), -1, 0, SessionState::Aborted};
  } else if (x.state != SessionState::Running) {
    x.end = SessionEnd{ended_ns.value_or(0), static_cast<int>(exit_status.value_or(-1)),
                       static_cast<int>(exit_signal.value_or(0)), x.state};
  }
  return x;
}

// A process image's columns, alike in the images and processes tables:
// read_image() reads them.  A column the file does not have yet (images
// before schema 3, identity before 6) is selected as NULL.
constexpr std::string_view kImageColumns[] = {"proc_id", "pid",  "ppid", "uid",     "comm",
                                              "exe",     "argv", "cwd",  "identity"};
constexpr int kImageColumnCount = static_cast<int>(std::size(kImageColumns));

std::string image_columns(std::string_view table, int version, bool table_exists = true) {
  std::string out;
  for (std::string_view c : kImageColumns) {
    bool have = table_exists && (c != "identity" || version >= 6);
    out += (out.empty() ? "" : ", ") + (have ? std::string(table) + "." + std::string(c) : std::string("NULL"));
  }
  return out;
}

// The image_columns() into `info` (proc_id too); true when its identity
// was recorded.
bool read_image(Cursor& c, ProcessInfo& info) {
  info.proc_id = c.u64();
  info.pid = c.i32();
  info.ppid = c.i32();
  info.uid = static_cast<uint32_t>(c.i64());
  info.comm = c.bytes();
  info.exe = c.bytes();
  info.argv = split_nul(c.bytes());
  info.cwd = c.bytes();
  return !c.null() && detail::decode_identity(c.bytes(), info.names, info.identity);
}

std::string process_columns(int version) {
  return "p.parent_proc_id, p.started_ns, p.ended_ns, p.exit_status, p.exit_signal, " + image_columns("p", version);
}

// Per-process sums over a session's events (?1), which lie in the session's
// id range (schema.cpp); joined as "c".
constexpr const char* kProcessCounts =
    "SELECT proc_id, sum(count) AS n, sum(CASE WHEN decision = 'deny' THEN count ELSE 0 END) AS d"
    " FROM events WHERE session = ?1"
    " AND id BETWEEN (SELECT first_event_id FROM sessions WHERE id = ?1)"
    " AND (SELECT last_event_id FROM sessions WHERE id = ?1)";

// process_columns(), then the counts.
StoredProcess read_process(const sql::Statement& s, int64_t session) {
  Cursor c(s);
  StoredProcess x;
  x.session = session;
  ProcessRow& r = x.row;
  r.parent_proc_id = c.u64();
  r.started_ns = c.i64();
  auto ended_ns = c.opt_i64();
  auto exit_status = c.opt_i64();
  auto exit_signal = c.opt_i64();
  ProcessInfo image;
  x.identity_recorded = read_image(c, image);
  r.proc_id = image.proc_id;
  r.pid = image.pid;
  r.ppid = image.ppid;
  r.uid = image.uid;
  r.comm = std::move(image.comm);
  r.exe = std::move(image.exe);
  r.argv = std::move(image.argv);
  r.cwd = std::move(image.cwd);
  r.names = std::move(image.names);
  r.identity = std::move(image.identity);
  if (ended_ns || exit_status || exit_signal)
    x.exit = ProcessExit{r.proc_id, ended_ns.value_or(0), static_cast<int>(exit_status.value_or(-1)),
                         static_cast<int>(exit_signal.value_or(0))};
  x.events = c.u64();
  x.denials = c.u64();
  return x;
}

// The part of a glob before its first wildcard, as a range of byte strings
// that every match lies in: [lo, hi), hi empty when unbounded.  Lets SQLite
// use the path index; the glob itself is then matched exactly in C++.
struct PrefixRange {
  std::string lo, hi;
};
PrefixRange glob_prefix_range(std::string_view pattern) {
  size_t n = pattern.find_first_of("*?[{\\");
  std::string lo(pattern.substr(0, n));
  // "a/**" matches "a" itself (and "a/**/b" matches "a/b", which is fine).
  if (n != std::string_view::npos && !lo.empty() && lo.back() == '/' && pattern.substr(n, 2) == "**") lo.pop_back();
  std::string hi = lo;
  while (!hi.empty() && static_cast<unsigned char>(hi.back()) == 0xff) hi.pop_back();
  if (!hi.empty()) hi.back() = static_cast<char>(static_cast<unsigned char>(hi.back()) + 1);
  return {lo, hi};
}

// The net_* columns into ev.net.
std::vector<std::string> split_servers(std::string_view t) {
  std::vector<std::string> out;
  for (size_t at = 0; at < t.size();) {
    size_t sp = t.find(' ', at);
    if (sp == std::string_view::npos) sp = t.size();
    if (sp > at) out.emplace_back(t.substr(at, sp - at));
    at = sp + 1;
  }
  return out;
}

void read_net(Cursor& c, Event& ev) {
  if (c.null()) return;
  std::string proto = c.bytes();
  std::string addr = c.bytes();
  auto port = c.opt_i64();
  std::vector<std::string> hosts = detail::decode_string_array(c.bytes());
  std::vector<std::string> chain = detail::decode_string_array(c.bytes());
  NetProto p = proto == "tcp"    ? NetProto::Tcp
               : proto == "udp"  ? NetProto::Udp
               : proto == "unix" ? NetProto::Unix
                                 : NetProto::Other;
  auto ip = IpAddr::parse(addr);
  ev.net = make_net_object(p, ip.value_or(IpAddr{}), static_cast<uint16_t>(port.value_or(0)));
  ev.net.hosts = std::move(hosts);
  ev.net.names = ev.net.hosts;
  ev.net.names.insert(ev.net.names.end(), chain.begin(), chain.end());
}

struct Param {
  enum Kind { Int, Text, Blob } kind;
  int64_t i = 0;
  std::string s;
};

std::string names_list(ActionMask mask, std::vector<Param>& params) {
  std::string sql;
  for (int a = 0; a < static_cast<int>(Action::Count); ++a) {
    if (!(mask & (ActionMask{1} << a))) continue;
    params.push_back({Param::Text, 0, std::string(action_name(static_cast<Action>(a)))});
    sql += (sql.empty() ? "?" : ", ?") + std::to_string(params.size());
  }
  return sql;
}

}  // namespace

struct Reader::Impl {
  std::string path;
  sql::Database db;
  std::string boot;
  int version = kSchemaVersion;
};

Reader::Reader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reader::~Reader() = default;

const std::string& Reader::path() const { return impl_->path; }

Result<std::unique_ptr<Reader>> Reader::open(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Error{ENOENT, "no audit database at " + path};
    return Error::from_errno("cannot open " + path);
  }
  auto db = sql::Database::open(path, SQLITE_OPEN_READONLY);
  if (!db) return db.error();
  db->wait_when_busy(detail::kReaderBusy);
  // The last connection to close checkpoints and deletes the -wal and -shm
  // files; a reader must leave the files as it found them.
  sqlite3_db_config(db->get(), SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  if (auto r = detail::ensure_schema(*db, path, /*create=*/false); !r) return r.error();
  auto version = db->query_int("PRAGMA user_version");
  if (!version) return version.error();
  auto impl = std::make_unique<Impl>(Impl{path, std::move(*db), detail::current_boot_id(), static_cast<int>(*version)});
  return std::unique_ptr<Reader>(new Reader(std::move(impl)));
}

Result<std::vector<SessionSummary>> Reader::sessions() {
  auto s = impl_->db.prepare(std::string("SELECT ") + kSessionColumns + " FROM sessions s ORDER BY id");
  if (!s) return s.error();
  std::vector<SessionSummary> out;
  while (s->step()) out.push_back(read_session(*s, impl_->boot));
  if (!s->succeeded()) return impl_->db.error("reading sessions from " + impl_->path);
  return out;
}

Result<SessionSummary> Reader::session(int64_t id) {
  auto s = impl_->db.prepare(std::string("SELECT ") + kSessionColumns + " FROM sessions s WHERE id = ?1");
  if (!s) return s.error();
  s->bind_int64(1, id);
  if (s->step()) return read_session(*s, impl_->boot);
  if (!s->succeeded()) return impl_->db.error("reading session " + std::to_string(id));
  return Error{ENOENT, "no session " + std::to_string(id) + " in " + impl_->path};
}

Result<std::vector<StoredEvent>> Reader::events(const EventQuery& q) {
  ActionMask mask = kAllActions;
  if (q.action) {
    mask = parse_action_or_group(*q.action);
    if (mask == 0) {
      std::string known;
      for (auto n : action_vocabulary()) known += (known.empty() ? "" : ", ") + std::string(n);
      return Error{EINVAL, "unknown action '" + *q.action + "' (known: " + known + ")"};
    }
  }
  if (q.decision && !parse_decision(*q.decision))
    return Error{EINVAL, "unknown decision '" + *q.decision + "' (known: allow, deny, ask, log)"};
  std::optional<HostPattern> host;
  if (q.host) {
    auto h = parse_host_query(*q.host);
    if (!h) return h.error();
    host = std::move(*h);
    // Only connections and datagrams reach a host (db/hosts.h).
    mask &= kContactActions;
    if (mask == 0) return std::vector<StoredEvent>{};
  }

  sql::Database& db = impl_->db;
  // One snapshot for the range lookups and the scan.
  sql::Transaction tx(db);
  if (auto r = tx.begin(); !r) return r.error();

  // Events have no index (schema.cpp): the scan is narrowed to an id range
  // from the sessions rows, and by touched_paths for a glob.
  int64_t lo_id = q.after_id + 1;
  std::optional<int64_t> hi_id;
  std::optional<std::set<int64_t>> sessions;  // nullopt: any
  if (q.session) sessions = std::set<int64_t>{*q.session};

  std::optional<Glob> glob;
  PrefixRange range;
  if (q.path_glob) {
    auto g = Glob::compile(*q.path_glob);
    if (!g) return Error{EINVAL, "bad path glob '" + *q.path_glob + "': " + g.error().message};
    glob = std::move(*g);
    range = glob_prefix_range(*q.path_glob);
    std::string sql = "SELECT path, session, first_id FROM touched_paths WHERE 1";
    if (!range.lo.empty()) sql += " AND path >= ?1";
    if (!range.hi.empty()) sql += " AND path < ?2";
    if (q.session) sql += " AND session = ?3";
    auto t = db.prepare(sql);
    if (!t) return t.error();
    if (!range.lo.empty()) t->bind_blob(1, range.lo);
    if (!range.hi.empty()) t->bind_blob(2, range.hi);
    if (q.session) t->bind_int64(3, *q.session);
    std::set<int64_t> found;
    int64_t first = INT64_MAX;
    while (t->step()) {
      if (!glob->match(t->column_bytes(0))) continue;
      found.insert(t->column_int64(1));
      first = std::min(first, t->column_int64(2));
    }
    if (!t->succeeded()) return db.error("reading touched paths from " + impl_->path);
    if (found.empty()) return std::vector<StoredEvent>{};
    lo_id = std::max(lo_id, first);
    sessions = std::move(found);
  }
  if (sessions) {
    auto r = db.prepare("SELECT first_event_id, last_event_id FROM sessions WHERE id = ?1");
    if (!r) return r.error();
    int64_t first = INT64_MAX, last = 0;
    for (int64_t id : *sessions) {
      r->bind_int64(1, id);
      if (r->step() && !r->column_is_null(0)) {
        first = std::min(first, r->column_int64(0));
        last = std::max(last, r->column_int64(1));
      }
      r->reset();
    }
    if (last == 0) return std::vector<StoredEvent>{};
    lo_id = std::max(lo_id, first);
    hi_id = last;
  }

  std::vector<Param> params;
  auto param = [&](Param p) {
    params.push_back(std::move(p));
    return "?" + std::to_string(params.size());
  };
  std::string where = "e.id >= " + param({Param::Int, lo_id, {}});
  if (hi_id) where += " AND e.id <= " + param({Param::Int, *hi_id, {}});
  if (sessions) {
    std::string list;
    for (int64_t id : *sessions) list += (list.empty() ? "" : ", ") + std::to_string(id);
    where += " AND e.session IN (" + list + ")";
  }
  if (mask != kAllActions) where += " AND e.action IN (" + names_list(mask, params) + ")";
  if (q.decision) {
    const std::string& d = *q.decision;
    where += (d == "allow" || d == "deny" ? " AND e.decision = " : " AND e.verdict = ") + param({Param::Text, 0, d});
  }
  if (q.pid) where += " AND e.pid = " + param({Param::Int, *q.pid, {}});
  if (q.proc_id) where += " AND e.proc_id = " + param({Param::Int, static_cast<int64_t>(*q.proc_id), {}});
  // One address: the column says it, so SQLite skips the other rows.  A
  // row from before version 5 has the address only in its path (NULL
  // here), and is matched in C++.
  if (host && host->kind == HostPattern::Kind::Address && host->cidr.prefix == host->cidr.net.size() * 8 &&
      impl_->version >= 5)
    where += " AND (e.net_addr IS NULL OR e.net_addr = " + param({Param::Text, 0, host->cidr.net.text()}) + ")";
  if (glob && !range.lo.empty()) {
    // Cheap byte comparisons that spare most rows the C++ glob.
    std::string lo = param({Param::Blob, 0, range.lo});
    if (range.hi.empty()) {
      where += " AND (e.path >= " + lo + " OR e.target >= " + lo + ")";
    } else {
      std::string hi = param({Param::Blob, 0, range.hi});
      where +=
          " AND ((e.path >= " + lo + " AND e.path < " + hi + ") OR (e.target >= " + lo + " AND e.target < " + hi + "))";
    }
  }

  const int version = impl_->version;
  // The row's own columns, then (from kRecordedColumn) proc_deletes, facets
  // and the image judged, then the processes row, the approval and the
  // network object.  Files older than version 3 have no image, older than
  // 5 no network columns.
  constexpr int kRecordedColumn = 26;
  constexpr int kImageColumn = kRecordedColumn + 3;
  constexpr int kProcessColumn = kImageColumn + kImageColumnCount + 1;  // + ancestors
  constexpr int kApprovalColumn = kProcessColumn + kImageColumnCount;
  constexpr int kNetColumn = kApprovalColumn + 6;
  std::string sql =
      "SELECT e.id, e.session, e.seq, e.ts_ns, e.pid, e.tid, e.proc_id, e.comm, e.action,"
      " e.syscall, e.path, e.target, e.aliases, e.flags, e.is_dir, e.target_pid,"
      " e.decision, e.verdict, e.rule, e.builtin, e.message, e.source, e.layer, e.errno,"
      " e.enforced, e.count, " +
      std::string(version >= 3 ? "e.proc_deletes, e.facets, i.id, " : "NULL, NULL, NULL, ") +
      image_columns("i", version, version >= 3) + (version >= 3 ? ", i.ancestors, " : ", NULL, ") +
      image_columns("p", version) +
      ", a.event_seq IS NOT NULL, a.asked_ns, a.answered_ns, a.answered_by, a.answer, a.rule_written" +
      std::string(version >= 5 ? ", e.net_proto, e.net_addr, e.net_port, e.net_hosts, e.net_chain"
                               : ", NULL, NULL, NULL, NULL, NULL") +
      " FROM events e"
      " LEFT JOIN processes p ON p.session = e.session AND p.proc_id = e.proc_id"
      " LEFT JOIN approvals a ON a.session = e.session AND a.event_seq = e.seq" +
      std::string(version >= 3 ? " LEFT JOIN images i ON i.id = e.image" : "") + " WHERE " + where + " ORDER BY e.id";
  // With a glob or a host the limit counts matches, which only C++ can tell.
  if (q.limit > 0 && !glob && !host) sql += " LIMIT " + param({Param::Int, q.limit, {}});

  auto s = db.prepare(sql);
  if (!s) return s.error();
  for (size_t i = 0; i < params.size(); ++i) {
    int n = static_cast<int>(i + 1);
    const Param& p = params[i];
    if (p.kind == Param::Int) s->bind_int64(n, p.i);
    if (p.kind == Param::Text) s->bind_text(n, p.s);
    if (p.kind == Param::Blob) s->bind_blob(n, p.s);
  }

  // The process columns are read only for a process not seen yet.
  std::vector<StoredEvent> out;
  // Events of one process share its ProcessInfo, as they do in the supervisor.
  struct Image {
    std::shared_ptr<const ProcessInfo> info;
    bool identity_recorded = false;
  };
  std::map<std::pair<int64_t, uint64_t>, Image> procs;
  std::map<int64_t, Image> images;  // by images.id
  while (s->step()) {
    Cursor c(*s);
    StoredEvent x;
    x.id = c.i64();
    x.session = c.i64();
    EventRow& r = x.row;
    Event& ev = r.ev;
    r.seq = c.u64();
    ev.ts_ns = c.i64();
    ev.pid = c.i32();
    ev.tid = c.i32();
    uint64_t proc_id = c.u64();  // NULL reads as 0: unknown
    std::string comm = c.bytes();
    // A value this cottonbox does not know (a newer one wrote it) is an
    // error, never read as something else.
    auto unknown = [&](const char* what, const std::string& v) {
      return Error{EINVAL, impl_->path + ": event " + std::to_string(x.id) + " has an unknown " + what + " '" + v +
                               "' (written by a newer cottonbox?)"};
    };
    std::string action_text = c.bytes();
    auto action = parse_action(action_text);
    if (!action) return unknown("action", action_text);
    ev.action = *action;
    ev.syscall = c.bytes();
    ev.path = c.bytes();
    ev.target = c.bytes();
    ev.aliases = split_nul(c.bytes());
    ev.flags = c.u64();
    ev.is_dir = c.flag();
    ev.target_pid = c.i32();
    r.allowed = c.bytes() == "allow";
    std::string decision_text = c.bytes();
    auto decision = parse_decision(decision_text);
    if (!decision) return unknown("decision", decision_text);
    r.verdict.decision = *decision;
    r.verdict.rule_id = c.bytes();
    r.verdict.builtin = c.flag();
    r.verdict.message = c.bytes();
    std::string source_text = c.bytes();
    auto source = detail::parse_source(source_text);
    if (!source) return unknown("source", source_text);
    ev.source = *source;
    std::string layer_text = c.bytes();
    auto layer = detail::parse_layer(layer_text);
    if (!layer) return unknown("layer", layer_text);
    r.layer = *layer;
    if (c.null()) {
      c.skip();
      r.result_errno = -1;
    } else {
      r.result_errno = c.i32();
    }
    r.enforced = c.flag();
    r.count = static_cast<uint32_t>(c.i64());

    if (glob && !glob->match(ev.path) && (ev.target.empty() || !glob->match(ev.target))) continue;

    c.seek(kRecordedColumn);
    if (!c.null()) {
      x.deletes_recorded = true;
      ev.proc_deletes = static_cast<uint32_t>(c.i64());
    } else {
      c.skip();
    }
    if (!c.null()) {
      x.facets_recorded = true;
      r.facets = detail::decode_facets(c.bytes());
    } else {
      // A row of schema 3 without facets had none; an older row may have.
      x.facets_recorded = x.deletes_recorded;
      c.skip();
    }
    std::optional<int64_t> image = c.opt_i64();
    auto key = std::make_pair(x.session, proc_id);
    x.image_recorded = image.has_value();
    if (auto it = image ? images.find(*image) : images.end(); it != images.end()) {
      ev.proc = it->second.info;
      x.identity_recorded = it->second.identity_recorded;
    } else if (image) {
      c.seek(kImageColumn);
      auto info = std::make_shared<ProcessInfo>();
      x.identity_recorded = read_image(c, *info);
      info->ancestors = split_nul(c.bytes());
      ev.proc = info;
      images.emplace(*image, Image{std::move(info), x.identity_recorded});
    } else if (auto it = procs.find(key); it != procs.end() && proc_id != 0) {
      ev.proc = it->second.info;
      x.identity_recorded = it->second.identity_recorded;
    } else {
      // No image (a row from before schema 3): the process's last image,
      // without its ancestors.
      c.seek(kProcessColumn);
      bool have_proc = !c.null();
      auto info = std::make_shared<ProcessInfo>();
      if (have_proc) x.identity_recorded = read_image(c, *info);
      if (have_proc || proc_id != 0 || !comm.empty()) {
        info->proc_id = proc_id;
        if (!have_proc) {
          info->pid = ev.pid;
          info->comm = comm;
        }
        ev.proc = info;
        if (proc_id != 0) procs.emplace(key, Image{std::move(info), x.identity_recorded});
      }
    }
    c.seek(kApprovalColumn);
    if (c.flag()) {
      ApprovalRow a;
      a.event_seq = r.seq;
      a.asked_ns = c.i64();
      a.answered_ns = c.i64();
      a.answered_by = c.bytes();
      a.answer = c.bytes();
      a.rule_written = c.bytes();
      x.approval = std::move(a);
    }
    c.seek(kNetColumn);
    read_net(c, ev);
    // Recorded without its object (a version 2 file, a producer that gave
    // none): the address is still in the path.
    if (ev.net.proto == NetProto::None && action_object(ev.action) == ObjectKind::Address)
      ev.net = net_object_from_path(ev.path);
    // Who served a unix socket is recorded as the target (host/unix_servers.h).
    if (ev.net.proto == NetProto::Unix && ev.action == Action::NetConnect && !ev.target.empty())
      ev.net.servers = split_servers(ev.target);
    if (host && !contacted(*host, ev.net)) continue;
    out.push_back(std::move(x));
    if (q.limit > 0 && static_cast<int64_t>(out.size()) >= q.limit) break;
  }
  if (!s->succeeded()) return impl_->db.error("reading events from " + impl_->path);
  return out;
}

Result<std::vector<StoredProcess>> Reader::processes(int64_t session) {
  auto s = impl_->db.prepare("SELECT " + process_columns(impl_->version) +
                             ", coalesce(c.n, 0), coalesce(c.d, 0) FROM processes p"
                             " LEFT JOIN (" +
                             kProcessCounts +
                             " GROUP BY proc_id) c"
                             " ON c.proc_id = p.proc_id"
                             " WHERE p.session = ?1 ORDER BY p.proc_id");
  if (!s) return s.error();
  s->bind_int64(1, session);
  std::vector<StoredProcess> out;
  while (s->step()) out.push_back(read_process(*s, session));
  if (!s->succeeded()) return impl_->db.error("reading processes from " + impl_->path);
  return out;
}

Result<std::vector<StoredProcess>> Reader::process_chain(int64_t session, uint64_t proc_id) {
  // depth bounds a corrupt cycle in parent links; C++ drops the repeats.
  auto s =
      impl_->db.prepare(std::string("WITH RECURSIVE chain(proc_id, depth) AS ("
                                    " SELECT ?2, 0"
                                    " UNION ALL"
                                    " SELECT p.parent_proc_id, chain.depth + 1 FROM processes p JOIN chain"
                                    " ON p.session = ?1 AND p.proc_id = chain.proc_id"
                                    " WHERE p.parent_proc_id != 0 AND chain.depth < 1024),"
                                    " c AS (") +
                        kProcessCounts + " AND proc_id IN (SELECT proc_id FROM chain) GROUP BY proc_id)" + " SELECT " +
                        process_columns(impl_->version) + ", coalesce(c.n, 0), coalesce(c.d, 0) FROM chain" +
                        " JOIN processes p ON p.session = ?1 AND p.proc_id = chain.proc_id" +
                        " LEFT JOIN c ON c.proc_id = p.proc_id ORDER BY chain.depth");
  if (!s) return s.error();
  s->bind_int64(1, session);
  s->bind_uint64(2, proc_id);
  std::vector<StoredProcess> out;
  std::set<uint64_t> seen;
  while (s->step()) {
    auto p = read_process(*s, session);
    if (!seen.insert(p.row.proc_id).second) break;
    out.push_back(std::move(p));
  }
  if (!s->succeeded()) return impl_->db.error("reading processes from " + impl_->path);
  return out;
}

Result<std::vector<UndoRun>> Reader::undos(int64_t session) {
  std::vector<UndoRun> out;
  if (!detail::has_table(impl_->db, "undos")) return out;
  auto s = impl_->db.prepare(
      "SELECT undo_id, ts_ns, uid, user, command, path_glob, force, created, path, target, action, done, forced,"
      " reason, notes FROM undos WHERE session = ?1 ORDER BY undo_id, rowid");
  if (!s) return s.error();
  s->bind_int64(1, session);
  while (s->step()) {
    Cursor c(*s);
    int64_t id = c.i64();
    if (out.empty() || out.back().undo_id != id) {
      UndoRun r;
      r.undo_id = id;
      r.session = session;
      r.ts_ns = c.i64();
      r.uid = static_cast<uint32_t>(c.i64());
      r.user = c.bytes();
      if (!c.null())
        r.command = c.u64();
      else
        c.skip();
      r.path_glob = c.bytes();
      r.force = c.flag();
      r.created = c.flag();
      out.push_back(std::move(r));
    } else {
      c.seek(8);
    }
    if (c.null()) continue;  // a run with nothing to undo
    UndoFile f;
    f.path = c.bytes();
    f.target = c.bytes();
    f.action = c.bytes();
    f.done = c.flag();
    f.forced = c.flag();
    f.reason = c.bytes();
    f.notes = detail::decode_string_array(c.bytes());
    out.back().files.push_back(std::move(f));
  }
  if (!s->succeeded()) return impl_->db.error("reading undos from " + impl_->path);
  return out;
}

}  // namespace cb::db

namespace cb::db {

Result<StoredEvent> Reader::event(int64_t id) {
  EventQuery q;
  q.after_id = id - 1;
  q.limit = 1;
  auto r = events(q);
  if (!r) return r.error();
  if (r->empty() || r->front().id != id) return Error{ENOENT, "no event " + std::to_string(id) + " in " + impl_->path};
  return std::move(r->front());
}

Result<std::optional<PolicySnapshot>> Reader::policy(int64_t session) {
  if (impl_->version < 3) return std::optional<PolicySnapshot>{};
  auto s = impl_->db.prepare(
      "SELECT p.snapshot FROM sessions s JOIN policies p ON p.hash = s.policy_snapshot WHERE s.id = ?1");
  if (!s) return s.error();
  s->bind_int64(1, session);
  if (s->step()) return detail::decode_policy_snapshot(s->column_bytes(0));
  if (!s->succeeded()) return impl_->db.error("reading the policy of session " + std::to_string(session));
  return std::optional<PolicySnapshot>{};
}

Result<int64_t> Reader::last_event_id() {
  auto v = impl_->db.query_int("SELECT coalesce(max(id), 0) FROM events");
  if (!v) return v.error();
  return *v;
}

int Reader::schema_version() const { return impl_->version; }

Result<std::vector<StoredLookup>> Reader::lookups(int64_t session) {
  std::vector<StoredLookup> out;
  if (impl_->version < 5) return out;
  auto s = impl_->db.prepare(
      "SELECT ts_ns, proc_id, client, transport, name, type, rcode, denied, truncated, chain, addresses,"
      " upstream, note FROM dns_lookups WHERE session = ?1 ORDER BY rowid");
  if (!s) return s.error();
  s->bind_int64(1, session);
  while (s->step()) {
    Cursor c(*s);
    StoredLookup x;
    x.session = session;
    LookupRow& r = x.row;
    r.ts_ns = c.i64();
    r.proc_id = c.u64();
    r.client = c.bytes();
    r.tcp = c.bytes() == "tcp";
    r.name = c.bytes();
    r.type = static_cast<uint16_t>(c.i64());
    r.rcode = c.i32();
    r.denied = c.flag();
    r.truncated = c.flag();
    r.chain = detail::decode_string_array(c.bytes());
    r.addresses = detail::decode_string_array(c.bytes());
    r.upstream = c.bytes();
    r.note = c.bytes();
    out.push_back(std::move(x));
  }
  if (!s->succeeded()) return impl_->db.error("reading lookups from " + impl_->path);
  return out;
}

Result<std::vector<HostContact>> Reader::hosts(int64_t session) {
  if (auto s = this->session(session); !s) return s.error();
  EventQuery q;
  q.session = session;
  q.action = "net.*";
  auto events = this->events(q);
  if (!events) return events.error();
  auto lookups = this->lookups(session);
  if (!lookups) return lookups.error();
  auto hosts = summarize_hosts(*events, *lookups);
  // A lookup names its process by id alone.
  auto procs = processes(session);
  if (!procs) return procs.error();
  for (auto& h : hosts)
    for (auto& p : h.processes) {
      if (!p.comm.empty() || p.proc_id == 0) continue;
      for (const auto& sp : *procs)
        if (sp.row.proc_id == p.proc_id) p.comm = sp.row.comm, p.pid = sp.row.pid;
    }
  return hosts;
}

}  // namespace cb::db
