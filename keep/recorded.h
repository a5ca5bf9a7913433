// A recorded session's changes and their undo, as `cottonbox changes|undo`
// and the GUI's Changes tab see them: the audit database (its processes and
// file events) and the keep store beside it (the session's journal), joined
// by build_history() (history.h).  The one place that reads both, so that
// the CLI and the GUI plan the same undo with the same conflict rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "keep/history.h"
#include "keep/plan.h"
#include "keep/restore.h"
#include "keep/store.h"

namespace cb::keep {

struct RecordedSession {
  std::string db_path;
  db::SessionSummary summary;
  CommandTable commands;
  History history;
  std::string store_dir;
  std::optional<Store> store;  // absent: no keep store beside the database
  bool journal = false;        // the session has a journal in the store
};

// Reads session `id` from `reader` and its journal from the store beside
// the database.  A missing store or journal is no error: every change is
// then one the keeper did not see.
Result<RecordedSession> load_session(db::Reader& reader, int64_t id);

// The audit rows load_session() joins, as plain structs (exposed for tests).
std::vector<AuditEvent> audit_events(const std::vector<db::StoredEvent>& events);
std::vector<AuditProcess> audit_processes(const std::vector<db::StoredProcess>& processes);

// A command's first process as a line for people: its argv, else its comm.
std::vector<std::string> command_argv(const RecordedSession& s, uint64_t command);

// What `command` changed at `path` as the undo of that command alone would
// see it: the state to bring back, and what the command left (for a
// preview); nullopt when the command did not change the path.
std::optional<Candidate> candidate_for(const RecordedSession& s, uint64_t command, const std::string& path);

// The kept content of `previous` (a regular file's), at most `limit` bytes;
// an error says why there is none (not kept, not a file, too large).
Result<std::string> read_kept(const RecordedSession& s, const Snapshot& previous, uint64_t limit);

struct UndoRequest {
  std::optional<uint64_t> command;  // --command N
  std::string path_glob;            // --path, absolute ("" : every path)
  bool dry_run = false;
  bool force = false;
  bool created = false;
};

// Compiles --path: a relative pattern is taken from `cwd`, and a pattern
// without wildcards names a path and everything below it.
Result<Selection> selection_for(const UndoRequest& request);
std::string absolute_glob(std::string_view pattern, std::string_view cwd);

// Plans the undo and, unless a dry run, carries it out.  Refused (an error)
// for a session that is still running.
Result<UndoReport> undo_session(const RecordedSession& s, const UndoRequest& request);

// Appends a carried-out undo to the audit database's undos table.
Result<int64_t> record_undo(const RecordedSession& s, const UndoRequest& request, const UndoReport& report);

// Whether anything was refused: a conflict, a change not kept, a failure
// (what `cottonbox undo` says with exit status 1).  Created files left
// without --created are not refused.
bool anything_refused(const UndoReport& report);

}  // namespace cb::keep
