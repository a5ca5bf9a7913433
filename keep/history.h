// A session's history for `cottonbox changes` and `undo`: the keep journal
// joined with the audit trail.  Pure: the audit rows come in as plain
// structs (commands/undo.cpp reads them from the database), nothing here
// touches a file.
//
// How a keep record is tied to the audit trail.  The supervisor opens the
// keeper with the session's uuid (sessions.uuid: the journal is
// journal/<uuid>.log, so that two databases sharing a directory, or a
// database moved aside and started anew, never share a journal), and passes
// per keep, in keep::Context:
//   event  the EventRow's seq (events.seq: session-unique, known before the
//          row is written; approvals use it too)
//   proc   the acting process's proc_id (events.proc_id, processes.proc_id)
//   ts_ns  the event's time (events.ts_ns)
//   command  optional: 0 lets the reader derive it (below)
// The journal's K records have had these fields since its first format.
//
// What a command is.  The session's root process is the one the supervisor
// started (parent_proc_id 0; the smallest proc_id if several say so).  A
// command is a child of the root (a process the agent started directly: a
// tool call, one `bash -c` of a coding agent) with everything below it, and
// its number is that child's proc_id.  The root's own changes (an agent
// editing files itself) form a command of their own, numbered with the
// root's proc_id.  A process whose chain of parents is broken (a parent
// not recorded) counts to its topmost known ancestor; a change whose
// process is not known keeps the command the journal recorded (0: unknown).
//
// What is joined.  Every keep record, plus the audit events that changed
// files and have no keep record for the same event and path:
//   file.create, file.link (a new name)  the path did not exist: a create
//   file.rename                          a move (see below)
//   file.delete, file.truncate, file.write, file.attr
//                                         a change that was not kept ("no keep
//                                         record": outside the kept
//                                         directories, or keeping off)
// Only events that were allowed and did not fail (errno 0, or not known)
// count; writes to /dev, /proc and /sys are no changes to files.
//
// Renames.  A rename's destination, when it existed, is a keep record
// (rename-over) like any other destroyed file.  The moved inode itself is
// not copied: undo moves it back (destination -> source), in the reverse
// order of the renames, when the source existed before the session.  A
// rename whose source the session had created (sed -i's temporary file, an
// editor's save) is not moved back: its destination counts as created, or
// replaced when it has a rename-over record.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "keep/journal.h"
#include "keep/types.h"
#include "policy/event.h"

namespace cb::keep {

struct AuditProcess {
  uint64_t proc_id = 0;
  uint64_t parent = 0;  // 0: the root, or not known
  int32_t pid = 0;
  std::string comm;
  std::vector<std::string> argv;
  int64_t started_ns = 0;
};

struct AuditEvent {
  uint64_t seq = 0;
  int64_t ts_ns = 0;
  uint64_t proc = 0;
  cb::Action action = cb::Action::FileWrite;
  std::string syscall;
  std::string path;
  std::string target;
  uint64_t flags = 0;
  bool is_dir = false;
  bool allowed = true;
  int32_t result_errno = -1;  // 0 success, >0 failed, -1 not known
};

class CommandTable {
 public:
  CommandTable() = default;
  explicit CommandTable(const std::vector<AuditProcess>& processes);

  uint64_t root() const { return root_; }
  bool knows(uint64_t proc) const { return procs_.count(proc) > 0; }
  // The command `proc` belongs to (see above); 0 when `proc` is not known.
  uint64_t command_of(uint64_t proc) const;
  const AuditProcess* process(uint64_t proc) const;

 private:
  std::map<uint64_t, AuditProcess> procs_;
  uint64_t root_ = 0;
};

struct Rename {
  uint64_t seq = 0;  // position in History's order (after the records of the same event)
  uint64_t event = 0;
  int64_t ts_ns = 0;
  uint64_t command = 0;
  uint64_t proc = 0;
  std::string from, to;
  bool is_dir = false;
  bool exchange = false;   // RENAME_EXCHANGE: the two swapped
  bool move_back = false;  // the source existed before the session: undo moves it back
};

struct History {
  // Keep records and the records made from audit events, in the session's
  // order, `seq` renumbered from 1, `command` resolved.
  std::vector<Snapshot> records;
  std::vector<Left> left;
  std::vector<Rename> renames;  // successful renames, in order
  size_t damaged_records = 0;   // journal lines skipped
};

// The reason given for changes the audit trail saw and the keeper did not.
constexpr const char* kNoKeepRecord = "no keep record (outside the kept directories, or keeping was off)";

// Joins a journal (empty when the session has none) with the session's
// audit events and processes.
History build_history(const Parsed& journal, const std::vector<AuditEvent>& events, const CommandTable& commands);

}  // namespace cb::keep
