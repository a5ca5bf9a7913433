// A thin owning layer over the SQLite C API, shaped after Chromium's sql/:
// a move-only Statement with typed binds and a Transaction that rolls back
// unless committed.  Private to cb_db.
//
// Not thread-safe: a Database and its Statements belong to one thread at a
// time (the writer thread, or a Reader's caller).
//
// Indices follow SQLite: bind parameters are 1-based (?1, ?2, ...), result
// columns are 0-based.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"

namespace cb::db::sql {

template <auto F>
struct Deleter {
  void operator()(auto* p) const { F(p); }
};
using DbPtr = std::unique_ptr<sqlite3, Deleter<sqlite3_close_v2>>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, Deleter<sqlite3_finalize>>;

// A failure code is "transient" when the same work may succeed later (disk
// full, file too large, locked by another writer): the writer keeps the batch
// and retries.  Anything else concerns one record.
bool is_transient(int rc);

class Statement {
 public:
  Statement() = default;
  explicit Statement(StmtPtr s) : stmt_(std::move(s)) {}
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool is_valid() const { return stmt_ != nullptr; }

  // Text and blob binds do not copy: the bytes must stay alive until the
  // statement is reset.  Empty values bind as empty, not NULL; use the
  // *_or_null variants where an empty string means "none".
  void bind_null(int i);
  void bind_int(int i, int32_t v);
  void bind_int64(int i, int64_t v);
  void bind_uint64(int i, uint64_t v);  // stored bit-for-bit as INTEGER
  void bind_bool(int i, bool v);
  void bind_text(int i, std::string_view v);
  void bind_blob(int i, std::string_view v);
  void bind_text_or_null(int i, std::string_view v);
  void bind_blob_or_null(int i, std::string_view v);
  // Traps for the implicit conversions that compile silently otherwise.
  void bind_int(int i, int64_t v) = delete;   // use bind_int64()
  void bind_int(int i, uint64_t v) = delete;  // use bind_uint64()
  template <typename T>
  void bind_bool(int i, T v) = delete;  // only a real bool: a pointer converts too

  // True when a row is available; false when done or failed (see rc()).
  bool step();
  // Steps a statement that returns no rows; true on success.
  bool run();
  bool succeeded() const { return rc_ == SQLITE_DONE || rc_ == SQLITE_ROW; }
  int rc() const { return rc_; }
  // Ready to run again; bindings are kept.
  void reset();

  bool column_is_null(int c) const;
  int32_t column_int(int c) const;
  int64_t column_int64(int c) const;
  uint64_t column_uint64(int c) const;
  bool column_bool(int c) const;
  // The exact bytes of a TEXT or BLOB column ("" for NULL).
  std::string column_bytes(int c) const;

  sqlite3_stmt* get() const { return stmt_.get(); }

 private:
  StmtPtr stmt_;
  int rc_ = SQLITE_OK;
};

class Database {
 public:
  // flags: SQLITE_OPEN_* (NOMUTEX is added: see the thread note above).
  static Result<Database> open(const std::string& path, int flags);

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();  // closes the connection before the busy handler's state goes

  // When another connection holds a lock this one needs, wait for it with
  // doubling, jittered sleeps (1 ms up to kBusySleepMax) for at most
  // `budget` per statement, then fail with SQLITE_BUSY.  SQLite's own
  // busy_timeout sleeps on a fixed schedule that grows to 100 ms: many
  // processes started at once wake together, and a waiter on its long
  // sleep keeps losing the lock to newcomers on short ones.  Set it before
  // the first statement: even reading the schema may wait (for a
  // connection that is switching the file to WAL or recovering its index).
  void wait_when_busy(std::chrono::milliseconds budget);
  struct Busy;  // the handler's state (sqlite.cpp)

  Result<Ok> exec(const char* sql);
  // persistent: a statement kept for the connection's lifetime.
  Result<Statement> prepare(std::string_view sql, bool persistent = false);
  // The integer result of a one-row, one-column query ("PRAGMA user_version").
  Result<int64_t> query_int(const char* sql);

  // An Error describing the connection's last failure: "<what>: <SQLite's
  // message> (<strerror>)", or without "<what>: " when it is empty.
  // Error::err is the OS errno when SQLite saw one (ENOSPC, EFBIG), else 0.
  Error error(std::string_view what) const;
  int64_t last_insert_rowid() const;
  bool in_transaction() const;
  sqlite3* get() const { return db_.get(); }

 private:
  explicit Database(DbPtr db);
  DbPtr db_;
  std::unique_ptr<Busy> busy_;  // the busy handler's state; its address stays put when moved
};

// The longest single sleep of the busy handler: a lock held for a commit is
// held for well under this, so a waiter looks again soon after it is free.
constexpr std::chrono::milliseconds kBusySleepMax{16};

class Transaction {
 public:
  explicit Transaction(Database& db) : db_(&db) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // IMMEDIATE takes the write lock now, so a writer never meets
  // SQLITE_BUSY_SNAPSHOT halfway through a batch.
  Result<Ok> begin_immediate();
  Result<Ok> begin();  // deferred, for consistent multi-statement reads
  Result<Ok> commit();
  // Explicit rollback; the destructor does the same if commit() was not reached.
  void rollback();

 private:
  Database* db_;
  bool active_ = false;
};

}  // namespace cb::db::sql
