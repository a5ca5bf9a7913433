// The resident tracer, checked the way a user would: `cottonbox run`
// sessions of root and of a plain user recorded through one `cottonbox
// tracer serve`, read back with `cottonbox sessions/events --json`.
//
// Each test runs a service of its own on a socket of its own (under
// /run/cottonbox, hidden from sessions like the real one) and points the
// sessions at it with COTTONBOX_TRACER_SOCKET, so that the host's service,
// and sessions of other tests, are never touched.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/fd.h"
#include "tests/support/host_features.h"
#include "trace/tracer_service.h"

namespace {

const std::string kCottonbox = COTTONBOX_BIN;
constexpr const char* kUser = "cbtracerd";  // throwaway, made with useradd --system

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Ran {
  int status = -1;
  std::string out, err;
};

// Runs a shell command line; its output in files (no pipe to fill up).
Ran sh(const std::string& cmd, const std::string& dir) {
  static int n = 0;
  std::string o = dir + "/out." + std::to_string(++n), e = dir + "/err." + std::to_string(n);
  int st = std::system((cmd + " >" + o + " 2>" + e + " </dev/null").c_str());
  Ran r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = read_file(o);
  r.err = read_file(e);
  return r;
}

std::vector<nlohmann::json> json_lines(const std::string& s) {
  std::vector<nlohmann::json> v;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

bool any_contains(const nlohmann::json& list, const std::string& what) {
  for (const auto& d : list)
    if (d.is_string() && d.get<std::string>().find(what) != std::string::npos) return true;
  return false;
}

class TracerServicePrivileged : public ::testing::Test {
 protected:
  void SetUp() override {
    CB_REQUIRE_HOST(cb::test::root());
    CB_REQUIRE_HOST(cb::test::bpf_programs());
    char tmpl[] = "/tmp/cb-tracerd.XXXXXX";
    ASSERT_TRUE(mkdtemp(tmpl));
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);
    mkdir("/run/cottonbox", 0755);
    sock_dir_ = "/run/cottonbox/test-" + std::to_string(getpid());
    mkdir(sock_dir_.c_str(), 0755);
    sock_ = sock_dir_ + "/tracer.sock";
    env_ = "COTTONBOX_TRACER_SOCKET=" + sock_ + " ";
  }

  void TearDown() override {
    stop_service();
    std::error_code ec;
    std::filesystem::remove_all(sock_dir_, ec);
    if (HasFailure()) {
      std::cerr << "kept " << dir_ << " for inspection\n";
      return;
    }
    std::filesystem::remove_all(dir_, ec);
  }

  void start_service() {
    log_ = dir_ + "/service.log";
    service_ = fork();
    if (service_ == 0) {
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      execl(kCottonbox.c_str(), "cottonbox", "tracer", "serve", "--keep", "--socket", sock_.c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 1000; ++i) {
      if (cb::tracer_status(sock_)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "the tracer service did not answer: " << read_file(log_);
  }

  void stop_service() {
    if (service_ <= 0) return;
    kill(service_, SIGTERM);
    int st;
    waitpid(service_, &st, 0);
    service_ = -1;
  }

  // `cottonbox run` as root, or as the throwaway user when `plain`.
  std::string run_cmd(const std::string& db, const std::string& command, bool plain = false,
                      const std::string& extra = "") {
    std::string pre = env_;
    if (plain)
      pre = "setpriv --reuid " + std::string(kUser) + " --regid " + kUser + " --clear-groups env HOME=" + dir_ + " " +
            env_;
    return "cd " + dir_ + " && " + pre + kCottonbox + " run --db " + db + " --ask deny " + extra + " -- /bin/sh -c " +
           quote(command);
  }

  nlohmann::json session(const std::string& db) {
    auto r = sh(kCottonbox + " sessions --json --db " + db, dir_);
    auto v = json_lines(r.out);
    if (v.empty()) return {};
    return v.back();
  }

  std::vector<nlohmann::json> events(const std::string& db) {
    return json_lines(sh(kCottonbox + " events --json --db " + db, dir_).out);
  }

  static bool has_event(const std::vector<nlohmann::json>& evs, const std::string& action, const std::string& path) {
    for (const auto& e : evs)
      if (e.value("action", "") == action && e.value("path", "") == path) return true;
    return false;
  }

  // Recorded through the service: the tracer, the exec and the open of the
  // command, and no mark that says otherwise.
  void expect_recorded(const std::string& db, const std::string& file) {
    auto s = session(db);
    ASSERT_FALSE(s.is_null());
    EXPECT_EQ(s.value("tracer", ""), "seccomp,ebpf");
    EXPECT_FALSE(any_contains(s["degraded"], "seccomp-only")) << s["degraded"].dump();
    EXPECT_FALSE(any_contains(s["degraded"], "tracer")) << s["degraded"].dump();
    auto evs = events(db);
    EXPECT_TRUE(has_event(evs, "proc.exec", "/usr/bin/cat")) << "no exec of cat recorded";
    EXPECT_TRUE(has_event(evs, "file.read", file)) << "no open of " << file << " recorded";
    for (const auto& e : evs)
      if (e.value("action", "") == "proc.exec") {
        EXPECT_EQ(e.value("source", ""), "ebpf");
      }
  }

  std::string dir_, sock_dir_, sock_, env_, log_;
  pid_t service_ = -1;
};

TEST_F(TracerServicePrivileged, RootSessionIsRecordedThroughTheService) {
  ASSERT_NO_FATAL_FAILURE(start_service());
  write_file(dir_ + "/marker", "x");
  std::string db = dir_ + "/root.db";
  auto r = sh(run_cmd(db, "cat " + dir_ + "/marker"), dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_NO_FATAL_FAILURE(expect_recorded(db, dir_ + "/marker"));
  // Through the service, not a load of the session's own.
  EXPECT_NE(read_file(log_).find("slot 0 for pid"), std::string::npos) << read_file(log_);
  auto tree = sh(kCottonbox + " tree --session 1 --db " + db, dir_);
  EXPECT_NE(tree.out.find("cat " + dir_ + "/marker"), std::string::npos) << tree.out;
}

TEST_F(TracerServicePrivileged, PlainUserSessionIsRecordedAndNotDegradedForIt) {
  if (getpwnam(kUser) == nullptr &&
      std::system(("useradd --system --no-create-home --shell /usr/sbin/nologin " + std::string(kUser)).c_str()) != 0)
    GTEST_SKIP() << "cannot make the throwaway user " << kUser;
  if (std::system("command -v setpriv >/dev/null") != 0) GTEST_SKIP() << "no setpriv";
  ASSERT_NO_FATAL_FAILURE(start_service());
  passwd* pw = getpwnam(kUser);
  ASSERT_NE(pw, nullptr);
  ASSERT_EQ(chown(dir_.c_str(), pw->pw_uid, pw->pw_gid), 0);
  write_file(dir_ + "/marker", "x");
  std::string db = dir_ + "/user.db";
  auto r = sh(run_cmd(db, "cat " + dir_ + "/marker", true), dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  auto s = session(db);
  EXPECT_EQ(s.value("uid", -1), static_cast<int>(pw->pw_uid));
  ASSERT_NO_FATAL_FAILURE(expect_recorded(db, dir_ + "/marker"));
  EXPECT_NE(read_file(log_).find("(uid " + std::to_string(pw->pw_uid) + ")"), std::string::npos) << read_file(log_);
}

TEST_F(TracerServicePrivileged, PlainUserWithoutTheServiceIsSeccompOnlyAndSaysSo) {
  if (getpwnam(kUser) == nullptr &&
      std::system(("useradd --system --no-create-home --shell /usr/sbin/nologin " + std::string(kUser)).c_str()) != 0)
    GTEST_SKIP() << "cannot make the throwaway user " << kUser;
  passwd* pw = getpwnam(kUser);
  ASSERT_NE(pw, nullptr);
  ASSERT_EQ(chown(dir_.c_str(), pw->pw_uid, pw->pw_gid), 0);
  std::string db = dir_ + "/user.db";
  auto r = sh(run_cmd(db, "true", true), dir_);  // no service on sock_
  ASSERT_EQ(r.status, 0) << r.err;
  auto s = session(db);
  EXPECT_EQ(s.value("tracer", ""), "seccomp");
  EXPECT_TRUE(any_contains(s["degraded"], "seccomp-only")) << s["degraded"].dump();
}

TEST_F(TracerServicePrivileged, TwoSessionsAtOnceEachSeeOnlyTheirOwn) {
  ASSERT_NO_FATAL_FAILURE(start_service());
  write_file(dir_ + "/a-marker", "a");
  write_file(dir_ + "/b-marker", "b");
  // Both live at once: each reads its marker a few times over a second.
  std::string loop = "for i in 1 2 3 4 5; do cat " + dir_ + "/%s-marker >/dev/null; sleep 0.2; done";
  auto cmd = [&](const char* who) {
    char buf[512];
    std::snprintf(buf, sizeof buf, loop.c_str(), who);
    return run_cmd(dir_ + "/" + who + ".db", buf);
  };
  auto r = sh("(" + cmd("a") + ") & (" + cmd("b") + ") & wait", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  auto a = events(dir_ + "/a.db"), b = events(dir_ + "/b.db");
  EXPECT_TRUE(has_event(a, "file.read", dir_ + "/a-marker"));
  EXPECT_TRUE(has_event(b, "file.read", dir_ + "/b-marker"));
  EXPECT_FALSE(has_event(a, "file.read", dir_ + "/b-marker")) << "a's trail has b's read";
  EXPECT_FALSE(has_event(b, "file.read", dir_ + "/a-marker")) << "b's trail has a's read";
  // Nor any process of the other: every pid in a's trail is in a's tree.
  std::set<int> a_pids, b_pids;
  for (const auto& e : a) a_pids.insert(e.value("pid", 0));
  for (const auto& e : b) b_pids.insert(e.value("pid", 0));
  for (int p : a_pids) EXPECT_EQ(b_pids.count(p), 0u) << "pid " << p << " in both trails";
  // Both were served by the one service at once.
  EXPECT_NE(read_file(log_).find("2 live"), std::string::npos) << read_file(log_);
}

TEST_F(TracerServicePrivileged, RegistrationOfAProcessNotTheCallersChildIsRefused) {
  ASSERT_NO_FATAL_FAILURE(start_service());
  // A grandchild: its parent is our child, not us.
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t child = fork();
  if (child == 0) {
    pid_t g = fork();
    if (g == 0) {
      pause();
      _exit(0);
    }
    (void)!write(p[1], &g, sizeof g);
    pause();
    _exit(0);
  }
  pid_t grandchild = 0;
  ASSERT_EQ(read(p[0], &grandchild, sizeof grandchild), static_cast<ssize_t>(sizeof grandchild));
  cb::UniqueFd gfd(static_cast<int>(syscall(SYS_pidfd_open, grandchild, 0)));
  cb::UniqueFd cfd(static_cast<int>(syscall(SYS_pidfd_open, child, 0)));
  ASSERT_TRUE(gfd && cfd);
  {
    auto s = cb::connect_tracer_service(sock_);
    ASSERT_TRUE(s) << s.error().message;
    auto reg = cb::register_with_tracer(s->get(), gfd.get());
    ASSERT_FALSE(reg) << "a grandchild was registered";
    EXPECT_EQ(reg.error().err, EPERM);
    EXPECT_NE(reg.error().message.find("not a child"), std::string::npos) << reg.error().message;
  }
  {
    // Our own child is taken, and only once.
    auto s = cb::connect_tracer_service(sock_);
    ASSERT_TRUE(s);
    auto reg = cb::register_with_tracer(s->get(), cfd.get());
    EXPECT_TRUE(reg) << reg.error().message;
    auto s2 = cb::connect_tracer_service(sock_);
    ASSERT_TRUE(s2);
    auto again = cb::register_with_tracer(s2->get(), cfd.get());
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().err, EALREADY) << again.error().message;
  }
  {
    // Something that is no pidfd.
    auto s = cb::connect_tracer_service(sock_);
    ASSERT_TRUE(s);
    cb::UniqueFd devnull(open("/dev/null", O_RDONLY | O_CLOEXEC));
    auto reg = cb::register_with_tracer(s->get(), devnull.get());
    ASSERT_FALSE(reg);
    EXPECT_EQ(reg.error().err, EINVAL) << reg.error().message;
  }
  kill(child, SIGKILL);
  kill(grandchild, SIGKILL);
  waitpid(child, nullptr, 0);
}

TEST_F(TracerServicePrivileged, ServiceKilledMidSessionLeavesDecisionsAndSaysRecordingStopped) {
  ASSERT_NO_FATAL_FAILURE(start_service());
  mkdir((dir_ + "/prot").c_str(), 0755);
  write_file(dir_ + "/prot/keep", "precious");
  write_file(dir_ + "/policy.yaml",
             "version: 1\ndefault: allow\nrules:\n  - id: protect\n    action: file.delete\n"
             "    path: [\"" +
                 dir_ + "/prot/**\"]\n    decision: deny\n");
  std::string db = dir_ + "/k.db";
  std::string go = dir_ + "/go";
  // The command waits for the service to be gone, then tries the delete.
  std::string cmd = "cat /etc/hostname >/dev/null; while [ ! -e " + go + " ]; do sleep 0.05; done; rm -f " + dir_ +
                    "/prot/keep; exit 3";
  pid_t run = fork();
  if (run == 0) {
    std::string line =
        run_cmd(db, cmd, false, "--policy " + dir_ + "/policy.yaml") + " >" + dir_ + "/run.out 2>" + dir_ + "/run.err";
    execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
    _exit(127);
  }
  // Registered, then killed.
  bool registered = false;
  for (int i = 0; i < 1000 && !registered; ++i) {
    registered = read_file(log_).find("slot 0 for pid") != std::string::npos;
    if (!registered) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(registered) << read_file(log_);
  stop_service();
  write_file(go, "");
  int st = 0;
  ASSERT_EQ(waitpid(run, &st, 0), run);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 3) << read_file(dir_ + "/run.err");
  EXPECT_EQ(read_file(dir_ + "/prot/keep"), "precious") << "the delete went through after the service died";
  auto s = session(db);
  EXPECT_EQ(s.value("state", ""), "ended");
  EXPECT_TRUE(any_contains(s["degraded"], "recording stopped at")) << s["degraded"].dump();
  auto evs = events(db);
  bool denied = false;
  for (const auto& e : evs)
    if (e.value("action", "") == "file.delete" && e.value("decision", "") == "deny") denied = true;
  EXPECT_TRUE(denied) << "the refused delete is not in the trail";
}

// Nothing a session's processes do reaches the service: its directory is
// hidden in the session like the audit database's.
TEST_F(TracerServicePrivileged, TheServiceIsOutOfASessionsReach) {
  ASSERT_NO_FATAL_FAILURE(start_service());
  std::string db = dir_ + "/h.db";
  auto r = sh(run_cmd(db, "if [ -e " + sock_ + " ]; then echo visible; else echo hidden; fi; ls -A " + sock_dir_ +
                              " 2>/dev/null | wc -l"),
              dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "hidden\n0\n");
  // And the session was recorded through it all the same.
  EXPECT_EQ(session(db).value("tracer", ""), "seccomp,ebpf");
}

TEST_F(TracerServicePrivileged, EightLiveSessionsShareOneSetOfPrograms) {
  ASSERT_NO_FATAL_FAILURE(start_service());
  auto before = cb::tracer_status(sock_);
  ASSERT_TRUE(before);
  ASSERT_GT(before->programs, 0u);
  std::string go = dir_ + "/go";
  std::string all;
  for (int i = 0; i < 8; ++i)
    all += "(" + run_cmd(dir_ + "/s" + std::to_string(i) + ".db", "while [ ! -e " + go + " ]; do sleep 0.05; done") +
           ") & ";
  pid_t runner = fork();
  if (runner == 0) {
    std::string line = all + "wait";
    execl("/bin/sh", "sh", "-c", line.c_str(), nullptr);
    _exit(127);
  }
  uint32_t live = 0;
  cb::Result<cb::TracerdReply> during = cb::Error{0, "not asked"};
  for (int i = 0; i < 3000 && live < 8; ++i) {
    during = cb::tracer_status(sock_);
    if (during) live = during->sessions;
    if (live < 8) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  write_file(go, "");
  int st;
  waitpid(runner, &st, 0);
  ASSERT_EQ(live, 8u) << read_file(log_);
  // The same programs, by id: none loaded or attached per session.
  EXPECT_EQ(during->programs, before->programs);
  EXPECT_STREQ(during->message, before->message);
  std::printf("8 live sessions: %u programs (ids %s)\n", during->programs, during->message);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(session(dir_ + "/s" + std::to_string(i) + ".db").value("tracer", ""), "seccomp,ebpf");
}

}  // namespace
