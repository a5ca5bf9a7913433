// The undo planner: pure decisions on plain structs, no filesystem.
//
// select_changes() turns a session's journal into one Candidate per path:
// the state to bring back (before the first selected change) and the state
// the selected changes left (the next record's previous state, or the
// session-end record).  decide() compares that with what is there now:
//   nothing    it is already as it was before
//   restore    it is as the session left it: bring the previous state back
//   conflict   it changed after the session (or another command changed it
//              between the selected ones): refused unless --force
//   cannot     the previous content was not kept (the record says why)
//   remove / skip-created   a file the session created: removed only with --created
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "keep/types.h"

namespace cb::keep {

struct Selection {
  std::set<uint64_t> commands;                         // empty: every command
  std::function<bool(std::string_view path)> matches;  // empty: every path
};

struct Candidate {
  std::string path;
  // The state to bring back: the first selected record's metadata, with the
  // content of the first record from there on that kept content.  Type
  // Absent: the session created the path.
  Snapshot previous;
  bool metadata_only = false;      // no content change since: only the metadata comes back
  std::string cannot;              // non-empty: the previous state was not kept, and why
  Fingerprint expected;            // what the selected changes left; known=false: nobody recorded it
  std::string interleaved;         // non-empty: another command changed it between the selected ones
  std::vector<uint64_t> commands;  // the selected commands that changed it
};

std::vector<Candidate> select_changes(const std::vector<Snapshot>& records, const std::vector<Left>& left,
                                      const Selection& selection);

// One line of `cottonbox changes`: what one command did to one path.
struct ChangeLine {
  uint64_t command = 0;
  std::string path;
  std::vector<Op> ops;                 // in order
  FileType before = FileType::Absent;  // Absent: the command created it
  bool undoable = false;
  std::string reason;  // why it cannot be undone
};

// The session's changes grouped by command (commands in the order of their
// first change, paths sorted within a command).  The records of a
// directory's times (Op::Entries) are left out: they come back with the
// entries, they are no change of their own to the user.
std::vector<ChangeLine> list_changes(const std::vector<Snapshot>& records);

enum class Action { Restore, Remove, Nothing, Conflict, Cannot, SkipCreated };
std::string_view action_name(Action a);

struct PlanOptions {
  bool force = false;    // restore over a conflict
  bool created = false;  // remove what the session created
};

struct Step {
  Candidate candidate;
  Fingerprint current;
  Action action = Action::Nothing;
  bool forced = false;  // a conflict overridden by --force
  std::string reason;   // for the user: why this action
};

// Whether two states are the same for undo's purpose: type, mode, owner,
// and for a regular file its content (by hash when both have one, else by
// inode, size and mtime), for a symlink its target.  `why` says how they differ.
bool same_state(const Fingerprint& a, const Fingerprint& b, std::string* why = nullptr);

Step decide(const Candidate& c, const Fingerprint& current, const PlanOptions& options);

// Decides every candidate (`current[i]` is candidate i's state now) and puts
// the steps in the order they must be applied: directories to bring back,
// shallow first; then the other restores; then removals, deepest first.
std::vector<Step> plan(const std::vector<Candidate>& candidates, const std::vector<Fingerprint>& current,
                       const PlanOptions& options);

}  // namespace cb::keep
