// The keeper at the decision point, on real files: which means it uses
// (hard link, reflink, copy, metadata), what it refuses (special files, over
// budget), and that what it acknowledged survives a SIGKILL.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

#include "keep/gc.h"
#include "keep/keeper.h"
#include "keep/meta.h"
#include "keep/restore.h"
#include "tests/keep/test_util.h"

namespace cb::keep {
namespace {

using test::FullState;
using test::read_file;
using test::state_of;
using test::write_file;

class KeeperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = tmp_ / "w";
    store_dir_ = tmp_ / "store";
    ASSERT_EQ(mkdir(work_.c_str(), 0755), 0);
    auto k = Keeper::open(store_dir_, "s1", limits_);
    ASSERT_TRUE(k) << k.error().message;
    keeper_ = std::move(*k);
    dir_ = test::open_dir(work_);
  }

  Context ctx(Op op, const std::string& name, uint64_t command = 1) {
    Context c;
    c.op = op;
    c.path = work_ + "/" + name;
    c.command = command;
    return c;
  }

  // The bytes of a kept object.
  std::string object_bytes(const Snapshot& s) {
    auto fd = keeper_->store().open_object(s.object);
    EXPECT_TRUE(fd) << (fd ? "" : fd.error().message);
    if (!fd) return {};
    return read_file(proc_fd_path(fd->get()));
  }

  test::TempDir tmp_;
  std::string work_, store_dir_;
  Limits limits_ = test::test_limits();
  std::unique_ptr<Keeper> keeper_;
  UniqueFd dir_;
};

TEST_F(KeeperTest, UnlinkKeepsTheVeryInodeByAHardLink) {
  std::string data = test::random_bytes(100000, 1);
  write_file(work_ + "/a", data, 0640);
  struct stat before;
  ASSERT_EQ(stat((work_ + "/a").c_str(), &before), 0);
  Snapshot s = keeper_->keep_before_unlink(dir_.get(), "a", ctx(Op::Unlink, "a"));
  ASSERT_EQ(s.kept, Kept::Linked) << s.reason;
  EXPECT_EQ(s.reason, "");
  EXPECT_EQ(s.ino, before.st_ino);
  EXPECT_EQ(s.mode, 0640u);
  EXPECT_EQ(s.size, data.size());
  EXPECT_EQ(s.seq, 2u);  // after the record of the directory's times
  ASSERT_EQ(unlink((work_ + "/a").c_str()), 0);
  // The object is the same inode, alone now, with the bytes untouched.
  auto fd = keeper_->store().open_object(s.object);
  ASSERT_TRUE(fd);
  struct stat st;
  ASSERT_EQ(fstat(fd->get(), &st), 0);
  EXPECT_EQ(st.st_ino, before.st_ino);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(object_bytes(s), data);
  EXPECT_EQ(keeper_->stats().linked, 1u);
}

TEST_F(KeeperTest, AFileWithAnotherLinkIsCopiedNotLinked) {
  write_file(work_ + "/a", "original", 0644);
  ASSERT_EQ(link((work_ + "/a").c_str(), (work_ + "/b").c_str()), 0);
  Snapshot s = keeper_->keep_before_unlink(dir_.get(), "a", ctx(Op::Unlink, "a"));
  ASSERT_TRUE(s.kept == Kept::Copied || s.kept == Kept::Reflinked) << kept_name(s.kept) << ": " << s.reason;
  EXPECT_NE(s.reason.find("it has 2 links"), std::string::npos) << s.reason;
  ASSERT_EQ(unlink((work_ + "/a").c_str()), 0);
  // The other name changes the inode in place; the kept bytes do not follow.
  write_file(work_ + "/b", "changed through the other link");
  EXPECT_EQ(object_bytes(s), "original");
}

TEST_F(KeeperTest, AFileOpenForWritingIsCopiedNotLinked) {
  write_file(work_ + "/a", "before", 0644);
  UniqueFd writer(open((work_ + "/a").c_str(), O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(writer);
  Snapshot s = keeper_->keep_before_unlink(dir_.get(), "a", ctx(Op::Unlink, "a"));
  ASSERT_TRUE(s.kept == Kept::Copied || s.kept == Kept::Reflinked) << kept_name(s.kept) << ": " << s.reason;
  EXPECT_NE(s.reason.find("open for writing"), std::string::npos) << s.reason;
  ASSERT_EQ(unlink((work_ + "/a").c_str()), 0);
  ASSERT_EQ(pwrite(writer.get(), "AFTER!", 6, 0), 6);
  EXPECT_EQ(object_bytes(s), "before");
  // Closed again, the next one is linked.
  writer.reset();
  write_file(work_ + "/c", "c");
  EXPECT_EQ(keeper_->keep_before_unlink(dir_.get(), "c", ctx(Op::Unlink, "c")).kept, Kept::Linked);
}

TEST_F(KeeperTest, OverwriteCopiesOncePerCommand) {
  write_file(work_ + "/f", "version 1", 0600);
  Snapshot s = keeper_->keep_before_overwrite(dir_.get(), "f", ctx(Op::OpenTrunc, "f"));
  ASSERT_TRUE(s.kept == Kept::Copied || s.kept == Kept::Reflinked) << s.reason;
  EXPECT_EQ(s.mode, 0600u);
  write_file(work_ + "/f", "version 2", 0600);
  // The same command again: the state before it is kept already.
  Snapshot again = keeper_->keep_before_overwrite(dir_.get(), "f", ctx(Op::WriteOpen, "f"));
  EXPECT_EQ(again.seq, s.seq);
  EXPECT_NE(again.reason.find("kept before this command"), std::string::npos);
  EXPECT_EQ(keeper_->stats().repeated, 1u);
  // Another command: its own previous state.
  Snapshot other = keeper_->keep_before_overwrite(dir_.get(), "f", ctx(Op::Truncate, "f", 2));
  EXPECT_EQ(other.seq, s.seq + 1);
  EXPECT_EQ(object_bytes(s), "version 1");
  EXPECT_EQ(object_bytes(other), "version 2");
}

TEST_F(KeeperTest, OverwriteThroughTheCallersWriteOnlyFd) {
  write_file(work_ + "/f", "kept through an fd", 0644);
  UniqueFd wr(open((work_ + "/f").c_str(), O_WRONLY | O_CLOEXEC));
  Snapshot s = keeper_->keep_before_overwrite_fd(wr.get(), ctx(Op::Truncate, "f"));
  ASSERT_TRUE(s.kept == Kept::Copied || s.kept == Kept::Reflinked) << s.reason;
  ASSERT_EQ(ftruncate(wr.get(), 0), 0);
  EXPECT_EQ(object_bytes(s), "kept through an fd");
}

TEST_F(KeeperTest, SymlinkDirectoryAndSpecialFiles) {
  ASSERT_EQ(symlink("../somewhere/else", (work_ + "/l").c_str()), 0);
  Snapshot l = keeper_->keep_before_unlink(dir_.get(), "l", ctx(Op::Unlink, "l"));
  EXPECT_EQ(l.kept, Kept::Metadata);
  EXPECT_EQ(l.type, FileType::Symlink);
  EXPECT_EQ(l.target, "../somewhere/else");

  ASSERT_EQ(mkdir((work_ + "/d").c_str(), 0710), 0);
  Snapshot d = keeper_->keep_before_unlink(dir_.get(), "d", ctx(Op::Rmdir, "d"));
  EXPECT_EQ(d.kept, Kept::Metadata);
  EXPECT_EQ(d.type, FileType::Directory);
  EXPECT_EQ(d.mode, 0710u);

  ASSERT_EQ(mkfifo((work_ + "/p").c_str(), 0600), 0);
  Snapshot p = keeper_->keep_before_unlink(dir_.get(), "p", ctx(Op::Unlink, "p"));
  EXPECT_EQ(p.kept, Kept::NotKept);
  EXPECT_EQ(p.reason, "a fifo is a special file: not kept");
  EXPECT_FALSE(undoable(p));

  Snapshot gone = keeper_->keep_before_unlink(dir_.get(), "missing", ctx(Op::Unlink, "missing"));
  EXPECT_EQ(gone.kept, Kept::NotKept);
  EXPECT_NE(gone.reason.find("No such file"), std::string::npos);
}

TEST_F(KeeperTest, MetadataOncePerInodeAndCommand) {
  write_file(work_ + "/m", "m", 0644);
  Snapshot a = keeper_->keep_metadata(dir_.get(), "m", ctx(Op::Chmod, "m"));
  EXPECT_EQ(a.kept, Kept::Metadata);
  EXPECT_EQ(a.mode, 0644u);
  ASSERT_EQ(chmod((work_ + "/m").c_str(), 0600), 0);
  Snapshot b = keeper_->keep_metadata(dir_.get(), "m", ctx(Op::Chown, "m"));
  EXPECT_EQ(b.seq, a.seq);
  UniqueFd path_fd(open((work_ + "/m").c_str(), O_PATH | O_CLOEXEC));
  Snapshot c = keeper_->keep_metadata_fd(path_fd.get(), ctx(Op::Chmod, "m", 2));
  EXPECT_EQ(c.kept, Kept::Metadata);
  EXPECT_EQ(c.mode, 0600u);
  EXPECT_EQ(c.type, FileType::Regular);
}

TEST_F(KeeperTest, XattrsAreKept) {
  auto xa = test::user_xattrs(work_);
  CB_REQUIRE_HOST(xa);
  write_file(work_ + "/x", "x");
  ASSERT_EQ(setxattr((work_ + "/x").c_str(), "user.note", "v\0w", 3, 0), 0);
  Snapshot s = keeper_->keep_before_unlink(dir_.get(), "x", ctx(Op::Unlink, "x"));
  ASSERT_EQ(s.kept, Kept::Linked);
  bool found = false;
  for (const Xattr& x : s.xattrs)
    if (x.name == "user.note") found = x.value == std::string("v\0w", 3);
  EXPECT_TRUE(found);
}

TEST(KeeperBudget, OverBudgetIsRecordedNotSilent) {
  test::TempDir tmp;
  std::string work = tmp / "w";
  ASSERT_EQ(mkdir(work.c_str(), 0755), 0);
  Limits l = test::test_limits();
  l.session_bytes = 1500;
  auto k = Keeper::open(tmp / "store", "budget", l);
  ASSERT_TRUE(k);
  auto dir = test::open_dir(work);
  write_file(work + "/small", std::string(1000, 's'));
  write_file(work + "/big", std::string(1000, 'b'));
  Context c;
  c.op = Op::Unlink;
  c.path = work + "/small";
  EXPECT_EQ((*k)->keep_before_unlink(dir.get(), "small", c).kept, Kept::Linked);
  c.path = work + "/big";
  Snapshot big = (*k)->keep_before_unlink(dir.get(), "big", c);
  EXPECT_EQ(big.kept, Kept::NotKept);
  EXPECT_NE(big.reason.find("over the session's keep budget"), std::string::npos) << big.reason;
  // Recorded for `changes`, with its reason.
  auto parsed = (*k)->store().read_session("budget");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->snapshots.size(), 3u);  // the directory's times, small, big
  EXPECT_EQ(parsed->snapshots[0].op, Op::Entries);
  EXPECT_EQ(parsed->snapshots[0].path, work);
  EXPECT_EQ(parsed->snapshots[2].kept, Kept::NotKept);
  EXPECT_EQ(parsed->snapshots[2].reason, big.reason);
  EXPECT_EQ((*k)->stats().not_kept, 1u);
}

// A session's keeper reopened (after a crash, or after finish) continues its
// journal: new records and staged names never reuse old ones.
TEST(KeeperJournal, ReopenedContinuesTheSession) {
  test::TempDir tmp;
  std::string work = tmp / "w";
  ASSERT_EQ(mkdir(work.c_str(), 0755), 0);
  auto dir = test::open_dir(work);
  Context c;
  c.op = Op::Unlink;
  c.path = work + "/a";
  write_file(work + "/a", "first a");
  {
    auto k = Keeper::open(tmp / "store", "re", test::test_limits());
    ASSERT_TRUE(k);
    ASSERT_EQ((*k)->keep_before_unlink(dir.get(), "a", c).kept, Kept::Linked);
    ASSERT_EQ(unlink(c.path.c_str()), 0);
    ASSERT_TRUE((*k)->finish());  // settled: staging is empty again
  }
  write_file(work + "/a", "second a");
  auto k = Keeper::open(tmp / "store", "re", test::test_limits());
  ASSERT_TRUE(k);
  Snapshot s = (*k)->keep_before_unlink(dir.get(), "a", c);
  // After the directory's record and the first a, and the directory's
  // record again (a new keeper has not seen it).
  EXPECT_EQ(s.seq, 4u);
  auto parsed = (*k)->store().read_session("re");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->snapshots.size(), 4u);
  auto first = (*k)->store().open_object(parsed->snapshots[1].object);
  auto second = (*k)->store().open_object(parsed->snapshots[3].object);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(read_file(proc_fd_path(first->get())), "first a");
  EXPECT_EQ(read_file(proc_fd_path(second->get())), "second a");
}

TEST(KeeperJournal, OneKeeperPerSession) {
  test::TempDir tmp;
  auto a = Keeper::open(tmp / "store", "s", test::test_limits());
  ASSERT_TRUE(a);
  auto b = Keeper::open(tmp / "store", "s", test::test_limits());
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("held by another keeper"), std::string::npos);
  EXPECT_FALSE(Keeper::open(tmp / "store", "../x", test::test_limits()));
}

TEST_F(KeeperTest, ReflinkWhereTheFilesystemHasIt) {
  auto rf = test::reflink(work_);
  CB_REQUIRE_HOST(rf);
  write_file(work_ + "/r", test::random_bytes(1 << 20, 3));
  Snapshot s = keeper_->keep_before_overwrite(dir_.get(), "r", ctx(Op::OpenTrunc, "r"));
  EXPECT_EQ(s.kept, Kept::Reflinked) << s.reason;
}

// Across filesystems a link is impossible (EXDEV): a copy.  The files live
// on a tmpfs mounted in a private mount namespace of a child, so nothing
// is left mounted on the host.
TEST(KeeperAcrossFilesystems, Copies) {
  CB_REQUIRE_HOST(cb::test::root());
  test::TempDir tmp;
  std::string other = tmp / "other";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    auto say = [&](const std::string& s) {
      (void)!write(pipefd[1], s.data(), s.size());
      _exit(0);
    };
    if (unshare(CLONE_NEWNS) != 0) say("skip: unshare: " + std::string(strerror(errno)));
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) say("skip: make-private failed");
    if (mount("tmpfs", other.c_str(), "tmpfs", 0, "size=16m") != 0) say("skip: mount tmpfs failed");
    auto k = Keeper::open(tmp / "store", "xfs", test::test_limits());
    if (!k) say("fail: " + k.error().message);
    write_file(other + "/f", "on another filesystem");
    auto dir = test::open_dir(other);
    Context c;
    c.op = Op::Unlink;
    c.path = other + "/f";
    Snapshot s = (*k)->keep_before_unlink(dir.get(), "f", c);
    say(std::string(kept_name(s.kept)) + "|" + s.reason);
  }
  close(pipefd[1]);
  char buf[512];
  ssize_t n = read(pipefd[0], buf, sizeof buf);
  close(pipefd[0]);
  int st;
  waitpid(pid, &st, 0);
  std::string got(buf, n > 0 ? static_cast<size_t>(n) : 0);
  if (got.rfind("skip:", 0) == 0) GTEST_SKIP() << got;
  EXPECT_EQ(got.substr(0, got.find('|')), "copied") << got;
  EXPECT_NE(got.find("a link into the store failed: Invalid cross-device link"), std::string::npos) << got;
}

// A keeper killed with SIGKILL in the middle of a run of keeps: every keep
// it acknowledged is in the journal with its object, byte for byte, and an
// undo brings the files back.
TEST(KeeperCrash, SigkillLosesNothingAcknowledged) {
  test::TempDir tmp;
  std::string work = tmp / "w", store = tmp / "store";
  ASSERT_EQ(mkdir(work.c_str(), 0755), 0);
  constexpr int kFiles = 400;
  for (int i = 0; i < kFiles; ++i)
    write_file(work + "/f" + std::to_string(i), test::random_bytes(3000 + i, i), 0600 + (i % 8));
  auto before = test::tree_state(work);

  int acks[2];
  ASSERT_EQ(pipe(acks), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(acks[0]);
    auto k = Keeper::open(store, "crash", test::test_limits());
    if (!k) _exit(2);
    auto dir = test::open_dir(work);
    for (int i = 0; i < kFiles; ++i) {
      std::string name = "f" + std::to_string(i);
      Context c;
      c.op = Op::Unlink;
      c.path = work + "/" + name;
      c.command = 1;
      // Every other file in place (a copy), the rest deleted (a link).
      Snapshot s = i % 2 ? (*k)->keep_before_overwrite(dir.get(), name.c_str(), Context{Op::OpenTrunc, c.path, 1})
                         : (*k)->keep_before_unlink(dir.get(), name.c_str(), c);
      if (s.kept == Kept::NotKept) _exit(3);
      if (i % 2)
        truncate(c.path.c_str(), 0);
      else
        unlink(c.path.c_str());
      char b = 1;
      (void)!write(acks[1], &b, 1);  // the call went ahead
    }
    pause();
    _exit(0);
  }
  close(acks[1]);
  int acked = 0;
  char b;
  while (acked < kFiles / 2 && read(acks[0], &b, 1) == 1) ++acked;
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  while (read(acks[0], &b, 1) == 1) ++acked;  // what it finished before dying
  close(acks[0]);
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) << "the child exited " << WEXITSTATUS(st);

  auto s = Store::open(store, false);
  ASSERT_TRUE(s) << s.error().message;
  auto parsed = s->read_session("crash");
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->damaged, 0u);
  std::erase_if(parsed->snapshots, [](const Snapshot& x) { return x.op == Op::Entries; });
  ASSERT_GE(parsed->snapshots.size(), static_cast<size_t>(acked));
  for (const Snapshot& snap : parsed->snapshots) {
    auto fd = s->open_object(snap.object);
    ASSERT_TRUE(fd) << snap.path << ": " << fd.error().message;
    std::string name = snap.path.substr(work.size() + 1);
    // A delete the kill cut off left the kept link the file itself.
    EXPECT_EQ(test::read_untouched(proc_fd_path(fd->get())), before.at(name).content) << snap.path;
  }
  // Undo of the session the crash ended: the deletes come back as they were;
  // the truncations have no session-end record, so they need --force.  (The
  // kill may fall between a record and its call: that file is as before.)
  size_t deleted = 0, truncated = 0;
  for (const Snapshot& snap : parsed->snapshots) {
    FullState now = state_of(snap.path);
    std::string name = snap.path.substr(work.size() + 1);
    if (snap.op == Op::Unlink && !now.exists) ++deleted;
    if (snap.op == Op::OpenTrunc && now.content.empty()) ++truncated;
  }
  EXPECT_GE(deleted + truncated + 1, parsed->snapshots.size());
  UndoOptions opt;
  auto r = undo(*s, "crash", opt);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->applied.restored, deleted + 1);  // and the directory's times
  EXPECT_EQ(r->applied.conflicts, truncated);
  EXPECT_EQ(r->applied.failed, 0u);
  opt.plan.force = true;
  r = undo(*s, "crash", opt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->applied.failed, 0u);
  auto after = test::tree_state(work);
  for (const Snapshot& snap : parsed->snapshots) {
    std::string name = snap.path.substr(work.size() + 1);
    EXPECT_EQ(after.at(name), before.at(name)) << name;
  }
  // And a gc settles what the dead keeper left staged.
  auto g = gc(*s, {});
  ASSERT_TRUE(g);
  EXPECT_EQ(g->settled, parsed->snapshots.size());
  EXPECT_TRUE(g->live.empty());
}

}  // namespace
}  // namespace cb::keep
