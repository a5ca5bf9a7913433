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
//   move-back  a rename of a file that existed before the session: moved
//              back (history.h), refused when something is in the way
//
// When a state the session left was not recorded (a file the keeper never
// saw: a create, a rename's destination; or a session that crashed), a file
// counts as left by the session when its mtime is not later than the
// session's end (PlanOptions::session_end_ns).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "keep/history.h"
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
  uint64_t first_seq = 0;          // the first selected record's (or the rename's) place in the session

  // A move back (a rename undone): `path` is where the session moved it,
  // `move_to` where it was; previous.type says whether a directory moved.
  bool move_back = false;
  std::string move_to;
  bool exchange = false;  // RENAME_EXCHANGE: swapped back
};

std::vector<Candidate> select_changes(const std::vector<Snapshot>& records, const std::vector<Left>& left,
                                      const Selection& selection);
// The same over a whole history, with the renames to move back.
std::vector<Candidate> select_changes(const History& history, const Selection& selection);

// How a change is undone.
enum class Undo {
  Restore,   // its previous state was kept: undo restores it
  MoveBack,  // a rename: undo moves it back
  Created,   // the command created it: undo --created removes it
  Cannot,    // not kept: `reason` says why
};
std::string_view undo_name(Undo u);

// One line of `cottonbox changes`: what one command did to one path.
struct ChangeLine {
  uint64_t command = 0;
  std::string path;
  std::string target;                  // a rename: where it went
  std::vector<Op> ops;                 // in order; empty for a rename
  FileType before = FileType::Absent;  // Absent: the command created it
  Undo undo = Undo::Cannot;
  bool undoable = false;  // Restore, MoveBack, Created
  std::string reason;     // why it cannot be undone
};

// The session's changes grouped by command (commands in the order of their
// first change, paths sorted within a command; a command's renames after
// its other lines, in order).  The records of a directory's times
// (Op::Entries) are left out: they come back with the entries, they are no
// change of their own to the user; so are files a command created and
// removed again (a temporary file, sed -i's before its rename).
std::vector<ChangeLine> list_changes(const History& history);
// A line's changes in words ("truncated", "deleted", "mode", "renamed"...),
// each once, in order; and its Undo as `changes` says it ("kept", "moves
// back", "created", "not kept").
std::string_view op_word(Op o);
std::vector<std::string> change_words(const ChangeLine& line);
std::string_view undo_words(Undo u);
std::vector<ChangeLine> list_changes(const std::vector<Snapshot>& records);

enum class Action { Restore, Remove, MoveBack, Nothing, Conflict, Cannot, SkipCreated };
std::string_view action_name(Action a);

struct PlanOptions {
  bool force = false;          // restore over a conflict
  bool created = false;        // remove what the session created
  int64_t session_end_ns = 0;  // see above; 0: not known
};

struct Step {
  Candidate candidate;
  Fingerprint current;       // at candidate.path
  Fingerprint current_dest;  // a move back: at candidate.move_to
  Action action = Action::Nothing;
  bool forced = false;  // a conflict overridden by --force
  std::string reason;   // for the user: why this action
  // A step before this one puts candidate.path in place (a restore, or a
  // move back of a later rename): the applier checks its type only.
  bool after_earlier = false;
};

// Whether two states are the same for undo's purpose: type, mode, owner,
// and for a regular file its content (by hash when both have one, else by
// inode, size and mtime), for a symlink its target.  `why` says how they differ.
bool same_state(const Fingerprint& a, const Fingerprint& b, std::string* why = nullptr);

Step decide(const Candidate& c, const Fingerprint& current, const PlanOptions& options);

// Decides every candidate (`current[i]` is candidate i's state now,
// `current_dest[i]` the state at a move back's destination) and puts the
// steps in the order they must be applied: directories to bring back,
// shallow first; then the other restores; then removals, deepest first.
// Renames split this order: what changed at or below a rename's ends (or
// in a directory above its source) after the rename is undone first, in
// that order; then the moves back, latest first; then everything else.
std::vector<Step> plan(const std::vector<Candidate>& candidates, const std::vector<Fingerprint>& current,
                       const PlanOptions& options, const std::vector<Fingerprint>& current_dest = {});

}  // namespace cb::keep
