// Names through mounts: the pure arithmetic on mountinfo lines, and the
// real kernel: a process in a mount namespace of its own bind-mounts a
// directory elsewhere, and the supervisor's name of an object opened
// through that mount is the host's.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "base/fd.h"
#include "host/mountinfo.h"
#include "procs/mount_map.h"
#include "tests/support/host_features.h"

namespace cb {
namespace {

constexpr const char* kInfo =
    "21 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "65 21 254:0 /home/u/project /srv rw,relatime - ext4 /dev/vda rw\n"
    "66 21 0:50 / /tmp/my\\040tmp rw - tmpfs none rw\n"
    "67 21 254:0 /home/u/project/.git /home/u/project/.git ro,relatime - ext4 /dev/vda rw\n";

TEST(MountInfo, ParsesEveryFieldAndUnescapesNames) {
  auto m = parse_mountinfo(kInfo);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[1].id, 65);
  EXPECT_EQ(m[1].parent, 21);
  EXPECT_EQ(m[1].dev, makedev(254, 0));
  EXPECT_EQ(m[1].root, "/home/u/project");
  EXPECT_EQ(m[1].point, "/srv");
  EXPECT_EQ(m[1].fstype, "ext4");
  EXPECT_FALSE(m[1].read_only);
  EXPECT_EQ(m[2].point, "/tmp/my tmp");
  EXPECT_TRUE(m[3].read_only);
  EXPECT_EQ(m[0].fstype, "ext4");  // optional fields ("shared:1") skipped
}

TEST(MountInfo, ANameThroughABindMountIsTheHostsName) {
  auto ns = parse_mountinfo(kInfo);
  std::vector<MountEntry> host = {ns[0], ns[3]};
  auto in_fs = fs_path_of(ns[1], "/srv/.git/HEAD");
  ASSERT_TRUE(in_fs);
  EXPECT_EQ(*in_fs, "/home/u/project/.git/HEAD");
  EXPECT_EQ(host_name_of(host, makedev(254, 0), *in_fs), "/home/u/project/.git/HEAD");
  EXPECT_EQ(fs_path_of(ns[1], "/srv"), "/home/u/project");
  EXPECT_FALSE(fs_path_of(ns[1], "/srvx/a"));  // not below the mount point
  // Another file system the host does not show: no host name.
  EXPECT_FALSE(host_name_of(host, makedev(0, 50), "/a"));
  // The host shows only a subtree of that device: names outside it have none.
  std::vector<MountEntry> sub = {ns[1]};
  EXPECT_EQ(host_name_of(sub, makedev(254, 0), "/home/u/project/src"), "/srv/src");
  EXPECT_FALSE(host_name_of(sub, makedev(254, 0), "/etc/passwd"));
  EXPECT_TRUE(fs_within("/a/b", "/a"));
  EXPECT_FALSE(fs_within("/ab", "/a"));
  EXPECT_TRUE(fs_within("/x", "/"));
}

TEST(MountMap, AnObjectOnAnotherNamespacesBindMountHasTheHostsName) {
  CB_REQUIRE_HOST(test::root());
  char tmpl[] = "/tmp/cb-mountmap.XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string dir = tmpl;
  ASSERT_EQ(mkdir((dir + "/src").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir + "/src/.git").c_str(), 0755), 0);
  std::ofstream(dir + "/src/.git/HEAD") << "ref\n";
  ASSERT_EQ(mkdir((dir + "/alias").c_str(), 0755), 0);
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c = 1;
    if (unshare(CLONE_NEWNS) || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ||
        mount((dir + "/src").c_str(), (dir + "/alias").c_str(), nullptr, MS_BIND, nullptr))
      c = 0;
    if (write(ready[1], &c, 1) != 1) _exit(2);
    (void)read(done[0], &c, 1);
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 1) << "the child could not make its mount";
  MountMap map(getpid(), [&] { return std::vector<pid_t>{child}; });
  // Opened through the child's root: the object on its bind mount.
  std::string through = "/proc/" + std::to_string(child) + "/root" + dir + "/alias/.git/HEAD";
  UniqueFd fd(open(through.c_str(), O_PATH | O_CLOEXEC));
  ASSERT_TRUE(fd) << through;
  EXPECT_FALSE(map.in_session_ns(MountMap::mount_id(fd.get())));
  auto name = map.host_name(fd.get(), child);
  ASSERT_TRUE(name) << name.error().message;
  EXPECT_EQ(*name, dir + "/src/.git/HEAD");
  // In the supervisor's own namespace a name is already the host's.
  UniqueFd here(open((dir + "/src/.git/HEAD").c_str(), O_PATH | O_CLOEXEC));
  EXPECT_EQ(*map.host_name(here.get(), getpid()), dir + "/src/.git/HEAD");
  char c = 0;
  ASSERT_EQ(write(done[1], &c, 1), 1);
  waitpid(child, nullptr, 0);
  for (int f : {ready[0], ready[1], done[0], done[1]}) close(f);
  std::string rm = "rm -rf " + dir;
  ASSERT_EQ(system(rm.c_str()), 0);
}

}  // namespace
}  // namespace cb
