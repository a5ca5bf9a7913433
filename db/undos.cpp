// record_undo(): `cottonbox undo` appends its run to the undos table, on a
// connection of its own (the Writer is the supervisor's, for a session).
#include <sys/stat.h>

#include "db/schema.h"
#include "db/sqlite.h"
#include "db/store.h"

namespace cb::db {

Result<int64_t> record_undo(const std::string& path, const UndoRun& run) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return Error::from_errno("cannot open " + path);
  auto db = sql::Database::open(path, SQLITE_OPEN_READWRITE);
  if (!db) return db.error();
  db->wait_when_busy(detail::kReaderBusy);
  // As the supervisor's connections do: the -wal and -shm files stay (a
  // live session guards them by path).
  int persist = 1;
  sqlite3_file_control(db->get(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
  if (auto r = detail::ensure_schema(*db, path, /*create=*/true); !r) return r.error();

  sql::Transaction tx(*db);
  if (auto r = tx.begin_immediate(); !r) return r.error();
  auto next = db->query_int("SELECT coalesce(max(undo_id), 0) + 1 FROM undos");
  if (!next) return next.error();
  auto ins = db->prepare(
      "INSERT INTO undos (undo_id, session, ts_ns, uid, user, command, path_glob, force, created, path, target,"
      " action, done, forced, reason, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
      " ?15, ?16)");
  if (!ins) return ins.error();
  ins->bind_int64(1, *next);
  ins->bind_int64(2, run.session);
  ins->bind_int64(3, run.ts_ns);
  ins->bind_int64(4, run.uid);
  ins->bind_text(5, run.user);
  if (run.command)
    ins->bind_uint64(6, *run.command);
  else
    ins->bind_null(6);
  ins->bind_blob_or_null(7, run.path_glob);
  ins->bind_bool(8, run.force);
  ins->bind_bool(9, run.created);
  auto put = [&](const UndoFile* f) -> Result<Ok> {
    std::string notes = f ? detail::encode_string_array(f->notes) : "[]";
    if (f) {
      ins->bind_blob(10, f->path);
      ins->bind_blob_or_null(11, f->target);
      ins->bind_text(12, f->action);
      ins->bind_bool(13, f->done);
      ins->bind_bool(14, f->forced);
      ins->bind_text_or_null(15, f->reason);
    } else {
      for (int i = 10; i <= 12; ++i) ins->bind_null(i);
      ins->bind_bool(13, false);
      ins->bind_bool(14, false);
      ins->bind_null(15);
    }
    ins->bind_text(16, notes);
    if (!ins->run()) return db->error("recording the undo in " + path);
    ins->reset();
    return Ok{};
  };
  if (run.files.empty()) {
    if (auto r = put(nullptr); !r) return r.error();
  }
  for (const UndoFile& f : run.files)
    if (auto r = put(&f); !r) return r.error();
  if (auto r = tx.commit(); !r) return r.error();
  return *next;
}

}  // namespace cb::db
