// The restore engine's I/O: reads what is there now for the planner
// (plan.h), and carries out a plan.  A file comes back as a copy (a reflink
// where the filesystem has one) of its kept object, made beside the target
// under a temporary name with its owner, xattrs, mode and times, and then
// renamed into place: nobody sees it half-made, and the store's object stays
// the store's (a link back would share the inode with the restored file).
// Directories removed along the way are made again, with their recorded
// metadata; their times are set last, once nothing more is added to them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "keep/plan.h"
#include "keep/store.h"

namespace cb::keep {

// Reads the current state of each candidate's path (and a move back's
// destination), hashing regular files and a kept object whose hash is not
// known yet when the sizes agree, and plans.  Changes nothing.
Result<std::vector<Step>> prepare(const Store& store, const std::vector<Candidate>& candidates,
                                  const PlanOptions& options);
// The same without a store (none beside the database): what needs no kept
// content (moves back, removals, metadata) can still be done.
Result<std::vector<Step>> prepare(const Store* store, const std::vector<Candidate>& candidates,
                                  const PlanOptions& options);

struct Outcome {
  std::string path;
  std::string target;               // a move back: where it went
  Action action = Action::Nothing;  // what the plan said
  bool done = false;                // carried out (Restore, Remove) as planned
  std::string error;                // why not, when a Restore or Remove failed
  std::vector<std::string> notes;   // what is not exact (an owner or an xattr not set, a parent made anew)
};

struct ApplyReport {
  std::vector<Outcome> outcomes;  // one per step, in the plan's order
  size_t restored = 0, removed = 0, moved_back = 0, nothing = 0, conflicts = 0, cannot = 0, skipped = 0, failed = 0;
};

// Carries out `steps` (from prepare()).  Before touching a path it checks
// that it is still in the state the plan saw: one changed meanwhile fails
// as a conflict.  Holds the store's lock shared, so that gc waits.
ApplyReport apply(const Store& store, const std::vector<Step>& steps);
ApplyReport apply(const Store* store, const std::vector<Step>& steps);

struct UndoOptions {
  Selection selection;
  PlanOptions plan;
  bool dry_run = false;
};

struct UndoReport {
  std::vector<Step> steps;
  ApplyReport applied;  // empty on a dry run
  size_t damaged_records = 0;
};

// `cottonbox undo`: a session's history (history.h), the selection, the
// plan, and (unless a dry run) its application.
Result<UndoReport> undo(const Store& store, const History& history, const UndoOptions& options);
Result<UndoReport> undo(const Store* store, const History& history, const UndoOptions& options);
// The same from the session's journal alone (no audit trail: no renames to
// move back, no creates the keeper did not note).
Result<UndoReport> undo(const Store& store, std::string_view session, const UndoOptions& options);

}  // namespace cb::keep
