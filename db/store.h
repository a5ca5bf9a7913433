// The audit store: one SQLite file in WAL mode, one writer thread, batched
// transactions, nothing lost on any exit path.
//
// Writer: producers (the supervisor's receive loop, the eBPF reader, askers)
// call the add_*() functions, which only enqueue and never touch SQLite; the
// writer thread commits what is queued at least every kCommitInterval, and
// flush()/end_session()/the destructor commit everything before returning.
// Reader: read-only connections for `cottonbox sessions|events|tree` and the
// GUI's forensic review.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/event.h"
#include "record/record.h"

namespace cb::db {

// 2: the first schema a release writes (1 was a development layout).
// 3: what a replay needs to judge an event again exactly: each event's
//    process image (images), proc.deletes and other facets, and the policy
//    texts a session ran with (policies).  A version 2 file is upgraded in
//    place by the first writer; readers read it as it is.
// 4: the undos table: what `cottonbox undo` did, a row per file.
// 5: the network: each event's network object (net_* columns: protocol,
//    address, port, the names the session resolved to the address) and the
//    session resolver's lookups (dns_lookups).
// 6: process identity: each image's identities and how they were found, or
//    why it has none (images.identity, processes.identity), so that `why`,
//    `replay` and `suggest` judge by identity, never by the command name.
constexpr int kSchemaVersion = 6;
constexpr int kOldestUpgradableSchema = 2;
constexpr std::chrono::milliseconds kCommitInterval{50};

// The policy snapshot as stored (canonical JSON) and its key, the sha256
// of that text.
std::string policy_snapshot_text(const PolicySnapshot& p);
std::string policy_snapshot_hash(const PolicySnapshot& p);

// ----------------------------------------------------------------- writer --

struct WriterStats {
  uint64_t queued = 0;     // records accepted
  uint64_t committed = 0;  // records in the database
  uint64_t errors = 0;     // failed commits (the records are retried, then reported)
  uint64_t refused = 0;    // records given up: rejected by SQLite on their own (skipped so the
                           // rest commit), or session starts that failed (the caller was told)
  uint64_t backlog = 0;    // records queued and not yet committed: the queue's memory, ~400 B each
  std::string last_error;  // the latest failure, "" if none
};

class Writer {
 public:
  // Creates the file (and its directory) if needed, sets WAL, checks/creates
  // the schema.  Also marks sessions whose supervisor is gone (same boot,
  // pid not running cottonbox; or another boot) as aborted.
  static Result<std::unique_ptr<Writer>> open(const std::string& path);
  // What open() makes first, alone: the directory and the empty, private
  // database file, and the -wal, -shm and -journal files beside it.  A
  // session calls it before planning (its mounts guard these files by path)
  // and lets open() build the rest while it launches.
  static Result<Ok> create_files(const std::string& path);
  ~Writer();  // commits everything queued, stops the thread
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Synchronous: inserts the session row and returns its id.
  Result<int64_t> begin_session(const SessionStart& s);

  // Asynchronous and thread-safe; they never block on SQLite.
  void add_process(int64_t session, ProcessRow p);
  void exec_process(int64_t session, ProcessExec e);
  void exit_process(int64_t session, ProcessExit e);
  void add_event(int64_t session, EventRow e);
  void add_approval(int64_t session, ApprovalRow a);
  void add_lookup(int64_t session, LookupRow l);
  void add_degraded(int64_t session, std::string reason);  // appended once per distinct reason
  void set_events_lost(int64_t session, uint64_t lost);    // the tracer's running total

  // Blocks until everything queued before the call is committed.
  Result<Ok> flush();
  // Records the end, then flushes.
  Result<Ok> end_session(int64_t session, const SessionEnd& e);

  WriterStats stats() const;
  const std::string& path() const;

 private:
  struct Impl;
  explicit Writer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ----------------------------------------------------------------- reader --

struct SessionSummary {
  int64_t id = 0;
  SessionStart start;
  std::optional<SessionEnd> end;  // nullopt while running
  SessionState state = SessionState::Running;
  std::vector<std::string> degraded;
  uint64_t events_lost = 0;
  uint64_t events = 0, denials = 0, asks = 0, processes = 0;
};

struct EventQuery {
  std::optional<int64_t> session;
  std::optional<std::string> action;     // exact action name, or a group (file.mutate, file.*)
  std::optional<std::string> decision;   // "allow" | "deny" | "ask" | "log" (ask/log match the verdict)
  std::optional<std::string> path_glob;  // matched against path and target
  // "Who contacted this host?": a name, a name pattern, an address or a
  // block, as `host:` in rules takes them (db/hosts.h); only the events
  // that reach a host (net.connect, net.send).
  std::optional<std::string> host;
  std::optional<int32_t> pid;
  std::optional<uint64_t> proc_id;
  int64_t after_id = 0;  // for paging and live tails
  int64_t limit = 0;     // 0: no limit
};

struct StoredEvent {
  int64_t id = 0;
  int64_t session = 0;
  // row.ev.proc points at the process image that was judged, when it was
  // recorded (schema 3); else at one rebuilt from the processes table (its
  // last image, without ancestors).
  EventRow row;
  std::optional<ApprovalRow> approval;
  bool image_recorded = false;  // row.ev.proc is exactly what was judged
  // row.ev.proc's names and identity are what the supervisor found (schema
  // 6); else it has none, whatever its command name.
  bool identity_recorded = false;
  bool deletes_recorded = false;  // row.ev.proc_deletes is what was judged
  bool facets_recorded = false;   // row.facets is complete
};

// Each host a session's processes reached (net.* events with an IP
// address), by the first name the session resolved for it, or by its
// address when none: `cottonbox hosts`.
struct HostContact {
  std::string host;                    // the name, or the address when no name led to it
  std::vector<std::string> names;      // every name asked for that led to these addresses
  std::vector<std::string> addresses;  // as text, in order of first contact
  std::string proto;                   // "tcp", "udp"; "dns" for a name refused at resolution
  uint16_t port = 0;
  std::vector<std::string> actions;  // net.connect, net.send, ...
  struct Process {
    uint64_t proc_id = 0;
    int32_t pid = 0;
    std::string comm;
    uint64_t events = 0;
  };
  std::vector<Process> processes;  // in order of first contact
  int64_t first_ns = 0, last_ns = 0;
  uint64_t events = 0, denied = 0, asked = 0;
  uint64_t lookups = 0, lookups_refused = 0;  // of host's name by the session's resolver
};

struct StoredLookup {
  int64_t session = 0;
  LookupRow row;
};

struct StoredProcess {
  int64_t session = 0;
  ProcessRow row;
  bool identity_recorded = false;  // row.names and row.identity (schema 6)
  std::optional<ProcessExit> exit;
  uint64_t events = 0, denials = 0;
};

// `cottonbox undo` in the audit trail: one run, a row per file in the
// undos table.  Recorded by record_undo() (a short connection of its own:
// undo runs after the session, beside whatever else writes the file).
struct UndoFile {
  std::string path;
  std::string target;  // a move back: where it went back to
  std::string action;  // restore, remove, move-back, nothing, conflict, cannot, skip-created
  bool done = false;   // restore, remove, move-back carried out
  bool forced = false;
  std::string reason;  // why this action, or why it failed
  std::vector<std::string> notes;
};

struct UndoRun {
  int64_t undo_id = 0;  // assigned by record_undo()
  int64_t session = 0;
  int64_t ts_ns = 0;
  uint32_t uid = 0;
  std::string user;
  std::optional<uint64_t> command;  // --command N
  std::string path_glob;            // --path ("" : every path)
  bool force = false, created = false;
  std::vector<UndoFile> files;  // empty: nothing to undo
};

// Appends the run (upgrading an older file first) and returns its undo_id.
Result<int64_t> record_undo(const std::string& db_path, const UndoRun& run);

class Reader {
 public:
  static Result<std::unique_ptr<Reader>> open(const std::string& path);
  ~Reader();

  Result<std::vector<SessionSummary>> sessions();
  Result<SessionSummary> session(int64_t id);
  Result<std::vector<StoredEvent>> events(const EventQuery& q);
  Result<StoredEvent> event(int64_t id);
  // The policy a session ran with; nullopt when it was not recorded (a
  // session from before schema 3).
  Result<std::optional<PolicySnapshot>> policy(int64_t session);
  // The largest event id committed so far (0 when none).
  Result<int64_t> last_event_id();
  int schema_version() const;
  Result<std::vector<StoredProcess>> processes(int64_t session);
  // The chain from `proc_id` up to the session's root process (nearest first).
  Result<std::vector<StoredProcess>> process_chain(int64_t session, uint64_t proc_id);
  // The session's undos, oldest first (none in a file older than version 3).
  Result<std::vector<UndoRun>> undos(int64_t session);
  // Hosts contacted in a session, in order of first contact; names refused
  // at resolution follow as rows of proto "dns".
  Result<std::vector<HostContact>> hosts(int64_t session);
  Result<std::vector<StoredLookup>> lookups(int64_t session);

  const std::string& path() const;

 private:
  struct Impl;
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The default database: $XDG_DATA_HOME/cottonbox/audit.db (~/.local/share/...).
std::string default_db_path();

// Inside another cottonbox session the default database is hidden (an
// empty read-only file bound over it, or refused by that session's
// supervisor).  Sessions started there are recorded beside it instead:
// `nested_db_path(p)` is p's directory's nested/audit.db, and the next
// level down for a session inside that one.
std::string nested_db_path(const std::string& path);
// True when `path` exists and cannot be opened for writing because
// something refuses it (EPERM, EACCES, EROFS): hidden, not merely absent.
bool db_hidden(const std::string& path);
// The default database, or the nested one the first hidden level leads to.
std::string usable_default_db_path();

}  // namespace cb::db
