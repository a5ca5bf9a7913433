#include "db/sqlite.h"

#include <sys/random.h>
#include <time.h>

#include <algorithm>
#include <cstring>

namespace cb::db::sql {

bool is_transient(int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:   // ENOSPC, or the database hit max_page_count
    case SQLITE_IOERR:  // EFBIG (RLIMIT_FSIZE), EIO, a quota
    case SQLITE_BUSY:   // another writer held the lock past busy_timeout
    case SQLITE_LOCKED:
    case SQLITE_NOMEM:
    case SQLITE_READONLY:  // e.g. the file was made read-only under us
    case SQLITE_CANTOPEN:  // the -wal or -shm could not be (re)opened
    case SQLITE_PROTOCOL:
    case SQLITE_INTERRUPT: return true;
    default: return false;
  }
}

// ------------------------------------------------------------- Statement --

void Statement::bind_null(int i) { sqlite3_bind_null(stmt_.get(), i); }
void Statement::bind_int(int i, int32_t v) { sqlite3_bind_int(stmt_.get(), i, v); }
void Statement::bind_int64(int i, int64_t v) { sqlite3_bind_int64(stmt_.get(), i, v); }
void Statement::bind_uint64(int i, uint64_t v) { sqlite3_bind_int64(stmt_.get(), i, static_cast<int64_t>(v)); }
void Statement::bind_bool(int i, bool v) { sqlite3_bind_int(stmt_.get(), i, v ? 1 : 0); }

void Statement::bind_text(int i, std::string_view v) {
  // A non-null pointer even for "": a null one would bind NULL.
  sqlite3_bind_text64(stmt_.get(), i, v.empty() ? "" : v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
}

void Statement::bind_blob(int i, std::string_view v) {
  if (v.empty())
    sqlite3_bind_zeroblob(stmt_.get(), i, 0);
  else
    sqlite3_bind_blob64(stmt_.get(), i, v.data(), v.size(), SQLITE_STATIC);
}

void Statement::bind_text_or_null(int i, std::string_view v) {
  if (v.empty())
    bind_null(i);
  else
    bind_text(i, v);
}

void Statement::bind_blob_or_null(int i, std::string_view v) {
  if (v.empty())
    bind_null(i);
  else
    bind_blob(i, v);
}

bool Statement::step() {
  rc_ = sqlite3_step(stmt_.get());
  return rc_ == SQLITE_ROW;
}

bool Statement::run() {
  step();
  bool ok = rc_ == SQLITE_DONE;
  // Reset now: a finished statement keeps its read transaction open otherwise.
  sqlite3_reset(stmt_.get());
  return ok;
}

void Statement::reset() { sqlite3_reset(stmt_.get()); }

bool Statement::column_is_null(int c) const { return sqlite3_column_type(stmt_.get(), c) == SQLITE_NULL; }
int32_t Statement::column_int(int c) const { return sqlite3_column_int(stmt_.get(), c); }
int64_t Statement::column_int64(int c) const { return sqlite3_column_int64(stmt_.get(), c); }
uint64_t Statement::column_uint64(int c) const { return static_cast<uint64_t>(sqlite3_column_int64(stmt_.get(), c)); }
bool Statement::column_bool(int c) const { return sqlite3_column_int(stmt_.get(), c) != 0; }

std::string Statement::column_bytes(int c) const {
  // column_blob() first, then column_bytes(): the order SQLite documents as
  // free of conversions.
  const void* p = sqlite3_column_blob(stmt_.get(), c);
  int n = sqlite3_column_bytes(stmt_.get(), c);
  if (p == nullptr || n <= 0) return {};
  return std::string(static_cast<const char*>(p), static_cast<size_t>(n));
}

// -------------------------------------------------------------- Database --

struct Database::Busy {
  int64_t budget_ns = 0;
  int64_t since_ns = 0;  // when the current wait began
  uint64_t rng = 0;      // xorshift64 state, never 0
};

namespace {

int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// SQLite calls this each time a lock it needs is held elsewhere; `count` is
// 0 on the first call of a wait.  Returns 0 to give up (SQLITE_BUSY).
int on_busy(void* arg, int count) {
  auto* b = static_cast<Database::Busy*>(arg);
  int64_t now = monotonic_ns();
  if (count == 0) b->since_ns = now;
  int64_t left = b->budget_ns - (now - b->since_ns);
  if (left <= 0) return 0;
  // Doubling from 1 ms to the cap, each sleep scaled by a random factor in
  // [0.5, 1.5): waiters started together spread out instead of waking in step.
  int64_t base =
      std::min<int64_t>(int64_t{1'000'000} << std::min(count, 10), std::chrono::nanoseconds(kBusySleepMax).count());
  b->rng ^= b->rng << 13, b->rng ^= b->rng >> 7, b->rng ^= b->rng << 17;
  int64_t sleep = base / 2 + static_cast<int64_t>(b->rng % static_cast<uint64_t>(base));
  sleep = std::min(sleep, left);
  timespec ts{static_cast<time_t>(sleep / 1'000'000'000), static_cast<long>(sleep % 1'000'000'000)};
  nanosleep(&ts, nullptr);
  return 1;
}

}  // namespace

Database::Database(DbPtr db) : db_(std::move(db)) {}

Database::Database(Database&& o) noexcept = default;

Database& Database::operator=(Database&& o) noexcept {
  db_.reset();  // its busy handler may run while it closes
  busy_ = std::move(o.busy_);
  db_ = std::move(o.db_);
  return *this;
}

Database::~Database() { db_.reset(); }

void Database::wait_when_busy(std::chrono::milliseconds budget) {
  if (!busy_) {
    busy_ = std::make_unique<Busy>();
    if (getrandom(&busy_->rng, sizeof busy_->rng, GRND_NONBLOCK) != sizeof busy_->rng)
      busy_->rng = static_cast<uint64_t>(monotonic_ns());
    busy_->rng |= 1;
  }
  busy_->budget_ns = std::chrono::nanoseconds(budget).count();
  sqlite3_busy_handler(db_.get(), on_busy, busy_.get());
}

Result<Database> Database::open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  DbPtr db(raw);  // a handle is returned even on failure, and must be closed
  if (rc != SQLITE_OK) {
    int err = raw ? sqlite3_system_errno(raw) : 0;
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    if (err != 0) msg += std::string(" (") + std::strerror(err) + ")";
    return Error{err, "cannot open " + path + ": " + msg};
  }
  sqlite3_extended_result_codes(raw, 1);
  return Database(std::move(db));
}

Result<Ok> Database::exec(const char* sql) {
  if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr) != SQLITE_OK) return error(sql);
  return Ok{};
}

Result<Statement> Database::prepare(std::string_view sql, bool persistent) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()),
                              persistent ? SQLITE_PREPARE_PERSISTENT : 0, &raw, nullptr);
  StmtPtr stmt(raw);
  if (rc != SQLITE_OK) return error("preparing \"" + std::string(sql.substr(0, 60)) + "\"");
  return Statement(std::move(stmt));
}

Result<int64_t> Database::query_int(const char* sql) {
  auto s = prepare(sql);
  if (!s) return s.error();
  if (!s->step()) return error(sql);
  return s->column_int64(0);
}

Error Database::error(std::string_view what) const {
  int rc = sqlite3_extended_errcode(db_.get());
  int err = 0;
  int primary = rc & 0xff;
  if (primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN) {
    err = sqlite3_system_errno(db_.get());
    // That is the thread's errno when SQLite gave up, often overwritten by
    // its cleanup; the files keep their own last errno.  A write that failed
    // in WAL mode failed on the WAL file, which is the "journal" here.
    if (err == 0) sqlite3_file_control(db_.get(), "main", SQLITE_FCNTL_LAST_ERRNO, &err);
    sqlite3_file* wal = nullptr;
    if (err == 0 && sqlite3_file_control(db_.get(), "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal) == SQLITE_OK && wal &&
        wal->pMethods)
      wal->pMethods->xFileControl(wal, SQLITE_FCNTL_LAST_ERRNO, &err);
  }
  std::string msg = what.empty() ? sqlite3_errmsg(db_.get()) : std::string(what) + ": " + sqlite3_errmsg(db_.get());
  if (err != 0) msg += std::string(" (") + std::strerror(err) + ")";
  // SQLITE_FULL without an errno is still "no space" to the user.
  if (err == 0 && primary == SQLITE_FULL) err = ENOSPC;
  return Error{err, std::move(msg)};
}

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_.get()); }

bool Database::in_transaction() const { return sqlite3_get_autocommit(db_.get()) == 0; }

// ----------------------------------------------------------- Transaction --

Transaction::~Transaction() {
  if (active_) rollback();
}

Result<Ok> Transaction::begin_immediate() {
  auto r = db_->exec("BEGIN IMMEDIATE");
  active_ = r.ok();
  return r;
}

Result<Ok> Transaction::begin() {
  auto r = db_->exec("BEGIN");
  active_ = r.ok();
  return r;
}

Result<Ok> Transaction::commit() {
  auto r = db_->exec("COMMIT");
  // A failed COMMIT (SQLITE_BUSY) leaves the transaction open; after an I/O
  // error SQLite may already have rolled it back.  Either way the rollback in
  // rollback() is what brings the connection back to a usable state.
  if (r.ok()) active_ = false;
  return r;
}

void Transaction::rollback() {
  active_ = false;
  if (db_->in_transaction()) sqlite3_exec(db_->get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

}  // namespace cb::db::sql
