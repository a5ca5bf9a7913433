// Swarms (issue 21): many `cottonbox run` started at once into one audit
// database, new and then existing, as root and as a plain user.  Checked
// the way an orchestrator would: every cottonbox exits 0 (none refused),
// every command ran exactly once, and `cottonbox sessions --json` lists
// every session as ended with its exit status.
//
// All sessions are live at once: each command opens a gate (a FIFO the
// test holds open), says that it runs, and waits on the gate, which the
// test opens only when every command has said so.  How long each wave
// takes is printed, never asserted.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/host_features.h"

namespace {

const std::string kCottonbox = COTTONBOX_BIN;
constexpr int kSessions = 64;
// Generous on a 2-core machine shared with builds: 64 sessions with the
// eBPF tracer start in a few seconds there.
constexpr auto kWaveTimeout = std::chrono::seconds(240);
// The throwaway user of the plain-user runs (made with useradd --system).
constexpr const char* kUser = "cbswarm";

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  bool drop = false;  // setuid to it before exec
};

// Forks a child that becomes `who` (if asked), sends its output to files
// and execs argv once `release` reads EOF (the child closes its copy of the
// write end, `release_w`).
pid_t spawn(const std::vector<std::string>& argv, const Identity& who, const std::string& out, const std::string& err,
            const std::map<std::string, std::string>& env, int release = -1, int release_w = -1) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (release_w >= 0) close(release_w);
  int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int n = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (o < 0 || e < 0 || n < 0) _exit(120);
  dup2(n, 0);
  dup2(o, 1);
  dup2(e, 2);
  if (who.drop && (setgroups(0, nullptr) != 0 || setgid(who.gid) != 0 || setuid(who.uid) != 0)) _exit(121);
  for (auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  unsetenv("XDG_RUNTIME_DIR");  // nothing of the caller's: no GUI to ask
  if (release >= 0) {
    char c;
    while (read(release, &c, 1) > 0) {
    }
  }
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  execv(a[0], a.data());
  _exit(127);
}

// Whether `pid` has exited, leaving it to be reaped.
bool exited(pid_t pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

int wait_status(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

class Swarm : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cb-swarm.XXXXXX";
    ASSERT_TRUE(mkdtemp(tmpl));
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);
  }
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "kept " << dir_ << " for inspection\n";
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Runs one wave of kSessions sessions into `db` as `who`, in a directory
  // of its own named `name` (owned by `who`), and checks it from the outside.
  void wave(const std::string& name, const std::string& db, const Identity& who, const std::string& home) {
    SCOPED_TRACE(name);
    std::string wd = dir_ + "/" + name;
    ASSERT_EQ(mkdir(wd.c_str(), 0755), 0);
    std::string gate = wd + "/gate";
    ASSERT_EQ(mkfifo(gate.c_str(), 0644), 0);
    if (who.drop) {
      ASSERT_EQ(chown(wd.c_str(), who.uid, who.gid), 0);
      ASSERT_EQ(chown(gate.c_str(), who.uid, who.gid), 0);
    }
    // Held open for the whole wave, so that a command's open of the gate
    // never blocks; its read does, until the test writes.
    int gate_fd = open(gate.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(gate_fd, 0);
    int release[2];
    ASSERT_EQ(pipe2(release, O_CLOEXEC), 0);
    std::map<std::string, std::string> env{{"HOME", home}};
    std::vector<pid_t> pids;
    for (int k = 0; k < kSessions; ++k) {
      std::string ran = wd + "/ran." + std::to_string(k);
      std::string cmd = "exec 3<" + gate + "; echo $$ >> " + ran + "; read x <&3; exit 0";
      std::vector<std::string> argv{
          kCottonbox, "run",     "--quiet", "--ask", "deny", "--db", db, "--name", name + "-" + std::to_string(k),
          "--",       "/bin/sh", "-c",      cmd};
      std::string base = wd + "/cb." + std::to_string(k);
      pid_t pid = spawn(argv, who, base + ".out", base + ".err", env, release[0], release[1]);
      ASSERT_GT(pid, 0);
      pids.push_back(pid);
    }
    close(release[0]);
    auto t0 = std::chrono::steady_clock::now();
    close(release[1]);  // all start together

    // Every command runs before any is let go.
    auto deadline = t0 + kWaveTimeout;
    int running = 0;
    for (;;) {
      running = 0;
      for (int k = 0; k < kSessions; ++k) running += std::filesystem::exists(wd + "/ran." + std::to_string(k)) ? 1 : 0;
      if (running == kSessions || std::chrono::steady_clock::now() > deadline) break;
      // A cottonbox that exited already will never say so: stop waiting.
      bool someone_gone = false;
      for (pid_t p : pids) someone_gone |= exited(p);
      if (someone_gone && running < kSessions) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));  // its peers may be just behind
        running = 0;
        for (int k = 0; k < kSessions; ++k)
          running += std::filesystem::exists(wd + "/ran." + std::to_string(k)) ? 1 : 0;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    double all_live_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(running, kSessions) << "commands running at once";
    // A line for each command, also for one that reaches the gate late (when
    // another session failed): the gate stays open until all have ended.
    std::string lines(kSessions, '\n');
    EXPECT_EQ(write(gate_fd, lines.data(), lines.size()), static_cast<ssize_t>(lines.size()));
    std::vector<int> status;
    for (pid_t p : pids) {
      // Bounded: kill what outlives the wave's deadline.
      while (!exited(p) && std::chrono::steady_clock::now() < deadline + kWaveTimeout)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!exited(p)) kill(p, SIGKILL);
      status.push_back(wait_status(p));
    }
    close(gate_fd);
    double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[ swarm    ] " << name << ": " << kSessions << " sessions all live after " << all_live_s
              << " s, all ended after " << total_s << " s\n";

    // None refused, and nothing about a locked database reached the user.
    for (int k = 0; k < kSessions; ++k) {
      std::string err = read_file(wd + "/cb." + std::to_string(k) + ".err");
      EXPECT_EQ(status[k], 0) << "session " << k << ": " << err;
      EXPECT_EQ(err.find("locked"), std::string::npos) << "session " << k << ": " << err;
      // Exactly once: one line, the pid of the shell.
      std::string ran = read_file(wd + "/ran." + std::to_string(k));
      EXPECT_EQ(std::count(ran.begin(), ran.end(), '\n'), 1) << "session " << k << " ran: [" << ran << "]";
    }

    // The record, as the user reads it.
    std::string out = wd + "/sessions.json";
    pid_t lp = spawn({kCottonbox, "sessions", "--db", db, "--json"}, who, out, wd + "/sessions.err", env);
    ASSERT_EQ(wait_status(lp), 0) << read_file(wd + "/sessions.err");
    std::map<std::string, int> seen;
    std::istringstream lines_in(read_file(out));
    for (std::string line; std::getline(lines_in, line);) {
      if (line.empty()) continue;
      auto j = nlohmann::json::parse(line);
      std::string n = j.value("name", "");
      if (n.rfind(name + "-", 0) != 0) continue;  // another wave's
      ++seen[n];
      EXPECT_EQ(j.value("state", ""), "ended") << n;
      EXPECT_TRUE(j["exit_status"].is_number() && j["exit_status"].get<int>() == 0) << n << ": " << j["exit_status"];
      EXPECT_EQ(j.value("uid", -1), static_cast<int>(who.uid)) << n;
    }
    for (int k = 0; k < kSessions; ++k)
      EXPECT_EQ(seen[name + "-" + std::to_string(k)], 1) << "session " << k << " in the database";
  }

  std::string dir_;
};

TEST_F(Swarm, SixtyFourSessionsAtOnceAsRootIntoANewThenTheSameDatabase) {
  CB_REQUIRE_HOST(cb::test::root());
  std::string db = dir_ + "/root/audit.db";  // its directory too is made by the first
  Identity root;
  wave("root-new", db, root, dir_);
  wave("root-existing", db, root, dir_);
}

TEST_F(Swarm, SixtyFourSessionsAtOnceAsAPlainUserIntoANewThenTheSameDatabase) {
  // Root makes the throwaway user; the sessions then run as that user.
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make and become a throwaway user (" << kUser << ")";
  if (!getpwnam(kUser)) {
    std::string cmd = std::string("useradd --system --no-create-home --shell /usr/sbin/nologin ") + kUser;
    if (system(cmd.c_str()) != 0 || !getpwnam(kUser)) GTEST_SKIP() << "cannot create the user " << kUser;
  }
  const passwd* pw = getpwnam(kUser);
  Identity user{pw->pw_uid, pw->pw_gid, true};
  // The user must reach the binary (a build tree under a private home
  // would not let it).
  pid_t probe = spawn({"/bin/sh", "-c", "test -x " + kCottonbox}, user, "/dev/null", "/dev/null", {});
  if (wait_status(probe) != 0) GTEST_SKIP() << kUser << " cannot execute " << kCottonbox;
  std::string home = dir_ + "/home";
  ASSERT_EQ(mkdir(home.c_str(), 0700), 0);
  ASSERT_EQ(chown(home.c_str(), user.uid, user.gid), 0);
  // The default place, under the user's own home: made by the first session.
  std::string db = home + "/.local/share/cottonbox/audit.db";
  wave("user-new", db, user, home);
  wave("user-existing", db, user, home);
  struct stat st;
  ASSERT_EQ(stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, user.uid);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
