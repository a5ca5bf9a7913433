// Keep, destroy, undo, compare: real files changed the way the session's
// commands change them (each call preceded by the keeper's call, as the
// supervisor will make it), then `undo`, then a comparison of everything a
// user would look at: bytes, type, mode, owner, times to the nanosecond,
// xattrs, symlink targets, and no stray files.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <ctime>

#include "keep/fsutil.h"
#include "keep/keeper.h"
#include "keep/restore.h"
#include "tests/keep/test_util.h"

namespace cb::keep {
namespace {

using test::FullState;
using test::state_of;
using test::write_file;

class UndoTest : public ::testing::Test {
 public:
  // Times a test can compare, with nanoseconds: mtime long ago, atime an
  // hour ahead, after mtime and ctime, so that under relatime reading
  // (readlink of a symlink, which has no O_NOATIME) does not move it.
  void stamp(const std::string& rel, int i) {
    test::set_times(p(rel), time(nullptr) + 3600, 111111111 + i, 1500000000 + i, 987654321 - i);
  }

 protected:
  void SetUp() override {
    work_ = tmp_ / "w";
    ASSERT_EQ(mkdir(work_.c_str(), 0755), 0);
    auto k = Keeper::open(tmp_ / "store", "s", test::test_limits());
    ASSERT_TRUE(k) << k.error().message;
    keeper_ = std::move(*k);
    xattrs_ = test::user_xattrs(work_).available;
    root_ = geteuid() == 0;
  }

  std::string p(const std::string& rel) const { return work_ + "/" + rel; }

  Context ctx(Op op, const std::string& rel, uint64_t cmd = 1) {
    Context c;
    c.op = op;
    c.path = p(rel);
    c.command = cmd;
    return c;
  }

  // unlink or rmdir, kept first.
  void rm(const std::string& rel, uint64_t cmd = 1) {
    auto parent = open_parent(p(rel));
    ASSERT_TRUE(parent);
    struct stat st;
    ASSERT_EQ(lstat(p(rel).c_str(), &st), 0) << rel;
    bool dir = S_ISDIR(st.st_mode);
    Snapshot s = keeper_->keep_before_unlink(parent->fd.get(), parent->leaf.c_str(),
                                             ctx(dir ? Op::Rmdir : Op::Unlink, rel, cmd));
    ASSERT_NE(s.kept, Kept::NotKept) << rel << ": " << s.reason;
    ASSERT_EQ(dir ? rmdir(p(rel).c_str()) : unlink(p(rel).c_str()), 0) << rel;
  }

  // open(O_TRUNC) and write, kept first.
  void overwrite(const std::string& rel, std::string_view data, uint64_t cmd = 1) {
    auto parent = open_parent(p(rel));
    ASSERT_TRUE(parent);
    Snapshot s = keeper_->keep_before_overwrite(parent->fd.get(), parent->leaf.c_str(), ctx(Op::OpenTrunc, rel, cmd));
    ASSERT_NE(s.kept, Kept::NotKept) << rel << ": " << s.reason;
    UniqueFd fd(open(p(rel).c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    ASSERT_TRUE(fd);
    ASSERT_EQ(write(fd.get(), data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }

  void finish() {
    auto r = keeper_->finish();
    ASSERT_TRUE(r) << r.error().message;
    keeper_.reset();
  }

  Result<UndoReport> undo(UndoOptions opt = {}) {
    auto s = Store::open(tmp_ / "store", false);
    if (!s) return s.error();
    return keep::undo(*s, "s", opt);
  }

  // The undo as `cottonbox undo` makes it: the journal joined with audit
  // events (renames, creates the keeper was not told about).
  Result<UndoReport> undo_with(const std::vector<AuditEvent>& events, UndoOptions opt = {}) {
    auto s = Store::open(tmp_ / "store", false);
    if (!s) return s.error();
    auto parsed = s->read_session("s");
    if (!parsed) return parsed.error();
    return keep::undo(*s, build_history(*parsed, events, CommandTable{}), opt);
  }

  AuditEvent event(uint64_t seq, cb::Action a, const std::string& rel, const std::string& target = "") {
    AuditEvent e;
    e.seq = seq;
    e.ts_ns = now_ns();
    e.action = a;
    e.path = p(rel);
    if (!target.empty()) e.target = p(target);
    e.result_errno = 0;
    return e;
  }

  std::map<std::string, FullState> states(const std::vector<std::string>& rels) {
    std::map<std::string, FullState> m;
    for (const std::string& r : rels) m[r] = state_of(p(r));
    return m;
  }

  void expect_restored(const std::map<std::string, FullState>& before) {
    for (const auto& [rel, st] : before) EXPECT_EQ(state_of(p(rel)), st) << rel;
  }

  // No stray temporary files anywhere under the work directory.
  void expect_only(const std::vector<std::string>& rels) {
    auto all = test::tree_state(work_);
    std::set<std::string> want(rels.begin(), rels.end());
    for (const auto& [rel, st] : all) {
      if (rel != ".") {
        EXPECT_TRUE(want.count(rel)) << "unexpected " << rel;
      }
    }
  }

  test::TempDir tmp_;
  std::string work_;
  std::unique_ptr<Keeper> keeper_;
  bool xattrs_ = false, root_ = false;
};

// src/ with files, an empty file, a symlink, nested directories of their
// own modes, owners (as root), xattrs (where the filesystem has them) and
// times.  Returns the paths in creation order.
std::vector<std::string> make_tree(UndoTest& t, const std::string& work, bool xattrs, bool root) {
  auto p = [&](const std::string& r) { return work + "/" + r; };
  std::vector<std::string> paths = {"src",
                                    "src/main.c",
                                    "src/lib",
                                    "src/lib/util.c",
                                    "src/lib/empty",
                                    "src/link",
                                    "src/lib/deep",
                                    "src/lib/deep/x.bin",
                                    "src/lib/deep/dangling"};
  EXPECT_EQ(mkdir(p("src").c_str(), 0750), 0);
  write_file(p("src/main.c"), test::random_bytes(5000, 1), 0644);
  EXPECT_EQ(mkdir(p("src/lib").c_str(), 0700), 0);
  write_file(p("src/lib/util.c"), test::random_bytes(777, 2), 0600);
  write_file(p("src/lib/empty"), "", 0444);
  EXPECT_EQ(symlink("lib/util.c", p("src/link").c_str()), 0);
  EXPECT_EQ(mkdir(p("src/lib/deep").c_str(), 0755), 0);
  write_file(p("src/lib/deep/x.bin"), test::random_bytes(1 << 20, 3), 0755);
  EXPECT_EQ(symlink("/nowhere/at all", p("src/lib/deep/dangling").c_str()), 0);
  if (root) {
    EXPECT_EQ(lchown(p("src/lib/util.c").c_str(), 1234, 5678), 0);
    EXPECT_EQ(lchown(p("src/lib").c_str(), 1234, 5678), 0);
    EXPECT_EQ(lchown(p("src/link").c_str(), 4321, 8765), 0);
    EXPECT_EQ(chmod(p("src/lib/deep/x.bin").c_str(), 04755), 0);  // after chown: setuid survives
  }
  if (xattrs) {
    EXPECT_EQ(setxattr(p("src/main.c").c_str(), "user.origin", "agent\0test", 10, 0), 0);
    EXPECT_EQ(setxattr(p("src/lib").c_str(), "user.dir", "d", 1, 0), 0);
  }
  // Deepest first, so that no later change moves a directory's times.
  for (int i = static_cast<int>(paths.size()) - 1; i >= 0; --i) t.stamp(paths[i], i);
  return paths;
}

TEST_F(UndoTest, RmRfComesBackByteForByte) {
  auto paths = make_tree(*this, work_, xattrs_, root_);
  test::set_times(work_, time(nullptr) + 3600, 5, 1400000000, 6);
  auto before = states(paths);
  FullState work_before = state_of(work_);
  // rm -rf src: the entries deepest first, each directory after its entries.
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) rm(*it);
  ASSERT_FALSE(state_of(p("src")).exists);
  finish();

  auto r = undo();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->applied.failed, 0u);
  EXPECT_EQ(r->applied.conflicts, 0u);
  EXPECT_EQ(r->applied.restored, paths.size() + 1);  // and the work directory's times
  for (const Outcome& o : r->applied.outcomes) {
    EXPECT_TRUE(o.notes.empty()) << o.path << ": " << o.notes[0];
  }
  expect_restored(before);
  EXPECT_EQ(state_of(work_), work_before);
  expect_only(paths);
  if (!xattrs_) std::cerr << "note: user xattrs not compared: " << test::user_xattrs(work_).reason << "\n";

  // Undone twice: nothing more to do.
  auto again = undo();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->applied.restored, 0u);
  EXPECT_EQ(again->applied.conflicts, 0u);
  EXPECT_EQ(again->applied.nothing, paths.size() + 1);
}

TEST_F(UndoTest, XattrsComeBack) {
  CB_REQUIRE_HOST(test::user_xattrs(work_));
  write_file(p("x"), "with attributes", 0640);
  ASSERT_EQ(setxattr(p("x").c_str(), "user.a", "1", 1, 0), 0);
  ASSERT_EQ(setxattr(p("x").c_str(), "user.bin", "\0\xff\n", 3, 0), 0);
  write_file(p("y"), "edited in place", 0640);
  ASSERT_EQ(setxattr(p("y").c_str(), "user.keep", "me", 2, 0), 0);
  stamp("x", 1);
  stamp("y", 2);
  auto before = states({"x", "y"});
  rm("x");
  overwrite("y", "new");
  ASSERT_EQ(removexattr(p("y").c_str(), "user.keep"), 0);
  ASSERT_EQ(setxattr(p("y").c_str(), "user.added", "by the session", 14, 0), 0);
  finish();
  auto r = undo({.plan = {.force = true}});  // y's xattrs changed after the keep: as the session left it
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.failed, 0u);
  expect_restored(before);
}

TEST_F(UndoTest, RenameOverAnExistingFile) {
  write_file(p("a"), "the new version", 0644);
  write_file(p("b"), test::random_bytes(4096, 9), 0600);
  stamp("b", 1);
  auto before = states({"b"});
  {
    auto dir = test::open_dir(work_);
    Snapshot s = keeper_->keep_before_unlink(dir.get(), "b", ctx(Op::RenameOver, "b"));
    ASSERT_EQ(s.kept, Kept::Linked) << s.reason;
  }
  ASSERT_EQ(rename(p("a").c_str(), p("b").c_str()), 0);
  finish();
  auto r = undo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.restored, 2u);  // b, and the directory's times
  expect_restored(before);
}

TEST_F(UndoTest, OTruncAndFtruncate) {
  write_file(p("f"), test::random_bytes(300000, 4), 0644);
  write_file(p("g"), "truncated through an fd", 0640);
  stamp("f", 1);
  stamp("g", 2);
  auto before = states({"f", "g"});
  overwrite("f", "short");
  {
    UniqueFd fd(open(p("g").c_str(), O_WRONLY | O_CLOEXEC));
    Snapshot s = keeper_->keep_before_overwrite_fd(fd.get(), ctx(Op::Truncate, "g"));
    ASSERT_NE(s.kept, Kept::NotKept) << s.reason;
    ASSERT_EQ(ftruncate(fd.get(), 0), 0);
  }
  finish();
  auto r = undo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.restored, 2u);
  expect_restored(before);
  expect_only({"f", "g"});
}

TEST_F(UndoTest, AHardLinkedFileIsCopiedSoItsOtherNameCannotChangeIt) {
  write_file(p("f"), "as it was", 0644);
  ASSERT_EQ(link(p("f").c_str(), p("g").c_str()), 0);
  stamp("f", 1);
  auto before = states({"f"});
  rm("f");
  write_file(p("g"), "changed through the other name");
  finish();
  auto r = undo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.failed, 0u);
  FullState f = state_of(p("f"));
  EXPECT_EQ(f.content, "as it was");
  EXPECT_EQ(f.mtime_ns, before["f"].mtime_ns);
  EXPECT_EQ(test::read_file(p("g")), "changed through the other name");
}

TEST_F(UndoTest, AConflictIsRefusedTheOthersRestoredAndForceOverwrites) {
  write_file(p("a"), "a before", 0644);
  write_file(p("b"), "b before", 0644);
  stamp("a", 1);
  stamp("b", 2);
  auto before = states({"a", "b"});
  rm("a");
  rm("b");
  finish();
  write_file(p("a"), "the user's new work");  // after the session

  UndoOptions dry;
  dry.dry_run = true;
  auto plan = undo(dry);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->applied.outcomes.empty());
  EXPECT_FALSE(state_of(p("b")).exists);  // a dry run changes nothing

  auto r = undo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.conflicts, 1u);
  bool said = false;
  for (const Step& s : r->steps) {
    if (s.candidate.path == p("a"))
      said = s.action == Action::Conflict && s.reason.find("changed after the session") == 0;
  }
  EXPECT_TRUE(said);
  EXPECT_EQ(test::read_file(p("a")), "the user's new work");
  EXPECT_EQ(state_of(p("b")), before["b"]);

  UndoOptions force;
  force.plan.force = true;
  r = undo(force);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.failed, 0u);
  expect_restored(before);
}

TEST_F(UndoTest, CreatedFilesAreRemovedOnlyWithCreated) {
  test::set_times(work_, time(nullptr) + 3600, 5, 1400000000, 6);
  FullState work_before = state_of(work_);
  {
    auto dir = test::open_dir(work_);
    keeper_->note_created(dir.get(), ctx(Op::Create, "new.txt"));
    write_file(p("new.txt"), "made by the agent");
  }
  finish();
  auto r = undo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.skipped, 1u);
  EXPECT_TRUE(state_of(p("new.txt")).exists);
  UndoOptions created;
  created.plan.created = true;
  r = undo(created);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.removed, 1u);
  EXPECT_FALSE(state_of(p("new.txt")).exists);
  EXPECT_EQ(state_of(work_), work_before);  // its times too
}

TEST_F(UndoTest, OneCommandAtATime) {
  write_file(p("f"), "v1", 0644);
  stamp("f", 1);
  auto v1 = state_of(p("f"));
  overwrite("f", "v2", 1);
  auto v2 = state_of(p("f"));
  overwrite("f", "v3", 2);
  finish();

  UndoOptions one;
  one.selection.commands = {1};
  auto r = undo(one);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.conflicts, 1u);  // command 2 changed it since
  EXPECT_EQ(test::read_file(p("f")), "v3");

  UndoOptions two;
  two.selection.commands = {2};
  r = undo(two);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.restored, 1u);
  EXPECT_EQ(state_of(p("f")), v2);
  r = undo(one);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.restored, 1u);
  EXPECT_EQ(state_of(p("f")), v1);
}

TEST_F(UndoTest, ChmodRecursive) {
  auto paths = make_tree(*this, work_, false, root_);
  auto before = states(paths);
  for (const std::string& rel : paths) {
    auto parent = open_parent(p(rel));
    ASSERT_TRUE(parent);
    Snapshot s = keeper_->keep_metadata(parent->fd.get(), parent->leaf.c_str(), ctx(Op::Chmod, rel));
    ASSERT_EQ(s.kept, Kept::Metadata);
    struct stat st;
    ASSERT_EQ(lstat(p(rel).c_str(), &st), 0);
    if (!S_ISLNK(st.st_mode)) {
      ASSERT_EQ(chmod(p(rel).c_str(), S_ISDIR(st.st_mode) ? 0777 : 0666), 0);
    }
  }
  finish();
  auto r = undo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.failed, 0u);
  EXPECT_EQ(r->applied.conflicts, 0u);
  expect_restored(before);
}

TEST_F(UndoTest, PathFilter) {
  write_file(p("keep.c"), "c", 0644);
  write_file(p("skip.md"), "md", 0644);
  rm("keep.c");
  rm("skip.md");
  finish();
  UndoOptions opt;
  opt.selection.matches = [](std::string_view path) { return path.size() > 2 && path.substr(path.size() - 2) == ".c"; };
  auto r = undo(opt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.restored, 1u);
  EXPECT_TRUE(state_of(p("keep.c")).exists);
  EXPECT_FALSE(state_of(p("skip.md")).exists);
}

TEST_F(UndoTest, ADamagedObjectIsNotRestored) {
  write_file(p("f"), "precious bytes", 0644);
  rm("f");
  finish();  // settled: the object has a known hash
  auto s = Store::open(tmp_ / "store", false);
  ASSERT_TRUE(s);
  auto parsed = s->read_session("s");
  ASSERT_TRUE(parsed);
  std::string object;
  for (const Snapshot& snap : parsed->snapshots)
    if (snap.path == p("f")) object = snap.object;
  ASSERT_EQ(object.substr(0, 2), "o:");
  std::string obj_path = tmp_ / "store/objects/" + Store::object_path(object.substr(2));
  ASSERT_EQ(chmod(obj_path.c_str(), 0600), 0);
  {
    UniqueFd fd(open(obj_path.c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(pwrite(fd.get(), "X", 1, 3), 1);
  }
  auto r = undo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.failed, 1u);
  for (const Outcome& o : r->applied.outcomes) {
    if (o.path == p("f")) {
      EXPECT_NE(o.error.find("damaged"), std::string::npos) << o.error;
    }
  }
  EXPECT_FALSE(state_of(p("f")).exists);
  expect_only({});
}

}  // namespace
}  // namespace cb::keep

namespace cb::keep {
namespace {

// mv a b over an existing b: a comes back (the very inode, moved back) and
// so does b (from the store).
TEST_F(UndoTest, AMoveOverAFileMovesBackAndRestoresWhatItReplaced) {
  write_file(p("a"), test::random_bytes(3000, 21), 0640);
  write_file(p("b"), test::random_bytes(4096, 22), 0600);
  stamp("a", 1);
  stamp("b", 2);
  auto before = states({"a", "b"});
  {
    auto dir = test::open_dir(work_);
    Context c = ctx(Op::RenameOver, "b");
    c.event = 1;
    Snapshot s = keeper_->keep_before_unlink(dir.get(), "b", c);
    ASSERT_NE(s.kept, Kept::NotKept) << s.reason;
  }
  ASSERT_EQ(rename(p("a").c_str(), p("b").c_str()), 0);
  finish();
  std::vector<AuditEvent> events = {event(1, cb::Action::FileRename, "a", "b")};
  auto r = undo_with(events);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->applied.moved_back, 1u);
  EXPECT_EQ(r->applied.failed, 0u);
  EXPECT_EQ(r->applied.conflicts, 0u);
  expect_restored(before);
  expect_only({"a", "b"});
}

// An undo run again (plain undo, then undo --created, as a user would)
// finds what the first brought back as before: the file moved back is at its
// old name again, what it replaced is back, and neither is a conflict.
TEST_F(UndoTest, ASecondUndoFindsTheMoveBackDone) {
  write_file(p("a"), test::random_bytes(3000, 31), 0640);
  write_file(p("b"), test::random_bytes(4096, 32), 0600);
  write_file(p("c"), "deleted\n");
  stamp("a", 1);
  stamp("b", 2);
  stamp("c", 3);
  auto before = states({"a", "b", "c"});
  {
    auto dir = test::open_dir(work_);
    Context c = ctx(Op::RenameOver, "b");
    c.event = 1;
    ASSERT_NE(keeper_->keep_before_unlink(dir.get(), "b", c).kept, Kept::NotKept);
  }
  ASSERT_EQ(rename(p("a").c_str(), p("b").c_str()), 0);
  rm("c");
  finish();
  std::vector<AuditEvent> events = {event(1, cb::Action::FileRename, "a", "b")};
  auto first = undo_with(events);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->applied.moved_back, 1u);
  expect_restored(before);
  for (bool created : {false, true}) {
    UndoOptions opt;
    opt.plan.created = created;
    auto again = undo_with(events, opt);
    ASSERT_TRUE(again) << again.error().message;
    for (const Step& st : again->steps) EXPECT_EQ(st.action, Action::Nothing) << st.candidate.path << ": " << st.reason;
    EXPECT_EQ(again->applied.conflicts, 0u);
    expect_restored(before);
    expect_only({"a", "b", "c"});
  }
}

// mv src old; then old/x edited: old/x is restored, then old moves back.
TEST_F(UndoTest, ADirectoryMovedThenEditedComesBackWhole) {
  auto paths = make_tree(*this, work_, xattrs_, root_);
  auto before = states(paths);
  ASSERT_EQ(rename(p("src").c_str(), p("old").c_str()), 0);
  {
    auto parent = open_parent(p("old/main.c"));
    ASSERT_TRUE(parent);
    Context c = ctx(Op::OpenTrunc, "old/main.c");
    c.event = 2;
    Snapshot s = keeper_->keep_before_overwrite(parent->fd.get(), "main.c", c);
    ASSERT_NE(s.kept, Kept::NotKept) << s.reason;
    write_file(p("old/main.c"), "rewritten");
  }
  finish();
  std::vector<AuditEvent> events = {event(1, cb::Action::FileRename, "src", "old")};
  events[0].is_dir = true;
  UndoOptions opt;
  opt.plan.session_end_ns = now_ns();
  auto r = undo_with(events, opt);
  ASSERT_TRUE(r) << r.error().message;
  for (const Outcome& o : r->applied.outcomes) EXPECT_TRUE(o.error.empty()) << o.path << ": " << o.error;
  EXPECT_EQ(r->applied.moved_back, 1u);
  // main.c's times come back with it; src's own mtime moved when main.c
  // was replaced in it (the rename's directory times are not kept here).
  for (const std::string& rel : paths) {
    if (rel == "src") continue;
    EXPECT_EQ(state_of(p(rel)), before[rel]) << rel;
  }
  EXPECT_FALSE(state_of(p("old")).exists);
}

// A tree the session created, known only from the audit events: removed
// with --created when it has not changed since the session ended, the
// directory after its file.
TEST_F(UndoTest, ACreatedTreeKnownFromTheAuditTrailIsRemovedWithCreated) {
  ASSERT_EQ(mkdir(p("gen").c_str(), 0755), 0);
  write_file(p("gen/out.o"), "object code");
  finish();
  std::vector<AuditEvent> events = {event(1, cb::Action::FileCreate, "gen"),
                                    event(2, cb::Action::FileCreate, "gen/out.o")};
  events[0].is_dir = true;
  UndoOptions opt;
  opt.plan.created = true;
  opt.plan.session_end_ns = now_ns();
  auto r = undo_with(events, opt);
  ASSERT_TRUE(r) << r.error().message;
  for (const Outcome& o : r->applied.outcomes) EXPECT_TRUE(o.error.empty()) << o.path << ": " << o.error;
  EXPECT_EQ(r->applied.removed, 2u);
  EXPECT_FALSE(state_of(p("gen")).exists);

  // Made again and edited after "the end": refused.
  ASSERT_EQ(mkdir(p("gen").c_str(), 0755), 0);
  write_file(p("gen/out.o"), "object code");
  opt.plan.session_end_ns = now_ns() - 60ll * 1000000000;
  r = undo_with(events, opt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.removed, 0u);
  EXPECT_EQ(r->applied.conflicts, 2u);
  EXPECT_TRUE(state_of(p("gen/out.o")).exists);
}

}  // namespace
}  // namespace cb::keep
