#include "db/schema.h"

#include <unistd.h>
#include <cerrno>

#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

#include "db/bytes.h"
#include "db/json.h"
#include "policy/sha256.h"

namespace cb::db {

namespace {

using nlohmann::json;

// The exact bytes of j[key] as put_bytes() wrote them.
std::string get_bytes(const json& j, const std::string& key) {
  if (auto b = j.find(key + "_b64"); b != j.end() && b->is_string())
    if (auto bytes = base64_decode(b->get<std::string>())) return *bytes;
  if (auto t = j.find(key); t != j.end() && t->is_string()) return t->get<std::string>();
  return "";
}

std::vector<std::string> get_bytes_array(const json& j, const std::string& key) {
  std::vector<std::string> out;
  auto b = j.find(key + "_b64");
  if (b != j.end() && b->is_array()) {
    for (const auto& e : *b) out.push_back(e.is_string() ? base64_decode(e.get<std::string>()).value_or("") : "");
    return out;
  }
  if (auto t = j.find(key); t != j.end() && t->is_array())
    for (const auto& e : *t) out.push_back(e.is_string() ? e.get<std::string>() : "");
  return out;
}

json snapshot_json(const PolicySnapshot& p) {
  json files = json::array();
  for (const auto& [name, text] : p.files) {
    json f = json::object();
    put_bytes(f, "name", name);
    put_bytes(f, "text", text);
    files.push_back(std::move(f));
  }
  json vars = json::array();
  for (const auto& [k, v] : p.vars) {
    json e = json::object();
    put_bytes(e, "name", k);
    put_bytes(e, "value", v);
    vars.push_back(std::move(e));
  }
  json j = json::object();
  j["files"] = std::move(files);
  j["vars"] = std::move(vars);
  put_bytes_array(j, "protected_files", p.protected_files);
  put_bytes_array(j, "protected_dirs", p.protected_dirs);
  return j;
}

}  // namespace

std::string policy_snapshot_text(const PolicySnapshot& p) {
  return snapshot_json(p).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string policy_snapshot_hash(const PolicySnapshot& p) {
  Sha256 h;
  h.update(policy_snapshot_text(p));
  return h.finish_hex();
}

namespace detail {
namespace {

// Version 1.  Conventions:
// - Paths, argv, exe and cwd are BLOBs: bytes from the supervised processes,
//   compared and returned exactly.  argv BLOBs are NUL-terminated elements
//   (as /proc/PID/cmdline); the session's argv and policy_files are JSON
//   arrays (see encode_string_array) so that sqlite3(1) users can read them.
// - 64-bit unsigned values (proc_id, seq, flags) are stored bit-for-bit.
// - NULL means unknown or none: an event's rule (the policy's default), its
//   errno, a process's exit before it exited.
// - Ingest speed comes first (>= 300,000 events/s on a 2-core VM), and on
//   such a machine any index on events halves it (measured: an index on
//   session cost 35%, one on path 70%).  So events has none:
//   * a session's events are the id range first_event_id..last_event_id of
//     its row (the writer assigns ids and keeps the range per batch), which
//     gives "a session's events in id order" as a rowid range scan;
//   * "who touched this path" is touched_paths: a row per distinct
//     (path, session), appended the first time the writer sees the pair, so
//     that repeated paths cost nothing.  It has no index either (a B-tree
//     keyed by path cost a third of the writer's time): a reader scans it,
//     a table far smaller than events, and it leads to the sessions and the
//     id to scan from.  A pair may appear twice (the writer's memory of
//     seen pairs is bounded); readers take the smallest first_id.
constexpr const char* kSchemaSql = R"sql(
CREATE TABLE sessions (
  id             INTEGER PRIMARY KEY,
  uuid           TEXT NOT NULL,
  name           TEXT NOT NULL DEFAULT '',
  argv           TEXT NOT NULL DEFAULT '[]',
  cwd            BLOB,
  uid            INTEGER NOT NULL,
  user           TEXT NOT NULL DEFAULT '',
  hostname       TEXT NOT NULL DEFAULT '',
  policy_files   TEXT NOT NULL DEFAULT '[]',
  policy_hash    TEXT NOT NULL DEFAULT '',
  started_ns     INTEGER NOT NULL,
  ended_ns       INTEGER,
  exit_status    INTEGER,
  exit_signal    INTEGER,
  state          TEXT NOT NULL DEFAULT 'running'
                 CHECK (state IN ('running', 'ended', 'aborted')),
  degraded       TEXT NOT NULL DEFAULT '[]',
  observe        INTEGER NOT NULL DEFAULT 0,
  tracer         TEXT NOT NULL DEFAULT '',
  ask_mode       TEXT NOT NULL DEFAULT '',
  supervisor_pid INTEGER NOT NULL,
  boot_id        TEXT NOT NULL DEFAULT '',
  events_lost    INTEGER NOT NULL DEFAULT 0,
  -- Kept up to date by the writer with each batch, so that listing sessions
  -- never scans the events table.  Sums of events.count.
  n_events       INTEGER NOT NULL DEFAULT 0,
  n_denials      INTEGER NOT NULL DEFAULT 0,
  n_asks         INTEGER NOT NULL DEFAULT 0,
  last_event_ns  INTEGER,
  first_event_id INTEGER,
  last_event_id  INTEGER,
  policy_snapshot TEXT  -- policies.hash (schema 3); NULL: not recorded
);

CREATE TABLE processes (
  session        INTEGER NOT NULL,
  proc_id        INTEGER NOT NULL,
  parent_proc_id INTEGER NOT NULL DEFAULT 0,
  pid            INTEGER,
  ppid           INTEGER,
  uid            INTEGER,
  comm           TEXT,
  exe            BLOB,
  argv           BLOB,
  cwd            BLOB,
  started_ns     INTEGER,
  exec_ns        INTEGER,
  ended_ns       INTEGER,
  exit_status    INTEGER,
  exit_signal    INTEGER,
  -- Schema 6: the identity of its latest image (encode_identity; NULL before).
  identity       TEXT,
  UNIQUE (session, proc_id)  -- also serves "the processes of a session"
);

CREATE TABLE events (
  id         INTEGER PRIMARY KEY,
  session    INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  ts_ns      INTEGER NOT NULL,
  pid        INTEGER NOT NULL,
  tid        INTEGER NOT NULL,
  proc_id    INTEGER,
  comm       TEXT,
  action     TEXT NOT NULL,
  syscall    TEXT,
  path       BLOB,
  target     BLOB,
  aliases    BLOB,
  flags      INTEGER NOT NULL,
  is_dir     INTEGER NOT NULL,
  target_pid INTEGER NOT NULL,
  -- Not "IN (...)": SQLite builds an ephemeral index for an IN list on each
  -- run of a statement, which cost the writer a fifth of its time.
  decision   TEXT NOT NULL CHECK (decision = 'allow' OR decision = 'deny'),
  verdict    TEXT NOT NULL CHECK (verdict = 'allow' OR verdict = 'deny' OR
                                  verdict = 'ask' OR verdict = 'log'),
  rule       TEXT,
  builtin    INTEGER NOT NULL,
  message    TEXT,
  source     TEXT NOT NULL,
  layer      TEXT NOT NULL,
  errno      INTEGER,
  enforced   INTEGER NOT NULL,
  count      INTEGER NOT NULL,
  -- Schema 3 (NULL in rows from before): proc.deletes as judged, the
  -- process image judged (images.id), the other parts of the call (JSON).
  proc_deletes INTEGER,
  image      INTEGER,
  facets     TEXT,
  -- Schema 5, the network object of net.* events (NULL before, and
  -- without one): protocol, address, port, names asked, CNAME names.
  net_proto  TEXT,
  net_addr   TEXT,
  net_port   INTEGER,
  net_hosts  TEXT,
  net_chain  TEXT
);

-- Paths and targets of events, once per session (mostly): first_id is the
-- first event that named the path there.
CREATE TABLE touched_paths (
  path     BLOB NOT NULL,
  session  INTEGER NOT NULL,
  first_id INTEGER NOT NULL
);

-- The sessions still marked running: every writer that opens the file looks
-- for those whose supervisor is gone, and without this it reads the whole
-- table to find them.  Rows leave it when their session ends.
CREATE INDEX sessions_running ON sessions (state) WHERE state = 'running';

CREATE TABLE approvals (
  session      INTEGER NOT NULL,
  event_seq    INTEGER NOT NULL,
  asked_ns     INTEGER NOT NULL,
  answered_ns  INTEGER NOT NULL,
  answered_by  TEXT NOT NULL,
  answer       TEXT NOT NULL,
  rule_written TEXT,
  UNIQUE (session, event_seq)
);
)sql";

// The tables and columns schema 3 added, for a file created at version 2.
// New columns go last, so an upgraded file and a new one have one layout.
constexpr const char* kSchema3Tables = R"sql(
-- Schema 3.  A process as one event saw it: a row per process image the
-- writer meets (a fork, an exec, a change of directory makes a new one), so
-- that a rule on proc.exe, proc.argv, proc.cwd or proc.ancestors can be
-- judged again exactly.  Events point here by id; no index (the writer only
-- appends, readers look rows up by id).
CREATE TABLE images (
  id        INTEGER PRIMARY KEY,
  session   INTEGER NOT NULL,
  proc_id   INTEGER NOT NULL,
  pid       INTEGER,
  ppid      INTEGER,
  uid       INTEGER,
  comm      TEXT,
  exe       BLOB,
  argv      BLOB,
  cwd       BLOB,
  ancestors BLOB,
  -- Schema 6: its identities and how they were found, or why it has none
  -- (encode_identity); NULL in rows from before.
  identity  TEXT
);

-- The policies sessions ran with (PolicySnapshot as JSON), once each.
CREATE TABLE policies (
  hash     TEXT PRIMARY KEY,
  snapshot TEXT NOT NULL
);

-- Sessions still running, found by the stale-session sweep of every start
-- without reading the whole table.
CREATE INDEX IF NOT EXISTS sessions_running ON sessions (state) WHERE state = 'running';
)sql";

constexpr const char* kRunningIndexSql =
    "CREATE INDEX IF NOT EXISTS sessions_running ON sessions (state) WHERE state = 'running'";

constexpr const char* kUpgradeTo3 = R"sql(
ALTER TABLE sessions ADD COLUMN policy_snapshot TEXT;
ALTER TABLE events ADD COLUMN proc_deletes INTEGER;
ALTER TABLE events ADD COLUMN image INTEGER;
ALTER TABLE events ADD COLUMN facets TEXT;
)sql";

// Schema 4: what `cottonbox undo` did, a row per file (keep/recorded.h,
// commands/undo.cpp).  A table only: nothing else changes.
constexpr const char* kSchema4Tables = R"sql(
CREATE TABLE undos (
  undo_id   INTEGER NOT NULL,  -- one run of `cottonbox undo`: its rows share it
  session   INTEGER NOT NULL,
  ts_ns     INTEGER NOT NULL,
  uid       INTEGER NOT NULL,
  user      TEXT NOT NULL DEFAULT '',
  command   INTEGER,           -- --command N (a proc_id); NULL: every command
  path_glob BLOB,              -- --path; NULL: every path
  force     INTEGER NOT NULL,
  created   INTEGER NOT NULL,
  path      BLOB,              -- NULL: the run found nothing to undo (its only row)
  target    BLOB,              -- a move back: where it went back to
  action    TEXT,              -- restore, remove, move-back, nothing, conflict, cannot, skip-created
  done      INTEGER NOT NULL DEFAULT 0,  -- restore, remove, move-back carried out
  forced    INTEGER NOT NULL DEFAULT 0,  -- a conflict overridden by --force
  reason    TEXT,              -- why this action; or why it failed
  notes     TEXT NOT NULL DEFAULT '[]'   -- JSON: what is not exact
);
)sql";

// Schema 5: the network.  The tables it added, for a new file and an
// upgraded one alike.
constexpr const char* kSchema5Tables = R"sql(
-- Schema 5.  Every lookup the session's resolver answered: the trail of
-- which names a session asked for, what they led to, and which were
-- refused.  Written at the rate of lookups, so an index costs nothing that
-- matters.
CREATE TABLE IF NOT EXISTS dns_lookups (
  session   INTEGER NOT NULL,
  ts_ns     INTEGER NOT NULL,
  proc_id   INTEGER,
  client    TEXT NOT NULL,
  transport TEXT NOT NULL CHECK (transport = 'udp' OR transport = 'tcp'),
  name      TEXT NOT NULL,
  type      INTEGER NOT NULL,
  rcode     INTEGER NOT NULL,
  denied    INTEGER NOT NULL,
  truncated INTEGER NOT NULL,
  chain     TEXT NOT NULL DEFAULT '[]',
  addresses TEXT NOT NULL DEFAULT '[]',
  upstream  TEXT,
  note      TEXT
);
CREATE INDEX IF NOT EXISTS dns_lookups_session ON dns_lookups (session);
)sql";

// An older file gains the columns at the end, so that an upgraded file
// and a new one have one layout.  ADD COLUMN rewrites no row: instant at
// any size.
// Each added only where missing: a file that a development build between
// two versions wrote may have some of them.
constexpr std::pair<const char*, const char*> kColumns5[] = {
    {"net_proto", "TEXT"}, {"net_addr", "TEXT"}, {"net_port", "INTEGER"}, {"net_hosts", "TEXT"}, {"net_chain", "TEXT"}};

// Schema 6: each process image's identity, in both tables that describe one.
constexpr std::pair<const char*, const char*> kColumns6[] = {{"identity", "TEXT"}};

Result<Ok> add_missing_columns(sql::Database& db, const char* table,
                               std::span<const std::pair<const char*, const char*>> columns) {
  for (const auto& [name, type] : columns) {
    auto s = db.prepare(std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = ?1");
    if (!s) return s.error();
    s->bind_text(1, name);
    if (s->step()) continue;
    if (auto r = db.exec((std::string("ALTER TABLE ") + table + " ADD COLUMN " + name + " " + type).c_str()); !r)
      return r;
  }
  return Ok{};
}

std::string read_first_line(const char* file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

Result<Ok> ensure_schema(sql::Database& db, const std::string& path, bool create) {
  auto version = db.query_int("PRAGMA user_version");
  if (!version) {
    // "file is not a database" and friends.
    return Error{version.error().err, path + " is not a readable SQLite database: " + version.error().message};
  }
  auto check = [&](int64_t v) -> Result<Ok> {
    if (v > kSchemaVersion)
      return Error{0, path + " was written by a newer cottonbox (schema version " + std::to_string(v) +
                          "; this build knows version " + std::to_string(kSchemaVersion) +
                          "); upgrade cottonbox or choose another file with --db"};
    if (v != 0 && v < kOldestUpgradableSchema)
      return Error{0, path + " has schema version " + std::to_string(v) +
                          ", which this build cannot upgrade; move the file aside (a new one is "
                          "created) or choose another file with --db"};
    return Ok{};
  };
  if (auto r = check(*version); !r) return r;
  if (*version == kSchemaVersion) {
    if (!create) return Ok{};
    // The common case of every start: one lookup in the schema SQLite has
    // just read, and nothing written.  A file whose index was lost gets it
    // back (IF NOT EXISTS: another writer may be adding it too).
    auto has_index = db.query_int("SELECT count(*) FROM sqlite_schema WHERE name = 'sessions_running'");
    if (!has_index) return has_index.error();
    if (*has_index) return Ok{};
    return db.exec(kRunningIndexSql);
  }
  // An older layout: readers read it as it is (what it lacks reads as
  // NULL); the first writer upgrades it.
  if (*version != 0 && !create) return Ok{};

  if (!create) {
    // ENODATA for a file with nothing in it yet (made where O_TMPFILE is
    // missing, and not filled yet): a follower waits for it to fill.
    auto tables = db.query_int("SELECT count(*) FROM sqlite_schema");
    if (tables && *tables == 0)
      return Error{ENODATA, path +
                                " is not a cottonbox audit database yet: it is empty (inside a cottonbox session, the "
                                "session's own audit trail is hidden from it)"};
    return Error{0, path + " is not a cottonbox audit database (no schema version)"};
  }

  // Two supervisors may start at once on a new file: decide under the write lock.
  sql::Transaction tx(db);
  if (auto r = tx.begin_immediate(); !r) return r.error();
  version = db.query_int("PRAGMA user_version");
  if (!version) return version.error();
  if (auto r = check(*version); !r) return r;
  if (*version == kSchemaVersion) return Ok{};
  std::string set_version = "PRAGMA user_version = " + std::to_string(kSchemaVersion);
  if (*version != 0) {
    // Upgrades: columns and tables added, nothing rewritten (ALTER TABLE
    // ADD COLUMN only changes the schema), so it is instant at any size.
    if (*version < 3) {
      if (auto r = db.exec(kUpgradeTo3); !r) return r;
      if (auto r = db.exec(kSchema3Tables); !r) return r;
    }
    if (*version < 4)
      if (auto r = db.exec(kSchema4Tables); !r) return r;
    if (*version < 5) {
      if (auto r = add_missing_columns(db, "events", kColumns5); !r) return r;
      if (auto r = db.exec(kSchema5Tables); !r) return r;
    }
    if (*version < 6) {
      if (auto r = add_missing_columns(db, "images", kColumns6); !r) return r;
      if (auto r = add_missing_columns(db, "processes", kColumns6); !r) return r;
    }
    if (auto r = db.exec(set_version.c_str()); !r) return r;
    return tx.commit();
  }
  auto tables = db.query_int("SELECT count(*) FROM sqlite_schema");
  if (!tables) return tables.error();
  if (*tables != 0)
    return Error{0, path +
                        " is an SQLite database of something else; cottonbox will not write "
                        "into it"};
  if (auto r = db.exec(kSchemaSql); !r) return r;
  if (auto r = db.exec(kSchema3Tables); !r) return r;
  if (auto r = db.exec(kSchema4Tables); !r) return r;
  if (auto r = db.exec(kSchema5Tables); !r) return r;
  if (auto r = db.exec(set_version.c_str()); !r) return r;
  return tx.commit();
}

Result<std::string> new_database_image() {
  // Built in memory (SQLite's memdb, so that the header is filled in as in
  // a file: change counter, page count) and copied out whole.
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
  sql::DbPtr mem(raw);
  if (rc != SQLITE_OK) return Error{0, std::string("cannot make a new database: ") + sqlite3_errstr(rc)};
  auto fail = [&](const char* what) {
    return Error{0, std::string("cannot make a new database: ") + what + ": " + sqlite3_errmsg(raw)};
  };
  if (sqlite3_deserialize(raw, "main", nullptr, 0, 0, SQLITE_DESERIALIZE_RESIZEABLE | SQLITE_DESERIALIZE_FREEONCLOSE) !=
      SQLITE_OK)
    return fail("memdb");
  std::string sql = std::string("BEGIN;") + kSchemaSql + kSchema3Tables + kSchema4Tables + kSchema5Tables +
                    "PRAGMA user_version = " + std::to_string(kSchemaVersion) + ";COMMIT;";
  if (sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return fail("schema");
  sqlite3_int64 size = 0;
  std::unique_ptr<unsigned char, sql::Deleter<sqlite3_free>> bytes(sqlite3_serialize(raw, "main", &size, 0));
  if (!bytes || size < 100) return fail("serialize");
  std::string image(reinterpret_cast<const char*>(bytes.get()), static_cast<size_t>(size));
  // The file format's write and read versions: 2 is WAL, as `PRAGMA
  // journal_mode = WAL` would set them (https://sqlite.org/fileformat.html,
  // 1.3.3).  Born in WAL mode, the file never needs the switch that
  // concurrent openers raced on, nor a rollback journal beside it.
  image[18] = image[19] = 2;
  return image;
}

bool has_table(sql::Database& db, std::string_view name) {
  auto s = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  if (!s) return false;
  s->bind_text(1, name);
  return s->step();
}

std::string current_boot_id() { return read_first_line("/proc/sys/kernel/random/boot_id"); }

bool supervisor_alive(int32_t pid) {
  if (pid <= 0) return false;
  if (pid == getpid()) return true;
  std::string dir = "/proc/" + std::to_string(pid);
  // A zombie (killed, its parent yet to reap it) keeps its comm and its
  // executable's name but runs nothing, and the kernel has killed its
  // session (init's parent-death signal): its sessions are over.
  std::string stat = read_first_line((dir + "/stat").c_str());
  if (size_t paren = stat.rfind(')'); paren != std::string::npos && paren + 2 < stat.size())
    if (stat[paren + 2] == 'Z' || stat[paren + 2] == 'X') return false;
  std::string comm = read_first_line((dir + "/comm").c_str());
  if (comm.find("cottonbox") != std::string::npos) return true;
  // comm is only 15 bytes and the process can rename itself; the executable
  // is checked too (readable for our own uid, or as root).
  char buf[4096];
  ssize_t n = readlink((dir + "/exe").c_str(), buf, sizeof buf);
  return n > 0 && std::string_view(buf, static_cast<size_t>(n)).find("cottonbox") != std::string_view::npos;
}

bool running_session_is_stale(std::string_view boot_id, int32_t supervisor_pid, std::string_view current_boot) {
  if (boot_id != current_boot) return true;
  return !supervisor_alive(supervisor_pid);
}

std::string encode_string_array(const std::vector<std::string>& v) {
  auto a = nlohmann::json::array();
  for (const auto& s : v) {
    if (is_valid_utf8(s))
      a.push_back(s);
    else
      a.push_back({{"b64", base64_encode(s)}});
  }
  return a.dump();
}

std::vector<std::string> decode_string_array(std::string_view text) {
  std::vector<std::string> v;
  auto a = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!a.is_array()) return v;
  for (const auto& e : a) {
    if (e.is_string()) {
      v.push_back(e.get<std::string>());
    } else if (e.is_object() && e.contains("b64") && e["b64"].is_string()) {
      auto bytes = base64_decode(e["b64"].get<std::string>());
      v.push_back(bytes.value_or(std::string()));
    }
  }
  return v;
}

std::string encode_identity(const std::vector<std::string>& names, const IdentityFacts& f) {
  json j = json::object();
  j["check"] = identity_check_name(f.check);
  if (!names.empty()) j["names"] = json::parse(encode_string_array(names));
  if (f.exe != FileId{}) j["exe"] = {f.exe.dev, f.exe.ino, f.exe.ctime_sec, f.exe.ctime_nsec};
  if (!f.why.empty()) put_bytes(j, "why", f.why);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool decode_identity(std::string_view text, std::vector<std::string>& names, IdentityFacts& f) {
  auto j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto check = j.find("check");
  if (check == j.end() || !check->is_string()) return false;
  auto c = parse_identity_check(check->get<std::string>());
  if (!c) return false;
  IdentityFacts out;
  out.check = *c;
  if (auto e = j.find("exe"); e != j.end() && e->is_array() && e->size() == 4) {
    const json& a = *e;
    if (a[0].is_number_unsigned() && a[1].is_number_unsigned() && a[2].is_number_integer() && a[3].is_number_integer())
      out.exe = FileId{a[0].get<uint64_t>(), a[1].get<uint64_t>(), a[2].get<int64_t>(), a[3].get<int64_t>()};
  }
  out.why = get_bytes(j, "why");
  names = j.contains("names") ? decode_string_array(j["names"].dump()) : std::vector<std::string>{};
  f = std::move(out);
  return true;
}

std::string encode_facets(const std::vector<FacetRow>& facets) {
  if (facets.empty()) return "";
  json a = json::array();
  for (const auto& f : facets) {
    json j = json::object();
    j["action"] = action_name(f.action);
    put_bytes(j, "path", f.path);
    if (!f.target.empty()) put_bytes(j, "target", f.target);
    if (!f.aliases.empty()) put_bytes_array(j, "aliases", f.aliases);
    if (f.is_dir) j["is_dir"] = true;
    if (f.target_pid) j["target_pid"] = f.target_pid;
    a.push_back(std::move(j));
  }
  return a.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<FacetRow> decode_facets(std::string_view text) {
  std::vector<FacetRow> out;
  auto a = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!a.is_array()) return out;
  for (const auto& j : a) {
    if (!j.is_object()) continue;
    FacetRow f;
    if (auto act = j.find("action"); act != j.end() && act->is_string())
      f.action = parse_action(act->get<std::string>()).value_or(Action::FileWrite);
    f.path = get_bytes(j, "path");
    f.target = get_bytes(j, "target");
    f.aliases = get_bytes_array(j, "aliases");
    f.is_dir = j.value("is_dir", false);
    f.target_pid = j.value("target_pid", 0);
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<PolicySnapshot> decode_policy_snapshot(std::string_view text) {
  auto j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("files") || !j["files"].is_array()) return std::nullopt;
  PolicySnapshot p;
  for (const auto& f : j["files"])
    if (f.is_object()) p.files.emplace_back(get_bytes(f, "name"), get_bytes(f, "text"));
  if (j.contains("vars") && j["vars"].is_array())
    for (const auto& v : j["vars"])
      if (v.is_object()) p.vars[get_bytes(v, "name")] = get_bytes(v, "value");
  p.protected_files = get_bytes_array(j, "protected_files");
  p.protected_dirs = get_bytes_array(j, "protected_dirs");
  return p;
}

std::optional<Source> parse_source(std::string_view s) {
  for (auto x : {Source::Seccomp, Source::Ebpf, Source::Supervisor})
    if (source_name(x) == s) return x;
  return std::nullopt;
}

std::optional<Layer> parse_layer(std::string_view s) {
  for (auto x : {Layer::None, Layer::Notify, Layer::Filter, Layer::Mount, Layer::Landlock})
    if (layer_name(x) == s) return x;
  return std::nullopt;
}

std::optional<SessionState> parse_session_state(std::string_view s) {
  for (auto x : {SessionState::Running, SessionState::Ended, SessionState::Aborted})
    if (session_state_name(x) == s) return x;
  return std::nullopt;
}

}  // namespace detail
}  // namespace cb::db
