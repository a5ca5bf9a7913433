// The supervisor's short way for calls the kernel may carry out (carry.h):
// which calls qualify, which names can be judged by name, and the
// writable-directory test itself against real directories and a real
// read-only bind mount.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "notify/carry.h"
#include "notify/resolve.h"

namespace cb {
namespace {

TEST(Carry, ShapesOfTheCallsThatCreateAName) {
  uint64_t a[6] = {};
  a[0] = static_cast<uint64_t>(AT_FDCWD);
  a[1] = 0x1000;
  a[2] = O_WRONLY | O_CREAT | O_EXCL;
  auto s = carry_shape(__NR_openat, a);
  EXPECT_EQ(s.kind, CarryShape::Create);
  EXPECT_EQ(s.dirfd, AT_FDCWD);
  EXPECT_EQ(s.path, 0x1000u);
  EXPECT_FALSE(s.check_final) << "O_EXCL never follows a final symlink";
  a[2] = O_WRONLY | O_CREAT | O_TRUNC;
  EXPECT_TRUE(carry_shape(__NR_openat, a).check_final);
  a[2] = O_WRONLY | O_TRUNC;
  EXPECT_EQ(carry_shape(__NR_openat, a).kind, CarryShape::None) << "no O_CREAT: nothing to create";
  a[2] = O_PATH | O_CREAT;
  EXPECT_EQ(carry_shape(__NR_openat, a).kind, CarryShape::None);

  uint64_t c[6] = {0x2000};
  EXPECT_TRUE(carry_shape(__NR_creat, c).check_final);
  EXPECT_EQ(carry_shape(__NR_mkdir, c).kind, CarryShape::Create);
  EXPECT_FALSE(carry_shape(__NR_mkdir, c).check_final) << "mkdir never follows the final name";
  uint64_t sym[6] = {0x3000, 0x4000};
  EXPECT_EQ(carry_shape(__NR_symlink, sym).path, 0x4000u) << "the new name, not the link's contents";
  uint64_t symat[6] = {0x3000, 7, 0x5000};
  EXPECT_EQ(carry_shape(__NR_symlinkat, symat).dirfd, 7);
  EXPECT_EQ(carry_shape(__NR_symlinkat, symat).path, 0x5000u);
  EXPECT_EQ(carry_shape(__NR_linkat, a).kind, CarryShape::Link);
  for (int nr : {__NR_openat2, __NR_rename, __NR_renameat2, __NR_unlinkat, __NR_mknodat, __NR_truncate})
    EXPECT_EQ(carry_shape(nr, a).kind, CarryShape::None) << nr;
}

TEST(Carry, ThePlanSaysWhichShapesMayTakeTheShortWay) {
  const ActionMask create = bit(Action::FileCreate);
  const ActionMask existing = bit(Action::FileWrite) | bit(Action::FileTruncate);
  CarryShape excl{CarryShape::Create, AT_FDCWD, 1, false}, plain{CarryShape::Create, AT_FDCWD, 1, true};
  EXPECT_TRUE(short_way_allowed(create, excl));
  EXPECT_FALSE(short_way_allowed(create, plain)) << "an existing file's write is the supervisor's to refuse";
  EXPECT_TRUE(short_way_allowed(create | existing, plain));
  EXPECT_FALSE(short_way_allowed(existing, excl));
  EXPECT_TRUE(short_way_allowed(bit(Action::FileLink), CarryShape{CarryShape::Link}));
  EXPECT_FALSE(short_way_allowed(create | existing, CarryShape{CarryShape::Link}));
  EXPECT_FALSE(short_way_allowed(~ActionMask{0}, CarryShape{}));
}

TEST(Carry, NamesThatMayLeadElsewhereAreForgottenAfter) {
  for (int nr : {__NR_rename, __NR_renameat2, __NR_symlink, __NR_symlinkat, __NR_mount, __NR_move_mount, __NR_chroot,
                 __NR_unshare})
    EXPECT_TRUE(may_redirect_names(nr)) << nr;
  for (int nr : {__NR_openat, __NR_mkdir, __NR_linkat, __NR_unlinkat}) EXPECT_FALSE(may_redirect_names(nr)) << nr;
}

TEST(Carry, OnlyPlainNamesAreJudgedByName) {
  auto p = split_plain("a/b/c.txt");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->dir, "a/b");
  EXPECT_EQ(p->name, "c.txt");
  p = split_plain("c.txt");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->dir, "");
  p = split_plain("/c.txt");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->dir, "/");
  p = split_plain("/tmp/x/newdir//");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->dir, "/tmp/x");
  EXPECT_EQ(p->name, "newdir");
  for (const char* bad :
       {"", "/", "..", "a/../b", "../b", "a/..", "a/.", ".", "/proc", "/proc/self/cwd/x", "/proc/1/root/etc/x"})
    EXPECT_FALSE(split_plain(bad)) << bad;
  EXPECT_TRUE(split_plain("/process/x")) << "only procfs itself";
  EXPECT_TRUE(split_plain("a/./b")) << "'.' stays where it is";
}

// A child in its own mount namespace, with a read-only bind mount and a
// symlink into it, answers for a PathContext of itself.
class CarryPrivileged : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "needs root (a private mount namespace and a bind mount)";
    char tmpl[] = "/tmp/cb-carry.XXXXXX";
    dir_ = mkdtemp(tmpl);
    ASSERT_EQ(mkdir((dir_ + "/rw").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/rw/sub").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/ro").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/ro/in").c_str(), 0755), 0);
    ASSERT_EQ(symlink((dir_ + "/ro").c_str(), (dir_ + "/rw/to-ro").c_str()), 0);
    ASSERT_EQ(close(open((dir_ + "/rw/exists").c_str(), O_CREAT | O_WRONLY, 0644)), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) (void)!system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
};

TEST_F(CarryPrivileged, WritableDirectoriesAreToldFromReadOnlyOnesAndSymlinks) {
  int ready[2], go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  if (child == 0) {
    if (unshare(CLONE_NEWNS) || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ||
        mount((dir_ + "/ro").c_str(), (dir_ + "/ro").c_str(), nullptr, MS_BIND, nullptr) ||
        mount(nullptr, (dir_ + "/ro").c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) ||
        chdir((dir_ + "/rw").c_str()))
      _exit(1);
    char c = 'r';
    (void)!write(ready[1], &c, 1);
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1) << "the child could not make its mounts";
  {
    FsCache fs;
    std::unordered_map<int, DirfdName> dirfds;
    PathContext ctx(child, child, &fs, &dirfds, 0, -1);
    WritableDirs w;
    // Beside the child's cwd, in a subdirectory, absolute.
    EXPECT_TRUE(w.new_name_outside_read_only(ctx, "new", true));
    EXPECT_TRUE(w.new_name_outside_read_only(ctx, "sub/new", true));
    EXPECT_TRUE(w.new_name_outside_read_only(ctx, dir_ + "/rw/sub/new", true));
    // In the read-only tree, as the child sees it (the parent's view has no such mount).
    EXPECT_FALSE(w.new_name_outside_read_only(ctx, dir_ + "/ro/new", false));
    EXPECT_FALSE(w.new_name_outside_read_only(ctx, dir_ + "/ro/in/new", false));
    // Through a symlink, through "..", an existing name, a missing directory: the long way.
    EXPECT_FALSE(w.new_name_outside_read_only(ctx, "to-ro/new", false));
    EXPECT_FALSE(w.new_name_outside_read_only(ctx, "../ro/new", false));
    EXPECT_TRUE(w.new_name_outside_read_only(ctx, "exists", true)) << "opened where it is";
    EXPECT_TRUE(w.new_name_outside_read_only(ctx, "exists", false)) << "O_EXCL: the kernel says EEXIST";
    EXPECT_FALSE(w.new_name_outside_read_only(ctx, "to-ro", true)) << "a final symlink the kernel would follow";
    EXPECT_TRUE(w.new_name_outside_read_only(ctx, "to-ro", false)) << "O_EXCL, mkdir: never followed";
    EXPECT_FALSE(w.new_name_outside_read_only(ctx, "missing/new", false));
    // Remembered by name until forgotten: a name repointed into the
    // read-only tree is seen once forget() has been called.
    ASSERT_EQ(rename((dir_ + "/rw/sub").c_str(), (dir_ + "/rw/sub.old").c_str()), 0);
    ASSERT_EQ(symlink((dir_ + "/ro").c_str(), (dir_ + "/rw/sub").c_str()), 0);
    EXPECT_TRUE(w.new_name_outside_read_only(ctx, "sub/new", false)) << "stale until forgotten";
    w.forget();
    EXPECT_FALSE(w.new_name_outside_read_only(ctx, "sub/new", false));
  }
  (void)!write(go[1], "g", 1);
  int st = 0;
  waitpid(child, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

}  // namespace
}  // namespace cb
