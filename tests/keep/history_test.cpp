// The journal joined with the audit trail, on plain structs: which command
// a process belongs to, what the audit events add to the keep records, and
// how renames are planned to move back.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>

#include "keep/history.h"
#include "keep/plan.h"

namespace cb::keep {
namespace {

AuditProcess proc(uint64_t id, uint64_t parent) {
  AuditProcess p;
  p.proc_id = id;
  p.parent = parent;
  p.pid = static_cast<int32_t>(1000 + id);
  return p;
}

// The session of the examples: 1 the agent; 2 `bash -c` (with 3 below it,
// and 4 below 3); 5 another tool call; 9 a process whose parent was lost.
CommandTable table() { return CommandTable({proc(1, 0), proc(2, 1), proc(3, 2), proc(4, 3), proc(5, 1), proc(9, 8)}); }

AuditEvent ev(uint64_t seq, uint64_t proc, cb::Action a, const std::string& path, const std::string& target = "") {
  AuditEvent e;
  e.seq = seq;
  e.ts_ns = static_cast<int64_t>(seq) * 1000;
  e.proc = proc;
  e.action = a;
  e.path = path;
  e.target = target;
  e.result_errno = 0;
  return e;
}

Snapshot kept(uint64_t seq, uint64_t event, uint64_t proc, Op op, const std::string& path, char content = 'A') {
  Snapshot s;
  s.seq = seq;
  s.event = event;
  s.ts_ns = static_cast<int64_t>(event) * 1000;
  s.proc = proc;
  s.op = op;
  s.path = path;
  s.type = FileType::Regular;
  s.mode = 0644;
  s.size = 10;
  s.ino = 100 + seq;
  s.mtime = {1000, static_cast<int64_t>(seq)};
  s.kept = op_metadata_only(op) ? Kept::Metadata : Kept::Linked;
  if (!op_metadata_only(op)) {
    s.object = "o:" + std::string(64, content);
    s.sha256 = std::string(64, content);
  }
  return s;
}

Parsed journal(std::vector<Snapshot> recs, std::vector<Left> left = {}) {
  Parsed p;
  p.session = "s";
  p.snapshots = std::move(recs);
  p.left = std::move(left);
  return p;
}

Fingerprint file_fp(char content, uint64_t ino, int64_t mtime_sec = 2000) {
  Fingerprint f;
  f.known = true;
  f.type = FileType::Regular;
  f.mode = 0644;
  f.size = 10;
  f.ino = ino;
  f.mtime = {mtime_sec, 0};
  f.sha256 = std::string(64, content);
  return f;
}

Fingerprint absent() {
  Fingerprint f;
  f.known = true;
  return f;
}

std::vector<std::string> order_of(const std::vector<Step>& steps) {
  std::vector<std::string> out;
  for (const Step& s : steps) {
    std::string line = std::string(action_name(s.action)) + " " + s.candidate.path;
    if (s.candidate.move_back) line += " -> " + s.candidate.move_to;
    out.push_back(line);
  }
  return out;
}

TEST(KeepHistory, ACommandIsAChildOfTheRootWithEverythingBelowIt) {
  CommandTable t = table();
  EXPECT_EQ(t.root(), 1u);
  EXPECT_EQ(t.command_of(1), 1u);  // the agent's own changes
  EXPECT_EQ(t.command_of(2), 2u);
  EXPECT_EQ(t.command_of(3), 2u);
  EXPECT_EQ(t.command_of(4), 2u);
  EXPECT_EQ(t.command_of(5), 5u);
  EXPECT_EQ(t.command_of(9), 9u);  // its parent was not recorded: its own topmost ancestor
  EXPECT_EQ(t.command_of(42), 0u);
  // A damaged table with a cycle still answers.
  CommandTable loop({proc(1, 0), proc(2, 3), proc(3, 2)});
  uint64_t c = loop.command_of(2);
  EXPECT_TRUE(c == 2 || c == 3);
}

TEST(KeepHistory, RecordsTakeTheCommandOfTheirProcess) {
  auto h = build_history(journal({kept(1, 10, 4, Op::Unlink, "/w/a")}), {}, table());
  ASSERT_EQ(h.records.size(), 1u);
  EXPECT_EQ(h.records[0].command, 2u);
  // Not in the table: the journal's own command stays.
  Snapshot s = kept(1, 10, 77, Op::Unlink, "/w/a");
  s.command = 6;
  h = build_history(journal({s}), {}, table());
  EXPECT_EQ(h.records[0].command, 6u);
}

TEST(KeepHistory, AuditEventsAddWhatTheKeeperDidNotSee) {
  std::vector<AuditEvent> events = {
      ev(1, 3, cb::Action::FileCreate, "/w/new"),
      ev(2, 3, cb::Action::FileDelete, "/w/a"),      // kept below
      ev(3, 5, cb::Action::FileDelete, "/w/lost"),   // no keep record
      ev(4, 5, cb::Action::FileWrite, "/dev/null"),  // not a file change
      ev(5, 5, cb::Action::FileTruncate, "/w/t"),
      ev(6, 5, cb::Action::FileWrite, "/w/t"),  // covered by the truncate's record
      ev(7, 5, cb::Action::FileAttr, "/w/m"),
      ev(8, 5, cb::Action::FileCreate, "/w/"),  // O_TMPFILE
  };
  events[6].syscall = "fchmodat";
  AuditEvent denied = ev(9, 5, cb::Action::FileDelete, "/w/kept-by-deny");
  denied.allowed = false;
  AuditEvent failed = ev(10, 5, cb::Action::FileDelete, "/w/missing");
  failed.result_errno = 2;
  events.push_back(denied);
  events.push_back(failed);
  auto h = build_history(journal({kept(1, 2, 3, Op::Unlink, "/w/a"), kept(2, 5, 5, Op::OpenTrunc, "/w/t")}), events,
                         table());
  std::vector<std::string> got;
  for (const Snapshot& s : h.records)
    got.push_back(std::to_string(s.seq) + " " + std::string(op_name(s.op)) + " " + s.path + " cmd" +
                  std::to_string(s.command) + (s.kept == Kept::NotKept ? " not-kept" : ""));
  EXPECT_EQ(got,
            (std::vector<std::string>{"1 create /w/new cmd2", "2 unlink /w/a cmd2", "3 unlink /w/lost cmd5 not-kept",
                                      "4 open-trunc /w/t cmd5", "5 chmod /w/m cmd5 not-kept"}));
  EXPECT_EQ(h.records[2].reason, kNoKeepRecord);
}

TEST(KeepHistory, ARenameOfAnOriginalFileMovesBackAndOneOfATemporaryDoesNot) {
  std::vector<AuditEvent> events = {
      ev(1, 2, cb::Action::FileRename, "/w/a", "/w/b"),      // mv a b
      ev(2, 5, cb::Action::FileCreate, "/w/sedX1"),          // sed -i: a temporary file...
      ev(3, 5, cb::Action::FileRename, "/w/sedX1", "/w/c"),  // ...renamed over the file
  };
  // The keeper noted that the mv made b (as the supervisor may): the move
  // back says it, no "created" line of its own.
  Snapshot made;
  made.seq = 1;
  made.event = 1;
  made.proc = 2;
  made.op = Op::Create;
  made.path = "/w/b";
  made.type = FileType::Absent;
  made.kept = Kept::Metadata;
  auto h = build_history(journal({made, kept(2, 3, 5, Op::RenameOver, "/w/c", 'C')}), events, table());
  ASSERT_EQ(h.renames.size(), 2u);
  EXPECT_TRUE(h.renames[0].move_back);
  EXPECT_FALSE(h.renames[1].move_back);
  auto lines = list_changes(h);
  std::vector<std::string> got;
  for (const ChangeLine& l : lines)
    got.push_back("cmd" + std::to_string(l.command) + " " + l.path + (l.target.empty() ? "" : " -> " + l.target) + " " +
                  std::string(undo_name(l.undo)));
  // The temporary file lived and died within its command: not listed.
  EXPECT_EQ(got, (std::vector<std::string>{"cmd2 /w/a -> /w/b move-back", "cmd5 /w/c restore"}));

  // The same sed without a keep record: the name was replaced, not kept.
  h = build_history(journal({}), events, table());
  lines = list_changes(h);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].path, "/w/c");
  EXPECT_EQ(lines[1].undo, Undo::Cannot);
  EXPECT_NE(lines[1].reason.find("no keep record"), std::string::npos) << lines[1].reason;
}

TEST(KeepHistory, CreatedFilesAreListedAsCreated) {
  auto h = build_history(journal({}), {ev(1, 2, cb::Action::FileCreate, "/w/out.txt")}, table());
  auto lines = list_changes(h);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].undo, Undo::Created);
  EXPECT_TRUE(lines[0].undoable);
  EXPECT_EQ(lines[0].before, FileType::Absent);
}

TEST(KeepHistory, AMoveOverAFileMovesBackFirstThenRestoresTheDestination) {
  // mv a b over an existing b (kept), as command 2.
  auto h = build_history(journal({kept(1, 7, 2, Op::RenameOver, "/w/b", 'B')}, {{"/w/b", file_fp('A', 50)}}),
                         {ev(7, 2, cb::Action::FileRename, "/w/a", "/w/b")}, table());
  auto cands = select_changes(h, {});
  std::vector<Fingerprint> now, dest;
  for (const Candidate& c : cands) {
    now.push_back(c.move_back ? file_fp('A', 50) : file_fp('A', 50));
    dest.push_back(absent());
  }
  auto steps = plan(cands, now, {}, dest);
  EXPECT_EQ(order_of(steps), (std::vector<std::string>{"move-back /w/b -> /w/a", "restore /w/b"}));
  EXPECT_TRUE(steps[1].after_earlier);

  // The user edited b after the session: both refused.
  for (Fingerprint& f : now) f = file_fp('Z', 50);
  steps = plan(cands, now, {}, dest);
  EXPECT_EQ(order_of(steps), (std::vector<std::string>{"conflict /w/b -> /w/a", "conflict /w/b"}));

  // A new a is in the way: the move back is refused, and so is the restore
  // of b, which would destroy what the session moved there.
  for (Fingerprint& f : now) f = file_fp('A', 50);
  for (Fingerprint& f : dest) f = file_fp('Q', 51);
  steps = plan(cands, now, {}, dest);
  EXPECT_EQ(order_of(steps), (std::vector<std::string>{"conflict /w/b -> /w/a", "conflict /w/b"}));
  EXPECT_NE(steps[0].reason.find("something is at /w/a now"), std::string::npos) << steps[0].reason;
  EXPECT_NE(steps[1].reason.find("is not undone"), std::string::npos) << steps[1].reason;
  // --force replaces the new a.
  steps = plan(cands, now, {.force = true}, dest);
  EXPECT_EQ(order_of(steps), (std::vector<std::string>{"move-back /w/b -> /w/a", "restore /w/b"}));
  EXPECT_TRUE(steps[0].forced);
}

TEST(KeepHistory, WhatChangedAfterARenameIsUndoneBeforeTheMoveBack) {
  // mv src old (a directory), then old/x edited, then src/ made anew with a
  // file: undo restores old/x, removes the new src/, then moves old back.
  std::vector<AuditEvent> events = {
      ev(1, 2, cb::Action::FileRename, "/w/src", "/w/old"),
      ev(3, 5, cb::Action::FileCreate, "/w/src"),
      ev(4, 5, cb::Action::FileCreate, "/w/src/n"),
  };
  events[0].is_dir = true;
  events[1].is_dir = true;
  Snapshot edit = kept(1, 2, 5, Op::OpenTrunc, "/w/old/x", 'X');
  auto h = build_history(journal({edit}, {{"/w/old/x", file_fp('Y', 60)}}), events, table());
  auto cands = select_changes(h, {});
  std::vector<Fingerprint> now, dest;
  Fingerprint dir;
  dir.known = true;
  dir.type = FileType::Directory;
  dir.mode = 0755;
  dir.mtime = {2000, 0};
  for (const Candidate& c : cands) {
    if (c.move_back) {
      now.push_back(dir);
      dest.push_back(dir);  // src/ is there again until its removal
    } else if (c.path == "/w/old/x") {
      now.push_back(file_fp('Y', 60));
      dest.push_back({});
    } else {
      now.push_back(c.path == "/w/src" ? dir : file_fp('N', 70));
      dest.push_back({});
    }
  }
  PlanOptions opt;
  opt.created = true;
  opt.session_end_ns = 3000ll * 1000000000;
  auto steps = plan(cands, now, opt, dest);
  EXPECT_EQ(order_of(steps), (std::vector<std::string>{"restore /w/old/x", "remove /w/src/n", "remove /w/src",
                                                       "move-back /w/old -> /w/src"}))
      << steps.back().reason;
  // Without --created the new src/ stays, and is in the way.
  opt.created = false;
  steps = plan(cands, now, opt, dest);
  EXPECT_EQ(order_of(steps).front(), "restore /w/old/x");
  bool refused = false;
  for (const Step& s : steps)
    if (s.candidate.move_back) {
      refused = s.action == Action::Conflict;
      EXPECT_NE(s.reason.find("a directory is at /w/src"), std::string::npos) << s.reason;
    }
  EXPECT_TRUE(refused);
}

TEST(KeepHistory, ChainedRenamesMoveBackLatestFirst) {
  // mv a b (command 2), then mv b c (command 5).
  auto h = build_history(
      journal({}), {ev(1, 2, cb::Action::FileRename, "/w/a", "/w/b"), ev(2, 5, cb::Action::FileRename, "/w/b", "/w/c")},
      table());
  auto cands = select_changes(h, {});
  ASSERT_EQ(cands.size(), 2u);
  std::vector<Fingerprint> now, dest;
  for (const Candidate& c : cands) {
    now.push_back(c.path == "/w/c" ? file_fp('A', 5) : absent());
    dest.push_back(absent());
  }
  PlanOptions opt;
  opt.session_end_ns = 3000ll * 1000000000;
  auto steps = plan(cands, now, opt, dest);
  EXPECT_EQ(order_of(steps), (std::vector<std::string>{"move-back /w/c -> /w/b", "move-back /w/b -> /w/a"}));
  EXPECT_TRUE(steps[1].after_earlier);

  // Command 2 alone: command 5 moved it on, so it is not at b.
  Selection first;
  first.commands = {2};
  cands = select_changes(h, first);
  ASSERT_EQ(cands.size(), 1u);
  Step s = plan(cands, {absent()}, opt, {absent()})[0];
  EXPECT_EQ(s.action, Action::Conflict);
  EXPECT_NE(s.reason.find("command 5 renamed it on to /w/c"), std::string::npos) << s.reason;
  // Command 5 alone: back to b.
  Selection second;
  second.commands = {5};
  cands = select_changes(h, second);
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(order_of(plan(cands, {file_fp('A', 5)}, opt, {absent()})),
            (std::vector<std::string>{"move-back /w/c -> /w/b"}));
}

TEST(KeepHistory, AStateNobodyRecordedCountsAsLeftWhenNotChangedSinceTheEnd) {
  Candidate c;
  c.path = "/w/new";
  c.previous.type = FileType::Absent;
  c.previous.kept = Kept::Metadata;
  PlanOptions opt;
  opt.created = true;
  opt.session_end_ns = 2000ll * 1000000000;
  EXPECT_EQ(decide(c, file_fp('N', 1, 1999), opt).action, Action::Remove);
  Step later = decide(c, file_fp('N', 1, 2001), opt);
  EXPECT_EQ(later.action, Action::Conflict);
  EXPECT_NE(later.reason.find("not recorded"), std::string::npos) << later.reason;
  opt.session_end_ns = 0;  // a session whose end is not known
  EXPECT_EQ(decide(c, file_fp('N', 1, 1999), opt).action, Action::Conflict);
}

}  // namespace
}  // namespace cb::keep
