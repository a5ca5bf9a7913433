// Who serves a unix socket, on real sockets and processes: a server forked
// here is outside a "session" rooted elsewhere and inside one rooted here.
#include "host/unix_servers.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>

#include "base/fd.h"

namespace cb {
namespace {

// A child that listens on `path` (or the abstract `name` when path is empty)
// until killed.
struct Server {
  pid_t pid = -1;
  Server(const std::string& path, const std::string& name) {
    int ready[2];
    if (pipe(ready) != 0) return;
    pid = fork();
    if (pid == 0) {
      int s = socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un un{};
      un.sun_family = AF_UNIX;
      socklen_t len;
      if (!path.empty()) {
        strncpy(un.sun_path, path.c_str(), sizeof un.sun_path - 1);
        len = sizeof un;
      } else {
        memcpy(un.sun_path + 1, name.data(), name.size());
        len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
      }
      if (bind(s, reinterpret_cast<sockaddr*>(&un), len) != 0 || listen(s, 4) != 0) _exit(1);
      (void)!write(ready[1], "x", 1);
      pause();
      _exit(0);
    }
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) pid = -1;
    close(ready[0]);
  }
  ~Server() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

class UnixServersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cb-unix-servers.XXXXXX";
    dir_ = mkdtemp(tmpl);
    // A process that is no ancestor of anything here: a "session" rooted
    // there holds none of this test's processes.
    other_ = fork();
    if (other_ == 0) {
      pause();
      _exit(0);
    }
  }
  void TearDown() override {
    kill(other_, SIGKILL);
    waitpid(other_, nullptr, 0);
    std::string cmd = "rm -rf " + dir_;
    (void)!system(cmd.c_str());
  }
  std::string dir_;
  pid_t other_ = -1;
};

TEST_F(UnixServersTest, AListeningSocketIsFoundByTheFileItIsBoundTo) {
  std::string path = dir_ + "/s.sock";
  Server srv(path, "");
  ASSERT_GT(srv.pid, 0);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  auto ls = unix_listeners();
  ASSERT_TRUE(ls.ok()) << ls.error().message;
  const UnixListener* found = nullptr;
  for (const auto& l : *ls)
    if (l.vfs_ino == static_cast<uint32_t>(st.st_ino) && l.vfs_dev == st.st_dev) found = &l;
  ASSERT_NE(found, nullptr) << "sock_diag lists the socket with its file";
  auto holders = socket_holders(found->sock_ino, nullptr);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0], srv.pid);
  EXPECT_TRUE(descends_from(srv.pid, getpid()));
  EXPECT_FALSE(descends_from(srv.pid, other_));
}

TEST_F(UnixServersTest, AServerOutsideTheSessionIsNamedUnderEveryNameOfItsSocket) {
  std::string path = dir_ + "/s.sock";
  Server srv(path, "");
  ASSERT_GT(srv.pid, 0);
  ASSERT_EQ(symlink(path.c_str(), (dir_ + "/link").c_str()), 0);
  ASSERT_EQ(link(path.c_str(), (dir_ + "/hard").c_str()), 0);
  UnixServers outside(other_, nullptr);
  for (const char* name : {"/s.sock", "/link", "/hard"}) {
    UniqueFd f{open((dir_ + name).c_str(), O_PATH | O_CLOEXEC)};
    ASSERT_TRUE(f) << name;
    auto servers = outside.outside_servers(f.get());
    ASSERT_EQ(servers.size(), 1u) << name;
    EXPECT_EQ(servers[0], self_exe()) << name;
  }
  // The same server in the session: the session's own business.
  UnixServers inside(getpid(), nullptr);
  UniqueFd f{open(path.c_str(), O_PATH | O_CLOEXEC)};
  EXPECT_TRUE(inside.outside_servers(f.get()).empty());
  // ... found among the processes the supervisor knows, without /proc.
  UnixServers known(other_, [&] { return std::vector<pid_t>{srv.pid}; });
  EXPECT_TRUE(known.outside_servers(f.get()).empty());
}

TEST_F(UnixServersTest, AnAbstractSocketIsFoundByItsName) {
  std::string name = "cb-unix-servers-" + std::to_string(getpid());
  Server srv("", name);
  ASSERT_GT(srv.pid, 0);
  UnixServers outside(other_, nullptr);
  auto servers = outside.outside_servers(std::string_view(name));
  ASSERT_EQ(servers.size(), 1u);
  EXPECT_EQ(servers[0], self_exe());
  EXPECT_TRUE(outside.outside_servers(std::string_view("no-such-" + name)).empty());
}

TEST_F(UnixServersTest, NobodyListeningIsNobody) {
  std::string path = dir_ + "/s.sock";
  { Server srv(path, ""); }  // bound, then gone: the file stays
  UnixServers outside(other_, nullptr);
  UniqueFd f{open(path.c_str(), O_PATH | O_CLOEXEC)};
  ASSERT_TRUE(f);
  EXPECT_TRUE(outside.outside_servers(f.get()).empty());
  UniqueFd notsock{open(dir_.c_str(), O_PATH | O_CLOEXEC)};
  EXPECT_TRUE(outside.outside_servers(notsock.get()).empty());
}

}  // namespace
}  // namespace cb
