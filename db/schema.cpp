#include "db/schema.h"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "db/bytes.h"

namespace cb::db {

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
  last_event_id  INTEGER
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
  -- Schema 3 (NULL in rows from before, and for events with no network
  -- object): net.* events' protocol, IP address as text, port, the names a
  -- process asked for that led to the address and the CNAME names between
  -- (JSON arrays; NULL when none).
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

// The tables schema 3 added, for a new file and an upgraded one alike.
constexpr const char* kSchema3Tables = R"sql(
-- Schema 3.  Every lookup the session's resolver answered: the trail of
-- which names a session asked for, what they led to, and which were
-- refused.  Written at the rate of lookups, so an index costs nothing that
-- matters.
CREATE TABLE dns_lookups (
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
CREATE INDEX dns_lookups_session ON dns_lookups (session);
)sql";

// A version 2 file gains the columns at the end, so that an upgraded file
// and a new one have one layout.  ADD COLUMN rewrites no row: instant at
// any size.
constexpr const char* kUpgradeTo3 = R"sql(
ALTER TABLE events ADD COLUMN net_proto TEXT;
ALTER TABLE events ADD COLUMN net_addr TEXT;
ALTER TABLE events ADD COLUMN net_port INTEGER;
ALTER TABLE events ADD COLUMN net_hosts TEXT;
ALTER TABLE events ADD COLUMN net_chain TEXT;
)sql";

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
  if (*version == kSchemaVersion) return Ok{};
  // An older layout: readers read it as it is (what it lacks reads as
  // NULL); the first writer upgrades it.
  if (*version != 0 && !create) return Ok{};

  if (!create) return Error{0, path + " is not a cottonbox audit database (no schema version)"};

  // Two supervisors may start at once on a new file: decide under the write lock.
  sql::Transaction tx(db);
  if (auto r = tx.begin_immediate(); !r) return r.error();
  version = db.query_int("PRAGMA user_version");
  if (!version) return version.error();
  if (auto r = check(*version); !r) return r;
  if (*version == kSchemaVersion) return Ok{};
  std::string set_version = "PRAGMA user_version = " + std::to_string(kSchemaVersion);
  if (*version != 0) {
    if (*version < 3) {
      if (auto r = db.exec(kUpgradeTo3); !r) return r;
      if (auto r = db.exec(kSchema3Tables); !r) return r;
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
  if (auto r = db.exec(set_version.c_str()); !r) return r;
  return tx.commit();
}

std::string current_boot_id() { return read_first_line("/proc/sys/kernel/random/boot_id"); }

bool supervisor_alive(int32_t pid) {
  if (pid <= 0) return false;
  if (pid == getpid()) return true;
  std::string dir = "/proc/" + std::to_string(pid);
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
