// The undo planner on plain structs: which state comes back, what the
// selected commands left, and the decision against what is there now.
#include <gtest/gtest.h>

#include "keep/plan.h"

namespace cb::keep {
namespace {

std::string sha(char c) { return std::string(64, c); }

Snapshot rec(uint64_t seq, uint64_t cmd, Op op, const std::string& path, char content, uint64_t ino = 10) {
  Snapshot s;
  s.seq = seq;
  s.command = cmd;
  s.op = op;
  s.path = path;
  s.type = FileType::Regular;
  s.mode = 0644;
  s.size = 100;
  s.mtime = {static_cast<int64_t>(1000 + seq), 0};
  s.ino = ino;
  s.kept = op_metadata_only(op) ? Kept::Metadata : Kept::Copied;
  if (!op_metadata_only(op)) {
    s.object = "o:" + sha(content);
    s.sha256 = sha(content);
  }
  return s;
}

Fingerprint file(char content, uint64_t ino = 20, uint32_t mode = 0644) {
  Fingerprint f;
  f.known = true;
  f.type = FileType::Regular;
  f.mode = mode;
  f.size = 100;
  f.ino = ino;
  f.sha256 = sha(content);
  return f;
}

Fingerprint absent() {
  Fingerprint f;
  f.known = true;
  return f;
}

Candidate only(const std::vector<Snapshot>& recs, const std::vector<Left>& left, Selection sel = {}) {
  auto c = select_changes(recs, left, sel);
  EXPECT_EQ(c.size(), 1u);
  return c.empty() ? Candidate{} : c[0];
}

TEST(KeepPlan, RestoresWhatTheSessionLeftUntouched) {
  auto c = only({rec(1, 1, Op::OpenTrunc, "/w/a", 'A')}, {{"/w/a", file('B')}});
  EXPECT_EQ(c.previous.sha256, sha('A'));
  Step s = decide(c, file('B'), {});
  EXPECT_EQ(s.action, Action::Restore) << s.reason;
  EXPECT_FALSE(s.forced);
}

TEST(KeepPlan, ConflictWhenChangedAfterTheSessionUnlessForced) {
  auto c = only({rec(1, 1, Op::OpenTrunc, "/w/a", 'A')}, {{"/w/a", file('B')}});
  Step s = decide(c, file('C'), {});
  EXPECT_EQ(s.action, Action::Conflict);
  EXPECT_NE(s.reason.find("content changed"), std::string::npos) << s.reason;
  Step f = decide(c, file('C'), {.force = true});
  EXPECT_EQ(f.action, Action::Restore);
  EXPECT_TRUE(f.forced);
  // Recreated by the user after the session deleted it.
  auto d = only({rec(1, 1, Op::Unlink, "/w/d", 'A')}, {{"/w/d", absent()}});
  EXPECT_EQ(decide(d, file('Z'), {}).action, Action::Conflict);
  EXPECT_EQ(decide(d, absent(), {}).action, Action::Restore);
}

TEST(KeepPlan, NothingToDoWhenAlreadyAsBefore) {
  auto c = only({rec(1, 1, Op::Unlink, "/w/a", 'A')}, {{"/w/a", absent()}});
  EXPECT_EQ(decide(c, file('A', 99), {}).action, Action::Nothing);
}

TEST(KeepPlan, NotKeptCannotBeUndone) {
  Snapshot r = rec(1, 1, Op::Unlink, "/w/big", 'A');
  r.kept = Kept::NotKept;
  r.object.clear();
  r.reason = "over the session's keep budget";
  auto c = only({r}, {{"/w/big", absent()}});
  Step s = decide(c, absent(), {.force = true});
  EXPECT_EQ(s.action, Action::Cannot);
  EXPECT_EQ(s.reason, "over the session's keep budget");
}

TEST(KeepPlan, CreatedFilesGoOnlyWithCreated) {
  Snapshot cr;
  cr.seq = 1;
  cr.command = 1;
  cr.op = Op::Create;
  cr.path = "/w/new";
  cr.kept = Kept::Metadata;
  auto c = only({cr}, {{"/w/new", file('N')}});
  EXPECT_EQ(decide(c, file('N'), {}).action, Action::SkipCreated);
  EXPECT_EQ(decide(c, file('N'), {.created = true}).action, Action::Remove);
  EXPECT_EQ(decide(c, file('M'), {.created = true}).action, Action::Conflict);
  EXPECT_EQ(decide(c, absent(), {.created = true}).action, Action::Nothing);
}

TEST(KeepPlan, OneCommandComesBackToWhatTheEarlierOneLeft) {
  // Command 1 wrote A->B, command 2 wrote B->C, command 3 wrote C->D.
  std::vector<Snapshot> recs = {rec(1, 1, Op::OpenTrunc, "/w/f", 'A', 5), rec(2, 2, Op::OpenTrunc, "/w/f", 'B', 5),
                                rec(3, 3, Op::OpenTrunc, "/w/f", 'C', 5)};
  std::vector<Left> left = {{"/w/f", file('D', 5)}};
  Selection two;
  two.commands = {2};
  auto c = only(recs, left, two);
  EXPECT_EQ(c.previous.sha256, sha('B'));
  EXPECT_EQ(c.expected.sha256, sha('C'));  // what command 2 left: command 3's previous state
  // Command 3's change is still there: undoing 2 alone would lose it.
  EXPECT_EQ(decide(c, file('D', 5), {}).action, Action::Conflict);
  // With 3 undone first, the file is as 2 left it.
  Selection three;
  three.commands = {3};
  auto c3 = only(recs, left, three);
  EXPECT_EQ(decide(c3, file('D', 5), {}).action, Action::Restore);
  EXPECT_EQ(decide(c, file('C', 77), {}).action, Action::Restore);
}

TEST(KeepPlan, AnotherCommandInBetweenIsAConflict) {
  std::vector<Snapshot> recs = {rec(1, 1, Op::OpenTrunc, "/w/f", 'A'), rec(2, 2, Op::OpenTrunc, "/w/f", 'B'),
                                rec(3, 1, Op::Unlink, "/w/f", 'C')};
  Selection one;
  one.commands = {1};
  auto c = only(recs, {{"/w/f", absent()}}, one);
  EXPECT_NE(c.interleaved.find("command 2"), std::string::npos);
  EXPECT_EQ(decide(c, absent(), {}).action, Action::Conflict);
  EXPECT_EQ(decide(c, absent(), {.force = true}).action, Action::Restore);
}

TEST(KeepPlan, MetadataFirstTakesTheContentOfTheNextKeep) {
  // chmod 600 then an in-place write by the same command.
  Snapshot m = rec(1, 1, Op::Chmod, "/w/f", 'x', 5);
  Snapshot w = rec(2, 1, Op::WriteOpen, "/w/f", 'A', 5);
  w.mode = 0600;
  auto c = only({m, w}, {{"/w/f", file('B', 5, 0600)}});
  EXPECT_FALSE(c.metadata_only);
  EXPECT_EQ(c.previous.mode, 0644u);
  EXPECT_EQ(c.previous.sha256, sha('A'));
  EXPECT_EQ(decide(c, file('B', 5, 0600), {}).action, Action::Restore);
}

TEST(KeepPlan, MetadataOnlyChange) {
  Snapshot m = rec(1, 1, Op::Chmod, "/w/f", 'x', 5);
  Fingerprint after = file('A', 5, 0600);
  after.mtime = m.mtime;
  auto c = only({m}, {{"/w/f", after}});
  EXPECT_TRUE(c.metadata_only);
  EXPECT_EQ(decide(c, after, {}).action, Action::Restore);
  Fingerprint back = after;
  back.mode = 0644;
  EXPECT_EQ(decide(c, back, {}).action, Action::Nothing);
  EXPECT_EQ(decide(c, absent(), {.force = true}).action, Action::Conflict);
}

TEST(KeepPlan, ACrashedSessionStillUndoesItsDeletes) {
  // No session-end record: a delete left nothing; an in-place write left
  // an unknown state, which only --force overrides.
  auto d = only({rec(1, 1, Op::Unlink, "/w/d", 'A')}, {});
  EXPECT_TRUE(d.expected.known);
  EXPECT_EQ(decide(d, absent(), {}).action, Action::Restore);
  auto w = only({rec(1, 1, Op::OpenTrunc, "/w/w", 'A')}, {});
  EXPECT_FALSE(w.expected.known);
  EXPECT_EQ(decide(w, file('B'), {}).action, Action::Conflict);
  EXPECT_EQ(decide(w, file('B'), {.force = true}).action, Action::Restore);
}

TEST(KeepPlan, PathFilterAndCommandSelection) {
  std::vector<Snapshot> recs = {rec(1, 1, Op::Unlink, "/w/src/a.c", 'A'), rec(2, 1, Op::Unlink, "/w/doc/b.md", 'B'),
                                rec(3, 2, Op::Unlink, "/w/src/c.c", 'C')};
  Selection sel;
  sel.matches = [](std::string_view p) { return p.substr(0, 7) == "/w/src/"; };
  EXPECT_EQ(select_changes(recs, {}, sel).size(), 2u);
  sel.commands = {1};
  auto c = select_changes(recs, {}, sel);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].path, "/w/src/a.c");
}

TEST(KeepPlan, OrderDirectoriesFirstShallowToDeepRemovalsDeepFirst) {
  auto dir = [](uint64_t seq, const std::string& p) {
    Snapshot s;
    s.seq = seq;
    s.op = Op::Rmdir;
    s.path = p;
    s.type = FileType::Directory;
    s.mode = 0755;
    s.kept = Kept::Metadata;
    return s;
  };
  auto created = [](uint64_t seq, const std::string& p) {
    Snapshot s;
    s.seq = seq;
    s.op = Op::Create;
    s.path = p;
    s.kept = Kept::Metadata;
    return s;
  };
  // rm -rf /w/src: files first, then directories bottom-up; plus two creates.
  std::vector<Snapshot> recs = {rec(1, 1, Op::Unlink, "/w/src/sub/x", 'X'), dir(2, "/w/src/sub"), dir(3, "/w/src"),
                                created(4, "/w/out"), created(5, "/w/out/o.txt")};
  std::vector<Left> left = {{"/w/src/sub/x", absent()}, {"/w/src/sub", absent()}, {"/w/src", absent()}};
  Fingerprint out_dir = absent();
  out_dir.type = FileType::Directory;
  out_dir.mode = 0755;
  left.push_back({"/w/out", out_dir});
  left.push_back({"/w/out/o.txt", file('O')});
  auto cands = select_changes(recs, left, {});
  std::vector<Fingerprint> now;
  for (const Candidate& c : cands) now.push_back(c.expected);
  auto steps = plan(cands, now, {.created = true});
  std::vector<std::string> order;
  for (const Step& s : steps) order.push_back(std::string(action_name(s.action)) + " " + s.candidate.path);
  EXPECT_EQ(order, (std::vector<std::string>{"restore /w/src", "restore /w/src/sub", "restore /w/src/sub/x",
                                             "remove /w/out/o.txt", "remove /w/out"}));
}

TEST(KeepPlan, SameStateComparesContentByHashElseByInode) {
  Fingerprint a = file('A', 1), b = file('A', 2);
  EXPECT_TRUE(same_state(a, b));  // same bytes, another inode (an editor's save-by-rename)
  b.sha256.clear();
  std::string why;
  EXPECT_FALSE(same_state(a, b, &why));
  EXPECT_EQ(why, "it is another file (inode)");
  b.ino = 1;
  EXPECT_TRUE(same_state(a, b));
  b.mtime = {1, 1};
  EXPECT_FALSE(same_state(a, b, &why));
  b = a;
  b.uid = 1;
  EXPECT_FALSE(same_state(a, b, &why));
  EXPECT_EQ(why, "its owner changed");
}

TEST(KeepPlan, ChangesByCommandSayWhatCanBeUndone) {
  Snapshot entries = rec(1, 1, Op::Entries, "/w", 'x');
  entries.type = FileType::Directory;
  Snapshot big = rec(4, 2, Op::Unlink, "/w/big", 'B');
  big.kept = Kept::NotKept;
  big.object.clear();
  big.reason = "over the session's keep budget";
  Snapshot created;
  created.seq = 5;
  created.command = 2;
  created.op = Op::Create;
  created.path = "/w/new";
  created.kept = Kept::Metadata;
  auto lines =
      list_changes({entries, rec(2, 1, Op::OpenTrunc, "/w/a", 'A'), rec(3, 1, Op::Unlink, "/w/a", 'A'), big, created});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].command, 1u);
  EXPECT_EQ(lines[0].path, "/w/a");
  EXPECT_EQ(lines[0].ops, (std::vector<Op>{Op::OpenTrunc, Op::Unlink}));
  EXPECT_TRUE(lines[0].undoable);
  EXPECT_EQ(lines[1].path, "/w/big");
  EXPECT_FALSE(lines[1].undoable);
  EXPECT_EQ(lines[1].reason, "over the session's keep budget");
  EXPECT_EQ(lines[2].path, "/w/new");
  EXPECT_EQ(lines[2].before, FileType::Absent);
  EXPECT_TRUE(lines[2].undoable);
}

}  // namespace
}  // namespace cb::keep
