// The writer: one thread owns the connection (qBittorrent's worker), producers
// only swap records into a vector under a short lock.
//
// The writer thread is the bottleneck of ingest: on the 2-core VM this was
// written on it spends about 3 µs of CPU per event, 2 of them inside SQLite.
// Hence: no index on events (schema.cpp), ids left to SQLite (an explicit id
// costs a lookup), multi-row INSERT statements (fewer statement runs), and
// WAL checkpoints on a thread and connection of their own.
#include "db/store.h"

#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <variant>

#include "base/fd.h"
#include "db/bytes.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "policy/sha256.h"

namespace cb::db {
namespace {

// Wake the writer early when this many records wait: at 300,000 events/s
// kCommitInterval alone would make 15,000-row transactions, and a prompt
// start keeps the queue (and its memory) short.
constexpr size_t kLargeBatch = 4096;
// Rows per multi-row INSERT into events.
constexpr int kRowsPerInsert = 16;
constexpr int kEventColumns = 33;
// After a failed commit, wait before retrying (doubling, up to the cap)
// unless someone is waiting for a flush.
constexpr std::chrono::milliseconds kRetryFirst{100};
constexpr std::chrono::milliseconds kRetryMax{2000};
// On shutdown a failing database gets this many more attempts, then the
// loss is reported: a supervisor must be able to exit.
constexpr int kShutdownAttempts = 4;
// The checkpointer copies the WAL back once it holds this many pages, and
// makes SQLite start it over past kWalRestartPages; a WAL file that grew
// anyway is cut back to kWalBytes (its persisting size).
constexpr int kCheckpointPages = 4096;
constexpr int kWalRestartPages = 16384;
constexpr int64_t kWalBytes = 64 << 20;
// Slots of the touched-path cache (8 bytes each); a power of two.
constexpr size_t kTouchCacheSlots = 1 << 19;
// Records per transaction: a writer that fell behind catches up in
// transactions of this size, which the page cache and the checkpointer
// handle far better than one giant one.
constexpr size_t kMaxTransaction = 16384;

struct Begin {
  std::unique_ptr<SessionStart> start;  // a pointer: keeps every Record small
  std::promise<Result<int64_t>> reply;
  int64_t id = 0;  // set by the transaction that inserts it
  int rc = SQLITE_OK;
};
struct Degraded {
  std::string reason;
};
struct EventsLost {
  uint64_t lost = 0;
};
struct End {
  SessionEnd end;
};

using Body = std::variant<EventRow, ProcessRow, ProcessExec, ProcessExit, ApprovalRow, LookupRow, Degraded, EventsLost,
                          End, Begin>;

struct Record {
  template <typename T>
  Record(int64_t s, T&& v) : session(s), body(std::in_place_type<std::decay_t<T>>, std::forward<T>(v)) {}
  int64_t session;
  Body body;
};

// Per-session sums of one batch, applied to the sessions row in the same
// transaction.
struct SessionCounts {
  int64_t session = 0;
  int64_t events = 0, denials = 0, asks = 0;
  int64_t last_ts = INT64_MIN;
  int64_t first_id = INT64_MAX, last_id = 0;
};

// SipHash-1-3 with a random key: paths come from the supervised processes,
// and with a known hash function they could pick a path whose key equals a
// protected path's, so that the second one is never written to
// touched_paths.
class SipHash {
 public:
  SipHash() {
    uint64_t key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
    if (getrandom(key, sizeof key, GRND_NONBLOCK) != sizeof key) {
      // Only before the entropy pool is ready; the clock still varies per run.
      key[0] ^= static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    k0_ = key[0], k1_ = key[1];
  }

  uint64_t operator()(uint64_t salt, std::string_view s) const {
    uint64_t v0 = k0_ ^ salt ^ 0x736f6d6570736575ull, v1 = k1_ ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0_ ^ salt ^ 0x6c7967656e657261ull, v3 = k1_ ^ 0x7465646279746573ull;
    auto round = [&] {
      v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
      v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
      v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
      v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
    };
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t m;
      memcpy(&m, s.data() + i, 8);  // x86-64 and arm64 are little-endian
      v3 ^= m, round(), v0 ^= m;
    }
    uint64_t b = static_cast<uint64_t>(s.size()) << 56;
    for (size_t k = 0; i + k < s.size(); ++k)
      b |= static_cast<uint64_t>(static_cast<unsigned char>(s[i + k])) << (8 * k);
    v3 ^= b, round(), v0 ^= b;
    v2 ^= 0xff;
    round(), round(), round();
    return v0 ^ v1 ^ v2 ^ v3;
  }

 private:
  static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  uint64_t k0_, k1_;
};

// The (session, path) pairs already in touched_paths, as keyed 64-bit
// hashes in a direct-mapped table: one memory access per lookup.  A pair that
// was evicted is written again (INSERT OR IGNORE makes that harmless); two
// pairs with one hash would skip a row, which the secret key makes a 2^-64
// accident rather than something a supervised process can arrange.
class TouchCache {
 public:
  // calloc: the kernel's zero pages, touched only as slots fill, instead of
  // 4 MiB of page faults on every launch.
  TouchCache() : slots_(static_cast<uint64_t*>(calloc(kTouchCacheSlots, sizeof(uint64_t)))) {
    if (!slots_) throw std::bad_alloc();
  }
  uint64_t key(int64_t session, std::string_view path) const {
    return sip_(static_cast<uint64_t>(session), path) | 1;  // 0 marks an empty slot
  }
  bool contains(uint64_t k) const { return slots_[k & (kTouchCacheSlots - 1)] == k; }
  void insert(uint64_t k) { slots_[k & (kTouchCacheSlots - 1)] = k; }
  void clear() { std::fill(slots_.get(), slots_.get() + kTouchCacheSlots, 0); }

 private:
  struct Free {
    void operator()(uint64_t* p) const { free(p); }
  };
  SipHash sip_;
  std::unique_ptr<uint64_t[], Free> slots_;
};

int mkdir_parents(const std::string& dir) {
  if (dir.empty()) return 0;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  auto slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0)
    if (int e = mkdir_parents(dir.substr(0, slash)); e != 0) return e;
  // 0700: the trail names every file the agent touched.
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errno;
  return 0;
}

// How long the writer waits for another connection's lock before a commit
// fails (and is retried; a session's start is refused).  Writers of other
// sessions hold it for a commit, a few milliseconds; 64 sessions started at
// once into one file wait well under a second for it on 2 cores (bench/).
constexpr std::chrono::milliseconds kWriterBusy{10000};

// Settings of every read-write connection to the file.
Result<Ok> configure(sql::Database& db) {
  db.wait_when_busy(kWriterBusy);
  // The -wal and -shm files stay while the supervisor runs, so that its
  // self-protection can guard them by path instead of chasing files SQLite
  // deletes and recreates.
  int persist = 1;
  sqlite3_file_control(db.get(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  // NORMAL in WAL mode: a power cut may lose the last commits but never
  // corrupts; an fsync per batch would cost more than the batching saves.
  if (auto r = db.exec("PRAGMA synchronous = NORMAL"); !r) return r;
  return db.exec(("PRAGMA journal_size_limit = " + std::to_string(kWalBytes)).c_str());
}

// Copies the WAL into the database on its own thread and connection, so that
// the fsyncs of a checkpoint never hold up the writer.  Woken by the
// writer's WAL hook.
class Checkpointer {
 public:
  explicit Checkpointer(sql::Database db) : db_(std::move(db)) {
    // A RESTART holds the writer back while it waits for readers to leave
    // the WAL; a reader that stays (a GUI) must not stall the writer long.
    db_.wait_when_busy(std::chrono::milliseconds(200));
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "cb-audit-ckpt");
      run();
    });
  }
  ~Checkpointer() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  void request() {
    {
      std::lock_guard lk(mu_);
      requested_ = true;
    }
    cv_.notify_one();
  }

 private:
  void run() {
    std::unique_lock lk(mu_);
    while (!stop_) {
      cv_.wait(lk, [&] { return stop_ || requested_; });
      if (stop_) break;
      requested_ = false;
      lk.unlock();
      // PASSIVE never waits for the writer or readers, but while the
      // writer keeps writing it never finishes either, and SQLite starts
      // the WAL over only after a finished checkpoint.  So a long WAL gets a
      // RESTART, which briefly holds the writer back (its busy handler
      // waits).  Failures need no handling: the WAL keeps the data, and
      // the last connection to close checkpoints.
      int log = 0;
      sqlite3_wal_checkpoint_v2(db_.get(), "main", SQLITE_CHECKPOINT_PASSIVE, &log, nullptr);
      if (log >= kWalRestartPages)
        sqlite3_wal_checkpoint_v2(db_.get(), "main", SQLITE_CHECKPOINT_RESTART, nullptr, nullptr);
      lk.lock();
    }
  }

  sql::Database db_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace

struct Writer::Impl {
  struct Statements {
    sql::Statement insert_session, insert_events, insert_event, insert_touch, upsert_process, exec_process,
        exit_process, insert_approval, insert_lookup, get_degraded, set_degraded, set_lost, end_session, add_counts,
        insert_image, insert_policy;
  };

  std::string path;
  sql::Database db;
  Statements st;
  // Started when the WAL first grows long: most sessions never need it, and
  // a session's start then pays for one connection and one thread less.
  std::unique_ptr<Checkpointer> checkpointer;
  bool wants_checkpoint = false;  // writer thread only: set by the WAL hook

  // Shared with producers, under mu.
  mutable std::mutex mu;
  std::condition_variable wake;  // -> writer: work, urgency, stop
  std::condition_variable done;  // -> flush(): a commit finished or failed
  std::vector<Record> pending;
  uint64_t enqueued = 0;           // records ever queued
  uint64_t committed_through = 0;  // the first n records are in the database (or refused)
  uint64_t attempts = 0;           // batches taken for writing, numbered from 1
  uint64_t failed_attempt = 0;     // the number of the last attempt that failed
  bool urgent = false;             // a flush is waiting: commit now
  bool stop = false;
  WriterStats stats;
  Error last_error;

  // Writer thread only.
  std::vector<Record> batch;  // survives a failed commit, to be retried
  std::vector<SessionCounts> counts;
  // Bytes made for a row's columns, bound until the statement runs.
  struct Scratch {
    std::string aliases, facets, net_addr, net_hosts, net_chain;
  };
  std::array<Scratch, kRowsPerInsert> scratch;
  std::array<int64_t, kRowsPerInsert> image_ids{};
  // The process images written so far, by the ProcessInfo an event points
  // at.  A live weak_ptr means the same object (its address cannot have
  // been reused while it lives); an expired one is swept now and then.
  struct ImageSlot {
    std::weak_ptr<const ProcessInfo> info;
    int64_t session = 0;
    int64_t id = 0;
  };
  std::unordered_map<const ProcessInfo*, ImageSlot> images;
  size_t images_sweep_at = 4096;
  TouchCache touched;
  std::thread thread;

  Impl(std::string p, sql::Database d) : path(std::move(p)), db(std::move(d)) {}
  ~Impl() {
    // Statements before the connection; the checkpointer's connection
    // closes first so that the writer's, the last, does the final checkpoint.
    st = Statements{};
    sqlite3_wal_hook(db.get(), nullptr, nullptr);
    checkpointer.reset();
  }

  Result<Ok> prepare();
  Result<Ok> abort_stale_sessions();
  void checkpoint();
  void run();

  template <typename T>
  void enqueue(int64_t session, T&& v, bool now = false) {
    bool notify;
    {
      std::lock_guard lk(mu);
      pending.emplace_back(session, std::forward<T>(v));
      ++enqueued;
      if (now) urgent = true;
      notify = now || pending.size() == 1 || pending.size() == kLargeBatch;
    }
    if (notify) wake.notify_one();
  }

  struct Outcome {
    bool ok = false;  // the whole batch is done
    Error error;
    size_t done = 0;  // records from the front of the batch that are done
    uint64_t written = 0, refused = 0;
  };
  Outcome write_batch();
  int write_records(size_t begin, size_t end);
  int insert_events(const std::vector<std::pair<int64_t, const EventRow*>>& group);
  int image_of(int64_t session, const EventRow& r, int64_t* id);
  void bind_event(sql::Statement& s, int base, int64_t session, const EventRow& r, Scratch& scratch, int64_t image);
  void bind_net(sql::Statement& s, int i, const Event& ev, Scratch& scratch);
  int after_event(int64_t id, int64_t session, const EventRow& r);
  int touch(int64_t session, const std::string& path, int64_t id);
  int apply(int64_t session, Body& body);
  int apply_begin(Begin& b);
  int apply_degraded(int64_t session, const std::string& reason);
  SessionCounts& counts_for(int64_t session);
  int write_counts();

  // Set while write_records() runs: a record refused on its own.
  uint64_t refused_now = 0;
  Error refused_error;
};

namespace {
// Plain "?" (numbered in order): "?NNN" makes SQLite look each number up in
// a list, which is quadratic in the 480 parameters of a 16-row insert.
std::string insert_events_sql(int rows) {
  std::string v =
      "INSERT INTO events (session, seq, ts_ns, pid, tid, proc_id, comm, action,"
      " syscall, path, target, aliases, flags, is_dir, target_pid, decision, verdict, rule,"
      " builtin, message, source, layer, errno, enforced, count, proc_deletes, image, facets,"
      " net_proto, net_addr, net_port, net_hosts, net_chain) VALUES ";
  for (int r = 0; r < rows; ++r) {
    v += r ? ", (" : "(";
    for (int c = 1; c <= kEventColumns; ++c) v += c > 1 ? ", ?" : "?";
    v += ")";
  }
  return v;
}
}  // namespace

Result<Ok> Writer::Impl::prepare() {
  auto p = [&](sql::Statement& s, const std::string& text) -> Result<Ok> {
    auto r = db.prepare(text, /*persistent=*/true);
    if (!r) return r.error();
    s = std::move(*r);
    return Ok{};
  };
  for (auto r : {
           p(st.insert_session,
             "INSERT INTO sessions (uuid, name, argv, cwd, uid, user, hostname, policy_files,"
             " policy_hash, started_ns, state, observe, tracer, ask_mode, supervisor_pid, boot_id,"
             " policy_snapshot)"
             " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'running', ?11, ?12, ?13, ?14, ?15, ?16)"),
           p(st.insert_policy, "INSERT OR IGNORE INTO policies (hash, snapshot) VALUES (?1, ?2)"),
           p(st.insert_image,
             "INSERT INTO images (session, proc_id, pid, ppid, uid, comm, exe, argv, cwd, ancestors, identity)"
             " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
           p(st.insert_event, insert_events_sql(1)),
           p(st.insert_touch, "INSERT INTO touched_paths (path, session, first_id) VALUES (?1, ?2, ?3)"),
           // Producers are separate threads (supervisor, eBPF reader): an exec
           // or exit may arrive before the fork that created the process.
           // Each statement therefore creates the row if needed, and a late
           // fork keeps the image that an earlier exec recorded.
           p(st.upsert_process,
             "INSERT INTO processes (session, proc_id, parent_proc_id, pid, ppid, uid, comm, exe,"
             " argv, cwd, started_ns, identity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
             " ON CONFLICT (session, proc_id) DO UPDATE SET parent_proc_id = excluded.parent_proc_id,"
             " pid = excluded.pid, ppid = excluded.ppid, uid = excluded.uid, cwd = excluded.cwd,"
             " started_ns = excluded.started_ns,"
             " comm = CASE WHEN exec_ns IS NULL THEN excluded.comm ELSE comm END,"
             " exe = CASE WHEN exec_ns IS NULL THEN excluded.exe ELSE exe END,"
             " argv = CASE WHEN exec_ns IS NULL THEN excluded.argv ELSE argv END,"
             " identity = CASE WHEN exec_ns IS NULL THEN excluded.identity ELSE identity END"),
           p(st.exec_process,
             "INSERT INTO processes (session, proc_id, comm, exe, argv, exec_ns, identity)"
             " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (session, proc_id) DO UPDATE SET"
             " comm = excluded.comm, exe = excluded.exe, argv = excluded.argv,"
             " exec_ns = excluded.exec_ns, identity = excluded.identity"),
           p(st.exit_process,
             "INSERT INTO processes (session, proc_id, ended_ns, exit_status, exit_signal)"
             " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (session, proc_id) DO UPDATE SET"
             " ended_ns = excluded.ended_ns, exit_status = excluded.exit_status,"
             " exit_signal = excluded.exit_signal"),
           p(st.insert_approval,
             "INSERT OR REPLACE INTO approvals (session, event_seq, asked_ns, answered_ns,"
             " answered_by, answer, rule_written) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
           p(st.insert_lookup,
             "INSERT INTO dns_lookups (session, ts_ns, proc_id, client, transport, name, type, rcode, denied,"
             " truncated, chain, addresses, upstream, note)"
             " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"),
           p(st.get_degraded, "SELECT degraded FROM sessions WHERE id = ?1"),
           p(st.set_degraded, "UPDATE sessions SET degraded = ?2 WHERE id = ?1"),
           p(st.set_lost, "UPDATE sessions SET events_lost = max(events_lost, ?2) WHERE id = ?1"),
           p(st.end_session,
             "UPDATE sessions SET ended_ns = ?2, exit_status = ?3, exit_signal = ?4, state = ?5"
             " WHERE id = ?1"),
           p(st.add_counts,
             "UPDATE sessions SET n_events = n_events + ?2, n_denials = n_denials + ?3,"
             " n_asks = n_asks + ?4, last_event_ns = max(coalesce(last_event_ns, ?5), ?5),"
             " first_event_id = coalesce(first_event_id, ?6),"
             " last_event_id = max(coalesce(last_event_id, ?7), ?7) WHERE id = ?1"),
       }) {
    if (!r) return r;
  }
  return Ok{};
}

void Writer::Impl::checkpoint() {
  wants_checkpoint = false;
  if (!checkpointer) {
    // Without its own connection the checkpointer cannot run; SQLite's
    // automatic checkpoint on this thread then does the job, slower.
    auto cdb = sql::Database::open(path, SQLITE_OPEN_READWRITE);
    if (!cdb || !configure(*cdb)) {
      sqlite3_wal_autocheckpoint(db.get(), 1000);  // replaces the hook set in open()
      return;
    }
    checkpointer = std::make_unique<Checkpointer>(std::move(*cdb));
  }
  checkpointer->request();
}

Result<Ok> Writer::Impl::abort_stale_sessions() {
  std::string boot = detail::current_boot_id();
  // Read without the write lock (through the index of running sessions):
  // nearly every start finds nothing to mark, and 64 starts at once need
  // not take turns for it.
  std::vector<int64_t> stale;
  {
    auto sel = db.prepare("SELECT id, boot_id, supervisor_pid FROM sessions WHERE state = 'running'");
    if (!sel) return sel.error();
    while (sel->step())
      if (detail::running_session_is_stale(sel->column_bytes(1), sel->column_int(2), boot))
        stale.push_back(sel->column_int64(0));
    if (!sel->succeeded()) return db.error("reading sessions");
  }
  if (stale.empty()) return Ok{};
  // Several openers may find the same sessions: the update is idempotent,
  // and a session that ended meanwhile keeps its end.
  sql::Transaction tx(db);
  if (auto r = tx.begin_immediate(); !r) return r;
  // The last thing recorded is the best estimate of when it ended.
  auto upd = db.prepare(
      "UPDATE sessions SET state = 'aborted', ended_ns = coalesce(last_event_ns, started_ns)"
      " WHERE id = ?1 AND state = 'running'");
  if (!upd) return upd.error();
  for (int64_t id : stale) {
    upd->bind_int64(1, id);
    if (!upd->run()) return db.error("marking session " + std::to_string(id) + " aborted");
  }
  return tx.commit();
}

SessionCounts& Writer::Impl::counts_for(int64_t session) {
  // A batch touches one or two sessions: a linear scan beats a map.
  for (auto& c : counts)
    if (c.session == session) return c;
  counts.push_back(SessionCounts{session});
  return counts.back();
}

int Writer::Impl::write_counts() {
  auto& s = st.add_counts;
  for (const auto& c : counts) {
    s.bind_int64(1, c.session);
    s.bind_int64(2, c.events);
    s.bind_int64(3, c.denials);
    s.bind_int64(4, c.asks);
    s.bind_int64(5, c.last_ts);
    s.bind_int64(6, c.first_id);
    s.bind_int64(7, c.last_id);
    if (!s.run()) return s.rc();
  }
  return SQLITE_OK;
}

// The id of the images row of the process image `r` was judged with,
// written now if it is new.
int Writer::Impl::image_of(int64_t session, const EventRow& r, int64_t* id) {
  *id = 0;
  const ProcessInfo* p = r.ev.proc.get();
  if (!p) return SQLITE_OK;
  if (auto it = images.find(p); it != images.end() && it->second.session == session && !it->second.info.expired()) {
    *id = it->second.id;
    return SQLITE_OK;
  }
  auto& s = st.insert_image;
  std::string argv = join_nul(p->argv), ancestors = join_nul(p->ancestors);
  std::string identity = detail::encode_identity(p->names, p->identity);
  s.bind_int64(1, session);
  s.bind_uint64(2, p->proc_id);
  s.bind_int(3, p->pid);
  s.bind_int(4, p->ppid);
  s.bind_int64(5, p->uid);
  s.bind_text(6, p->comm);
  s.bind_blob(7, p->exe);
  s.bind_blob(8, argv);
  s.bind_blob(9, p->cwd);
  s.bind_blob(10, ancestors);
  s.bind_text(11, identity);
  if (!s.run()) return s.rc();
  *id = db.last_insert_rowid();
  if (images.size() >= images_sweep_at) {
    std::erase_if(images, [](const auto& kv) { return kv.second.info.expired(); });
    images_sweep_at = std::max<size_t>(4096, 2 * images.size());
  }
  images[p] = ImageSlot{r.ev.proc, session, *id};
  return SQLITE_OK;
}

void Writer::Impl::bind_event(sql::Statement& s, int base, int64_t session, const EventRow& r, Scratch& scratch,
                              int64_t image) {
  std::string& alias_bytes = scratch.aliases;
  std::string& facet_text = scratch.facets;
  const Event& ev = r.ev;
  int i = base;
  s.bind_int64(++i, session);
  s.bind_uint64(++i, r.seq);
  s.bind_int64(++i, ev.ts_ns);
  s.bind_int(++i, ev.pid);
  s.bind_int(++i, ev.tid);
  if (ev.proc && ev.proc->proc_id != 0)
    s.bind_uint64(++i, ev.proc->proc_id);
  else
    s.bind_null(++i);
  s.bind_text_or_null(++i, ev.proc ? std::string_view(ev.proc->comm) : std::string_view());
  s.bind_text(++i, action_name(ev.action));
  s.bind_text_or_null(++i, ev.syscall);
  s.bind_blob(++i, ev.path);
  s.bind_blob_or_null(++i, ev.target);
  if (ev.aliases.empty()) {
    s.bind_null(++i);
  } else {
    alias_bytes = join_nul(ev.aliases);
    s.bind_blob(++i, alias_bytes);
  }
  s.bind_uint64(++i, ev.flags);
  s.bind_bool(++i, ev.is_dir);
  s.bind_int(++i, ev.target_pid);
  s.bind_text(++i, r.allowed ? "allow" : "deny");
  s.bind_text(++i, decision_name(r.verdict.decision));
  s.bind_text_or_null(++i, r.verdict.rule_id);
  s.bind_bool(++i, r.verdict.builtin);
  s.bind_text_or_null(++i, r.verdict.message);
  s.bind_text(++i, source_name(ev.source));
  s.bind_text(++i, layer_name(r.layer));
  if (r.result_errno < 0)
    s.bind_null(++i);
  else
    s.bind_int(++i, r.result_errno);
  s.bind_bool(++i, r.enforced);
  s.bind_int64(++i, r.count);
  s.bind_int64(++i, ev.proc_deletes);
  if (image)
    s.bind_int64(++i, image);
  else
    s.bind_null(++i);
  if (r.facets.empty()) {
    s.bind_null(++i);
  } else {
    facet_text = detail::encode_facets(r.facets);
    s.bind_text(++i, facet_text);
  }
  bind_net(s, i, ev, scratch);
}

// The network object of a net.* event; read back from its path when the
// producer gave none (names are then unknown).  NULLs for other events.
void Writer::Impl::bind_net(sql::Statement& s, int i, const Event& ev, Scratch& scratch) {
  NetObject from_path;
  const NetObject* n = &ev.net;
  if (n->proto == NetProto::None && action_object(ev.action) == ObjectKind::Address) {
    from_path = net_object_from_path(ev.path);
    n = &from_path;
  }
  if (n->proto == NetProto::None) {
    for (int k = 0; k < 5; ++k) s.bind_null(++i);
    return;
  }
  s.bind_text(++i, net_proto_name(n->proto));
  scratch.net_addr = n->addr_text;
  s.bind_text_or_null(++i, scratch.net_addr);
  if (n->ip())
    s.bind_int(++i, n->port);
  else
    s.bind_null(++i);
  std::vector<std::string> chain;
  for (const auto& name : n->names)
    if (std::find(n->hosts.begin(), n->hosts.end(), name) == n->hosts.end()) chain.push_back(name);
  scratch.net_hosts = n->hosts.empty() ? "" : detail::encode_string_array(n->hosts);
  scratch.net_chain = chain.empty() ? "" : detail::encode_string_array(chain);
  s.bind_text_or_null(++i, scratch.net_hosts);
  s.bind_text_or_null(++i, scratch.net_chain);
}

int Writer::Impl::touch(int64_t session, const std::string& p, int64_t id) {
  uint64_t key = touched.key(session, p);
  if (touched.contains(key)) return SQLITE_OK;
  auto& s = st.insert_touch;
  s.bind_blob(1, p);
  s.bind_int64(2, session);
  s.bind_int64(3, id);
  if (!s.run()) return s.rc();
  touched.insert(key);
  return SQLITE_OK;
}

int Writer::Impl::after_event(int64_t id, int64_t session, const EventRow& r) {
  const Event& ev = r.ev;
  if (!ev.path.empty())
    if (int rc = touch(session, ev.path, id); rc != SQLITE_OK) return rc;
  if (!ev.target.empty())
    if (int rc = touch(session, ev.target, id); rc != SQLITE_OK) return rc;
  auto& c = counts_for(session);
  c.events += r.count;
  if (!r.allowed) c.denials += r.count;
  if (r.verdict.decision == Decision::Ask) c.asks += r.count;
  c.last_ts = std::max(c.last_ts, ev.ts_ns);
  c.first_id = std::min(c.first_id, id);
  c.last_id = std::max(c.last_id, id);
  return SQLITE_OK;
}

int Writer::Impl::insert_events(const std::vector<std::pair<int64_t, const EventRow*>>& group) {
  // SQLite numbers the rows of one INSERT consecutively after the largest id
  // (and no other connection writes while this transaction holds the lock),
  // so the last id tells them all.  An explicit id would cost a lookup.
  auto n = static_cast<int64_t>(group.size());
  // Made on the first full group: a short session never needs it, and
  // preparing it is a good part of opening the store.
  if (group.size() == kRowsPerInsert && !st.insert_events.is_valid())
    if (auto r = db.prepare(insert_events_sql(kRowsPerInsert), /*persistent=*/true)) st.insert_events = std::move(*r);
  if (group.size() == kRowsPerInsert && st.insert_events.is_valid()) {
    auto& s = st.insert_events;
    // Images first: the events' ids are read from last_insert_rowid().
    for (int k = 0; k < kRowsPerInsert; ++k)
      if (int rc = image_of(group[k].first, *group[k].second, &image_ids[k]); rc != SQLITE_OK) {
        if (sql::is_transient(rc)) return rc;
        image_ids[k] = 0;  // the event without its image beats no event
      }
    for (int k = 0; k < kRowsPerInsert; ++k)
      bind_event(s, k * kEventColumns, group[k].first, *group[k].second, scratch[k], image_ids[k]);
    if (s.run()) {
      int64_t first = db.last_insert_rowid() - n + 1;
      for (int k = 0; k < kRowsPerInsert; ++k)
        if (int rc = after_event(first + k, group[k].first, *group[k].second); rc != SQLITE_OK) return rc;
      return SQLITE_OK;
    }
    if (sql::is_transient(s.rc())) return s.rc();
    // One row is at fault: insert them one by one to keep the others.
  }
  auto& s = st.insert_event;
  for (const auto& [session, row] : group) {
    int64_t image = 0;
    if (int rc = image_of(session, *row, &image); rc != SQLITE_OK) {
      if (sql::is_transient(rc)) return rc;
      image = 0;
    }
    bind_event(s, 0, session, *row, scratch[0], image);
    if (!s.run()) {
      if (sql::is_transient(s.rc())) return s.rc();
      ++refused_now;
      refused_error = db.error("an event was refused");
      continue;
    }
    if (int rc = after_event(db.last_insert_rowid(), session, *row); rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

int Writer::Impl::apply_begin(Begin& b) {
  const SessionStart& x = *b.start;
  auto& s = st.insert_session;
  std::string argv = detail::encode_string_array(x.argv);
  std::string files = detail::encode_string_array(x.policy_files);
  s.bind_text(1, x.uuid);
  s.bind_text(2, x.name);
  s.bind_text(3, argv);
  s.bind_blob(4, x.cwd);
  s.bind_int64(5, x.uid);
  s.bind_text(6, x.user);
  s.bind_text(7, x.hostname);
  s.bind_text(8, files);
  s.bind_text(9, x.policy_hash);
  s.bind_int64(10, x.started_ns);
  s.bind_bool(11, x.observe);
  s.bind_text(12, x.tracer);
  s.bind_text(13, x.ask_mode);
  s.bind_int(14, x.supervisor_pid);
  s.bind_text(15, x.boot_id);
  std::string snapshot_hash;
  if (x.policy) {
    std::string text = policy_snapshot_text(*x.policy);
    Sha256 h;
    h.update(text);
    snapshot_hash = h.finish_hex();
    auto& ins = st.insert_policy;
    ins.bind_text(1, snapshot_hash);
    ins.bind_text(2, text);
    if (!ins.run()) return b.rc = ins.rc();
  }
  s.bind_text_or_null(16, snapshot_hash);
  bool ok = s.run();
  b.rc = ok ? SQLITE_OK : s.rc();
  if (ok) b.id = db.last_insert_rowid();
  return b.rc;
}

int Writer::Impl::apply_degraded(int64_t session, const std::string& reason) {
  auto& get = st.get_degraded;
  get.bind_int64(1, session);
  if (!get.step()) {
    int rc = get.rc();
    get.reset();
    return rc == SQLITE_DONE ? SQLITE_OK : rc;  // no such session: nothing to mark
  }
  std::vector<std::string> reasons = detail::decode_string_array(get.column_bytes(0));
  get.reset();
  if (std::find(reasons.begin(), reasons.end(), reason) != reasons.end()) return SQLITE_OK;
  reasons.push_back(reason);
  std::string text = detail::encode_string_array(reasons);
  auto& set = st.set_degraded;
  set.bind_int64(1, session);
  set.bind_text(2, text);
  return set.run() ? SQLITE_OK : set.rc();
}

int Writer::Impl::apply(int64_t session, Body& body) {
  return std::visit(
      [&](auto& x) -> int {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, EventRow>) {
          return insert_events({{session, &x}});
        } else if constexpr (std::is_same_v<T, ProcessRow>) {
          auto& s = st.upsert_process;
          std::string argv = join_nul(x.argv);
          s.bind_int64(1, session);
          s.bind_uint64(2, x.proc_id);
          s.bind_uint64(3, x.parent_proc_id);
          s.bind_int(4, x.pid);
          s.bind_int(5, x.ppid);
          s.bind_int64(6, x.uid);
          s.bind_text(7, x.comm);
          s.bind_blob(8, x.exe);
          s.bind_blob(9, argv);
          s.bind_blob(10, x.cwd);
          s.bind_int64(11, x.started_ns);
          std::string identity = detail::encode_identity(x.names, x.identity);
          s.bind_text(12, identity);
          return s.run() ? SQLITE_OK : s.rc();
        } else if constexpr (std::is_same_v<T, ProcessExec>) {
          auto& s = st.exec_process;
          std::string argv = join_nul(x.argv);
          s.bind_int64(1, session);
          s.bind_uint64(2, x.proc_id);
          s.bind_text(3, x.comm);
          s.bind_blob(4, x.exe);
          s.bind_blob(5, argv);
          s.bind_int64(6, x.ts_ns);
          std::string identity = detail::encode_identity(x.names, x.identity);
          s.bind_text(7, identity);
          return s.run() ? SQLITE_OK : s.rc();
        } else if constexpr (std::is_same_v<T, ProcessExit>) {
          auto& s = st.exit_process;
          s.bind_int64(1, session);
          s.bind_uint64(2, x.proc_id);
          s.bind_int64(3, x.ended_ns);
          if (x.exit_status < 0)
            s.bind_null(4);
          else
            s.bind_int(4, x.exit_status);
          s.bind_int(5, x.exit_signal);
          return s.run() ? SQLITE_OK : s.rc();
        } else if constexpr (std::is_same_v<T, ApprovalRow>) {
          auto& s = st.insert_approval;
          s.bind_int64(1, session);
          s.bind_uint64(2, x.event_seq);
          s.bind_int64(3, x.asked_ns);
          s.bind_int64(4, x.answered_ns);
          s.bind_text(5, x.answered_by);
          s.bind_text(6, x.answer);
          s.bind_text_or_null(7, x.rule_written);
          return s.run() ? SQLITE_OK : s.rc();
        } else if constexpr (std::is_same_v<T, LookupRow>) {
          auto& s = st.insert_lookup;
          std::string chain = detail::encode_string_array(x.chain);
          std::string addresses = detail::encode_string_array(x.addresses);
          s.bind_int64(1, session);
          s.bind_int64(2, x.ts_ns);
          if (x.proc_id)
            s.bind_uint64(3, x.proc_id);
          else
            s.bind_null(3);
          s.bind_text(4, x.client);
          s.bind_text(5, x.tcp ? "tcp" : "udp");
          s.bind_text(6, x.name);
          s.bind_int(7, x.type);
          s.bind_int(8, x.rcode);
          s.bind_bool(9, x.denied);
          s.bind_bool(10, x.truncated);
          s.bind_text(11, chain);
          s.bind_text(12, addresses);
          s.bind_text_or_null(13, x.upstream);
          s.bind_text_or_null(14, x.note);
          return s.run() ? SQLITE_OK : s.rc();
        } else if constexpr (std::is_same_v<T, Degraded>) {
          return apply_degraded(session, x.reason);
        } else if constexpr (std::is_same_v<T, EventsLost>) {
          auto& s = st.set_lost;
          s.bind_int64(1, session);
          s.bind_uint64(2, x.lost);
          return s.run() ? SQLITE_OK : s.rc();
        } else if constexpr (std::is_same_v<T, End>) {
          auto& s = st.end_session;
          s.bind_int64(1, session);
          s.bind_int64(2, x.end.ended_ns);
          if (x.end.exit_status < 0)
            s.bind_null(3);
          else
            s.bind_int(3, x.end.exit_status);
          s.bind_int(4, x.end.exit_signal);
          s.bind_text(5, session_state_name(x.end.state));
          return s.run() ? SQLITE_OK : s.rc();
        } else {
          static_assert(std::is_same_v<T, Begin>);
          return apply_begin(x);
        }
      },
      body);
}

// Writes the whole batch inside the caller's transaction.  Returns SQLITE_OK
// or the transient failure that must abort the transaction; records refused
// on their own are counted in refused_now and skipped.
int Writer::Impl::write_records(size_t begin, size_t end) {
  std::vector<std::pair<int64_t, const EventRow*>> group;
  group.reserve(kRowsPerInsert);
  auto flush_group = [&] {
    int rc = group.empty() ? SQLITE_OK : insert_events(group);
    group.clear();
    return rc;
  };
  for (size_t i = begin; i < end; ++i) {
    Record& rec = batch[i];
    if (auto* e = std::get_if<EventRow>(&rec.body)) {
      group.emplace_back(rec.session, e);
      if (group.size() < kRowsPerInsert) continue;
      if (int rc = flush_group(); rc != SQLITE_OK) return rc;
      continue;
    }
    if (int rc = flush_group(); rc != SQLITE_OK) return rc;
    int rc = apply(rec.session, rec.body);
    if (rc == SQLITE_OK) continue;
    if (sql::is_transient(rc)) return rc;
    // This record alone is at fault (a constraint): keep the others.
    ++refused_now;
    refused_error = db.error("a record was refused");
  }
  if (int rc = flush_group(); rc != SQLITE_OK) return rc;
  return write_counts();
}

Writer::Impl::Outcome Writer::Impl::write_batch() {
  Outcome out;
  size_t done = 0;  // batch[0, done) is committed (or refused)
  while (done < batch.size()) {
    size_t end = std::min(batch.size(), done + kMaxTransaction);
    counts.clear();
    refused_now = 0;
    bool ok = false;
    {
      sql::Transaction tx(db);
      // The error is read before the rollback replaces it.
      if (!tx.begin_immediate() || write_records(done, end) != SQLITE_OK || !tx.commit())
        out.error = db.error("");
      else
        ok = true;
      // The destructor rolls back whatever did not commit.
    }
    if (!ok) {
      touched.clear();  // it may name rows that were just rolled back
      images.clear();
      break;
    }
    // A session's id exists only once committed.
    for (size_t i = done; i < end; ++i) {
      if (auto* b = std::get_if<Begin>(&batch[i].body)) {
        if (b->rc == SQLITE_OK)
          b->reply.set_value(b->id);
        else
          b->reply.set_value(
              Error{refused_error.err, "cannot record the session in " + path + ": " + refused_error.message});
      }
    }
    out.written += end - done - refused_now;
    out.refused += refused_now;
    if (refused_now) out.error = refused_error;
    done = end;
  }
  out.done = done;
  out.ok = done == batch.size();
  batch.erase(batch.begin(), batch.begin() + static_cast<ptrdiff_t>(done));
  if (!out.ok) {
    // Its caller is waiting: a begin that failed is answered now, also when
    // its part of the batch was never tried, and not retried.
    for (auto& rec : batch)
      if (auto* b = std::get_if<Begin>(&rec.body))
        b->reply.set_value(Error{out.error.err, "cannot record the session in " + path + ": " + out.error.message});
    out.refused += std::erase_if(batch, [](const Record& r) { return std::holds_alternative<Begin>(r.body); });
  }
  return out;
}

void Writer::Impl::run() {
  std::unique_lock lk(mu);
  int failures = 0;  // consecutive
  for (;;) {
    if (pending.empty() && batch.empty()) {
      if (stop) break;
      wake.wait(lk, [&] { return stop || !pending.empty(); });
      continue;
    }
    if (failures == 0) {
      // Let producers fill the batch, unless it is already large or wanted now.
      wake.wait_for(lk, kCommitInterval, [&] { return stop || urgent || pending.size() >= kLargeBatch; });
    } else {
      if (stop && failures >= kShutdownAttempts) break;
      auto delay = std::min<std::chrono::milliseconds>(kRetryFirst * (1 << std::min(failures, 5)), kRetryMax);
      if (stop) delay = kRetryFirst * failures;
      wake.wait_for(lk, delay, [&] { return urgent; });
    }
    urgent = false;
    if (batch.empty()) {
      batch.swap(pending);
    } else {
      batch.insert(batch.end(), std::make_move_iterator(pending.begin()), std::make_move_iterator(pending.end()));
      pending.clear();
    }
    uint64_t through = enqueued;
    size_t taken = batch.size();
    uint64_t attempt = ++attempts;
    lk.unlock();
    Outcome out = write_batch();
    if (wants_checkpoint) checkpoint();
    lk.lock();
    // The batch holds records through-taken+1 .. through, in order.
    committed_through = through - (taken - out.done);
    stats.committed += out.written;
    stats.refused += out.refused;
    if (out.ok) {
      failures = 0;
      if (out.refused) last_error = out.error;
    } else {
      ++failures;
      ++stats.errors;
      failed_attempt = attempt;
      last_error = out.error;
    }
    stats.last_error = last_error.message;
    done.notify_all();
  }
  if (!batch.empty() || !pending.empty()) {
    // Nothing more can be done from here; say so where a human will see it.
    std::cerr << "cottonbox: audit database " << path << ": " << batch.size() + pending.size()
              << " records could not be written: " << last_error.message << "\n";
  }
}

// ----------------------------------------------------------------- Writer --

Writer::Writer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Writer::~Writer() {
  {
    std::lock_guard lk(impl_->mu);
    impl_->stop = true;
    impl_->urgent = true;
  }
  impl_->wake.notify_one();
  impl_->thread.join();
}

namespace {

Result<Ok> write_all(int fd, const std::string& bytes, const std::string& what) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::from_errno("cannot write " + what);
    done += static_cast<size_t>(n);
  }
  // Before anyone can open it: a crash must not leave a named but empty
  // (or zero-filled) database behind.
  if (::fdatasync(fd) != 0) return Error::from_errno("cannot write " + what);
  return Ok{};
}

// A new database appears at `path` whole: written into an unnamed file in
// its directory and linked into place, which fails if another process got
// there first (it then made the same).  Returns false when the file system
// cannot do this (no O_TMPFILE); the caller then fills an empty file in
// place.
Result<bool> install_new_database(const std::string& path, const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  UniqueFd owner(fd);
  auto image = detail::new_database_image();
  if (!image) return image.error();
  if (auto r = write_all(fd, *image, path); !r) return r.error();
  // linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the /proc
  // link works for anyone.
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0 || errno == EEXIST) return true;
  if (errno == ENOENT && ::access(self.c_str(), F_OK) != 0) return false;  // no /proc
  return Error::from_errno("cannot create " + path);
}

}  // namespace

Result<Ok> Writer::create_files(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (slash != std::string::npos && slash > 0)
    if (int e = mkdir_parents(dir); e != 0) return Error::from_errno("cannot create the directory " + dir, e);
  if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT)
    if (auto r = install_new_database(path, dir); !r) return r.error();
  // Also made here rather than by SQLite (where O_TMPFILE is missing) so
  // that it is private from the first byte: SQLite gives -wal and -shm the
  // same mode.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Error::from_errno("cannot open " + path);
  UniqueFd owner(fd);
  // An empty file (made by an older cottonbox, or where O_TMPFILE is
  // missing) is filled in place, by one process: flock, which SQLite does
  // not use, orders the openers.  The others find it full once they hold
  // the lock.
  struct stat st;
  if (::flock(fd, LOCK_SH) != 0 || ::fstat(fd, &st) != 0) return Error::from_errno("cannot lock " + path);
  if (st.st_size == 0) {
    if (::flock(fd, LOCK_EX) != 0 || ::fstat(fd, &st) != 0) return Error::from_errno("cannot lock " + path);
    if (st.st_size == 0) {
      auto image = detail::new_database_image();
      if (!image) return image.error();
      if (auto r = write_all(fd, *image, path); !r) return r.error();
    }
  }
  // Companions are made only beside an audit database (by its header: the
  // magic, and user_version at offset 60); whatever else the file is,
  // open() says so and nothing is left beside it.
  unsigned char head[64] = {};
  ssize_t got = ::pread(fd, head, sizeof head, 0);
  uint32_t version = uint32_t{head[60]} << 24 | uint32_t{head[61]} << 16 | uint32_t{head[62]} << 8 | head[63];
  bool ours = got == sizeof head && memcmp(head, "SQLite format 3", 16) == 0 &&
              (version == 0 || (version >= kOldestUpgradableSchema && version <= kSchemaVersion));
  if (!ours) return Ok{};
  // Empty -wal and -shm files are what SQLite makes of them anyway, and an
  // empty rollback journal is never hot (never played back into the
  // database).  Made by SQLite they would come and go with its connections.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::string f = path + suffix;
    int cfd = ::open(f.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
    if (cfd < 0) return Error::from_errno("cannot create " + f);
    ::close(cfd);
  }
  return Ok{};
}

Result<std::unique_ptr<Writer>> Writer::open(const std::string& path) {
  // Afterwards the file is an audit database in WAL mode with its schema
  // (or something else, which ensure_schema reports).
  if (auto r = create_files(path); !r) return r.error();

  auto db = sql::Database::open(path, SQLITE_OPEN_READWRITE);
  if (!db) return db.error();
  // The busy handler first: every statement below may wait for another
  // opener's lock (one recovering the WAL index as the first connection,
  // or, in a file made elsewhere, switching it to WAL).  Without it,
  // sessions started at once were refused with "database is locked"
  // (issue 21).
  if (auto r = configure(*db); !r) return r.error();
  // Already so for every file create_files made; this is a query then.
  auto mode = db->prepare("PRAGMA journal_mode = WAL");
  if (!mode) return mode.error();
  if (!mode->step() || mode->column_bytes(0) != "wal")
    return Error{0, "cannot switch " + path + " to WAL mode (is it on a network file system?)"};
  mode->reset();
  // The writer appends: the pages it touches are the last of each table and
  // index, so 2 MiB of cache commits as fast as 4 MiB did (bench_store), and
  // the supervisor stays well under its 30 MB.
  for (const char* pragma : {"PRAGMA cache_size = -2048", "PRAGMA temp_store = MEMORY"})
    if (auto r = db->exec(pragma); !r) return r.error();
  if (auto r = detail::ensure_schema(*db, path, /*create=*/true); !r) return r.error();

  auto impl = std::make_unique<Impl>(path, std::move(*db));
  if (auto r = impl->prepare(); !r) return r.error();
  if (auto r = impl->abort_stale_sessions(); !r) return r.error();

  // Called on the writer thread as each commit ends; the checkpointer is
  // woken (or made) once that commit's batch is done.
  sqlite3_wal_hook(
      impl->db.get(),
      [](void* p, sqlite3*, const char*, int pages) {
        if (pages >= kCheckpointPages) static_cast<Impl*>(p)->wants_checkpoint = true;
        return SQLITE_OK;
      },
      impl.get());

  impl->pending.reserve(kLargeBatch);
  impl->batch.reserve(kLargeBatch);
  impl->thread = std::thread([p = impl.get()] {
    pthread_setname_np(pthread_self(), "cb-audit");  // for top -H and perf
    p->run();
  });
  return std::unique_ptr<Writer>(new Writer(std::move(impl)));
}

Result<int64_t> Writer::begin_session(const SessionStart& s) {
  Begin b{std::make_unique<SessionStart>(s), {}};
  auto reply = b.reply.get_future();
  impl_->enqueue(0, std::move(b), /*now=*/true);
  return reply.get();
}

void Writer::add_process(int64_t session, ProcessRow p) { impl_->enqueue(session, std::move(p)); }
void Writer::exec_process(int64_t session, ProcessExec e) { impl_->enqueue(session, std::move(e)); }
void Writer::exit_process(int64_t session, ProcessExit e) { impl_->enqueue(session, e); }
void Writer::add_event(int64_t session, EventRow e) { impl_->enqueue(session, std::move(e)); }
void Writer::add_approval(int64_t session, ApprovalRow a) { impl_->enqueue(session, std::move(a)); }
void Writer::add_lookup(int64_t session, LookupRow l) { impl_->enqueue(session, std::move(l)); }
void Writer::add_degraded(int64_t session, std::string reason) { impl_->enqueue(session, Degraded{std::move(reason)}); }
void Writer::set_events_lost(int64_t session, uint64_t lost) { impl_->enqueue(session, EventsLost{lost}); }

Result<Ok> Writer::flush() {
  Impl& m = *impl_;
  std::unique_lock lk(m.mu);
  uint64_t target = m.enqueued;
  if (m.committed_through >= target) return Ok{};
  // Only an attempt that starts after this call covers everything queued
  // before it; one already under way may fail for a reason that is gone.
  uint64_t started = m.attempts;
  m.urgent = true;
  m.wake.notify_one();
  m.done.wait(lk, [&] { return m.committed_through >= target || m.failed_attempt > started; });
  if (m.committed_through >= target) return Ok{};
  return Error{m.last_error.err,
               "audit database " + m.path + ": " + m.last_error.message + "; the records are kept and retried"};
}

Result<Ok> Writer::end_session(int64_t session, const SessionEnd& e) {
  impl_->enqueue(session, End{e});
  return flush();
}

WriterStats Writer::stats() const {
  std::lock_guard lk(impl_->mu);
  WriterStats s = impl_->stats;
  s.queued = impl_->enqueued;
  s.backlog = impl_->enqueued - impl_->committed_through;
  return s;
}

const std::string& Writer::path() const { return impl_->path; }

std::string default_db_path() {
  // XDG: a relative $XDG_DATA_HOME is invalid and must be ignored.
  if (const char* x = std::getenv("XDG_DATA_HOME"); x && x[0] == '/') return std::string(x) + "/cottonbox/audit.db";
  std::string home;
  if (const char* h = std::getenv("HOME"); h && h[0]) {
    home = h;
  } else {
    // Under sudo -H or a service manager HOME may be unset.
    struct passwd pw, *found = nullptr;
    char buf[4096];
    if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found) home = pw.pw_dir;
  }
  return home + "/.local/share/cottonbox/audit.db";
}

}  // namespace cb::db
