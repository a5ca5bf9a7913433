// Settling and gc on a real store: identical contents stored once, sessions
// removed by age and by size oldest first, live sessions and their staged
// objects left alone, orphans swept.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keep/fsutil.h"
#include "keep/gc.h"
#include "keep/keeper.h"
#include "keep/meta.h"
#include "tests/keep/test_util.h"

namespace cb::keep {
namespace {

using test::write_file;

constexpr int64_t kDay = 86400LL * 1000000000;

class GcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = tmp_ / "w";
    store_ = tmp_ / "store";
    ASSERT_EQ(mkdir(work_.c_str(), 0755), 0);
  }

  // A finished session that deleted files with these contents, at `ts_ns`.
  void session(const std::string& name, int64_t ts_ns, const std::vector<std::string>& contents) {
    auto k = Keeper::open(store_, name, test::test_limits());
    ASSERT_TRUE(k) << k.error().message;
    auto dir = test::open_dir(work_);
    for (size_t i = 0; i < contents.size(); ++i) {
      std::string f = name + "-" + std::to_string(i);
      write_file(work_ + "/" + f, contents[i]);
      Context c;
      c.op = Op::Unlink;
      c.path = work_ + "/" + f;
      c.ts_ns = ts_ns;
      ASSERT_EQ((*k)->keep_before_unlink(dir.get(), f.c_str(), c).kept, Kept::Linked);
      ASSERT_EQ(unlink((work_ + "/" + f).c_str()), 0);
    }
    ASSERT_TRUE((*k)->finish());
  }

  size_t count(const std::string& sub) {
    size_t n = 0;
    auto d = Store::open(store_, false);
    int fd = sub == "staging" ? d->staging_fd() : d->objects_fd();
    auto names = list_dir(fd);
    if (sub == "staging") return names->size();
    for (const std::string& fan : *names) {
      UniqueFd f(openat(fd, fan.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (f) n += list_dir(f.get())->size();
    }
    return n;
  }

  test::TempDir tmp_;
  std::string work_, store_;
};

TEST_F(GcTest, SettlingStoresIdenticalContentsOnce) {
  session("a", now_ns(), {"same bytes", "same bytes", "other bytes"});
  EXPECT_EQ(count("objects"), 2u);
  EXPECT_EQ(count("staging"), 0u);
  auto s = Store::open(store_, false);
  auto parsed = s->read_session("a");
  ASSERT_TRUE(parsed);
  std::set<std::string> objects;
  for (const Snapshot& snap : parsed->snapshots)
    if (!snap.object.empty()) {
      EXPECT_EQ(snap.object.substr(0, 2), "o:");
      EXPECT_EQ(snap.object.substr(2), snap.sha256);
      objects.insert(snap.object);
    }
  EXPECT_EQ(objects.size(), 2u);
  // The session-end records: every file deleted, the directory still there.
  size_t absent = 0;
  for (const Left& l : parsed->left) absent += l.fp.known && l.fp.type == FileType::Absent;
  EXPECT_EQ(absent, 3u);
  EXPECT_EQ(s->recorded_usage(), std::string("same bytes").size() + std::string("other bytes").size());
}

TEST_F(GcTest, ByAgeRemovesOldSessionsAndTheObjectsOnlyTheyHeld) {
  int64_t now = now_ns();
  session("old", now - 40 * kDay, {"only in old", "shared"});
  session("new", now - 1 * kDay, {"only in new", "shared"});
  EXPECT_EQ(count("objects"), 3u);
  auto s = Store::open(store_, false);
  auto r = gc(*s, {.max_age_ns = 30 * kDay, .now_ns = now});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->removed, std::vector<std::string>{"old"});
  EXPECT_EQ(r->objects_removed, 1u);
  EXPECT_EQ(count("objects"), 2u);
  EXPECT_EQ(*s->sessions(), std::vector<std::string>{"new"});
  // What is left is whole: every object of "new" opens.
  auto kept = s->read_session("new");
  ASSERT_TRUE(kept);
  for (const Snapshot& snap : kept->snapshots) {
    if (!snap.object.empty()) {
      EXPECT_TRUE(s->open_object(snap.object)) << snap.object;
    }
  }
  EXPECT_EQ(r->bytes_after, std::string("only in new").size() + std::string("shared").size());
}

TEST_F(GcTest, BySizeRemovesTheOldestFirstUntilUnder) {
  int64_t now = now_ns();
  session("s1", now - 3 * kDay, {std::string(1000, '1')});
  session("s2", now - 2 * kDay, {std::string(1000, '2')});
  session("s3", now - 1 * kDay, {std::string(1000, '3')});
  auto s = Store::open(store_, false);
  auto r = gc(*s, {.max_bytes = 1500, .now_ns = now});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->removed, (std::vector<std::string>{"s1", "s2"}));
  EXPECT_EQ(r->bytes_before, 3000u);
  EXPECT_EQ(r->bytes_after, 1000u);
  EXPECT_EQ(s->recorded_usage(), 1000u);
}

TEST_F(GcTest, ALiveSessionAndItsStagedObjectsAreLeftAlone) {
  auto live = Keeper::open(store_, "live", test::test_limits());
  ASSERT_TRUE(live);
  write_file(work_ + "/f", "being kept");
  auto dir = test::open_dir(work_);
  Context c;
  c.op = Op::Unlink;
  c.path = work_ + "/f";
  c.ts_ns = now_ns() - 100 * kDay;
  ASSERT_EQ((*live)->keep_before_unlink(dir.get(), "f", c).kept, Kept::Linked);
  // A link whose record a keep in flight has not written yet.
  write_file(work_ + "/g", "in flight");
  ASSERT_EQ(linkat(AT_FDCWD, (work_ + "/g").c_str(), AT_FDCWD, (store_ + "/staging/live.99").c_str(), 0), 0);
  // And an orphan of a dead session.
  ASSERT_EQ(linkat(AT_FDCWD, (work_ + "/g").c_str(), AT_FDCWD, (store_ + "/staging/dead.1").c_str(), 0), 0);

  auto s = Store::open(store_, false);
  auto r = gc(*s, {.max_age_ns = 1 * kDay, .max_bytes = 1});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->removed.empty());
  EXPECT_EQ(r->live, std::vector<std::string>{"live"});
  EXPECT_EQ(r->objects_removed, 1u);  // dead.1
  EXPECT_EQ(count("staging"), 2u);    // live.1 and live.99
  EXPECT_TRUE(s->read_session("live"));

  // Once the keeper is gone, the same gc settles and removes it.
  live->reset();
  r = gc(*s, {.max_age_ns = 1 * kDay});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->settled, 1u);
  EXPECT_EQ(r->removed, std::vector<std::string>{"live"});
  EXPECT_EQ(count("staging"), 0u);
  EXPECT_EQ(count("objects"), 0u);
}

TEST_F(GcTest, ASettledLinkWhoseDeleteNeverHappenedIsCopied) {
  // The keep was made, the unlink then failed or was not carried out: the
  // staged link shares the inode with a live name, and settling must not
  // take that inode (or chmod it) into the store.
  write_file(work_ + "/f", "still here", 0664);
  {
    auto k = Keeper::open(store_, "nodelete", test::test_limits());
    ASSERT_TRUE(k);
    auto dir = test::open_dir(work_);
    Context c;
    c.op = Op::Unlink;
    c.path = work_ + "/f";
    ASSERT_EQ((*k)->keep_before_unlink(dir.get(), "f", c).kept, Kept::Linked);
    ASSERT_TRUE((*k)->finish());
  }
  struct stat st;
  ASSERT_EQ(stat((work_ + "/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(st.st_mode & 07777, 0664u);
  test::write_file(work_ + "/f", "changed later", 0664);
  auto s = Store::open(store_, false);
  auto parsed = s->read_session("nodelete");
  ASSERT_TRUE(parsed);
  for (const Snapshot& snap : parsed->snapshots)
    if (snap.path == work_ + "/f") {
      auto fd = s->open_object(snap.object);
      ASSERT_TRUE(fd);
      EXPECT_EQ(test::read_file(proc_fd_path(fd->get())), "still here");
    }
}

}  // namespace
}  // namespace cb::keep
