// cottonbox inside cottonbox, and cottonbox inside other sandboxes: the
// real binary under the real binary (and under unshare and bwrap), as root
// and as a plain user, checked as a user would: what ran, which files
// survived, what each audit database says, what `doctor` reports there.
//
// Where a test needs the outer session to allow namespaces and mounts (so
// that the inner one can make its read-only mounts), it runs the outer
// session under a policy that allows sys.namespace and sys.mount and says
// so; everything else runs under rules/default.yaml.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/support/host_features.h"

namespace {

const std::string kCottonbox = COTTONBOX_BIN;

struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string name = "root";
};

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary);
  f << s;
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// The plain user of these runs: a throwaway one the suite may make (as the
// keep and swarm tests do), or `dpolicy` where the machine has it already.
std::optional<Identity> plain_user(std::string* why) {
  if (geteuid() != 0) {
    *why = "needs root to become a plain user";
    return std::nullopt;
  }
  const char* name = getpwnam("cbnest") ? "cbnest" : getpwnam("dpolicy") ? "dpolicy" : "cbnest";
  if (!getpwnam(name) && system("useradd --system --no-create-home --shell /usr/sbin/nologin cbnest") != 0) {
    *why = "cannot create the user cbnest";
    return std::nullopt;
  }
  const passwd* pw = getpwnam(name);
  if (!pw) {
    *why = std::string("no user ") + name;
    return std::nullopt;
  }
  Identity u{pw->pw_uid, pw->pw_gid, name};
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) || setgid(u.gid) || setuid(u.uid)) _exit(1);
    _exit(access(kCottonbox.c_str(), X_OK) == 0 ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    *why = u.name + " cannot execute " + kCottonbox;
    return std::nullopt;
  }
  return u;
}

class Nested : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      std::string why;
      auto u = plain_user(&why);
      if (!u) GTEST_SKIP() << why;
      who_ = *u;
    } else {
      CB_REQUIRE_HOST(cb::test::root());
    }
    char tmpl[] = "/tmp/cb-nest.XXXXXX";
    dir_ = mkdtemp(tmpl);
    chmod(dir_.c_str(), 0755);
    work_ = dir_ + "/work";
    mkdir(work_.c_str(), 0755);
    mkdir((work_ + "/prot").c_str(), 0755);
    mkdir((dir_ + "/run").c_str(), 0700);
    write_file(work_ + "/prot/keep.txt", "keep me\n");
    write_file(work_ + "/other.txt", "deletable\n");
    outer_policy_ = dir_ + "/outer.yaml";
    // The lead's work makes namespaces and mounts safe inside a session;
    // until then this outer policy allows them so that the inner session
    // can make its own read-only mounts.
    write_file(outer_policy_,
               "version: 1\n"
               "default: allow\n"
               "rules:\n"
               "  - {id: test-allows-namespaces, action: sys.namespace, decision: allow}\n"
               "  - {id: test-allows-mounts, action: sys.mount, decision: allow}\n");
    inner_policy_ = dir_ + "/inner.yaml";
    write_file(inner_policy_,
               "version: 1\n"
               "default: allow\n"
               "rules:\n"
               "  - id: inner-protect\n"
               "    action: [file.delete, file.rename, file.truncate, file.write, file.attr]\n"
               "    path: [\"" +
                   work_ + "/prot/**\"]\n" + "    decision: deny\n");
    std::string chown = "chown -R " + std::to_string(who_.uid) + ":" + std::to_string(who_.gid) + " " + dir_;
    ASSERT_EQ(system(chown.c_str()), 0);
    outer_db_ = dir_ + "/data/cottonbox/audit.db";
    nested_db_ = dir_ + "/data/cottonbox/nested/audit.db";
  }

  void TearDown() override {
    if (dir_.empty()) return;
    if (HasFailure()) {
      std::cerr << "kept " << dir_ << " for inspection\n";
      return;
    }
    (void)!system(("rm -rf " + dir_).c_str());
  }

  // Runs argv as the test's user in the work directory, with no terminal.
  Outcome run(const std::vector<std::string>& argv, int timeout_s = 90) {
    std::string outp = dir_ + "/.out", errp = dir_ + "/.err";
    pid_t pid = fork();
    if (pid == 0) {
      int o = open(outp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = open(errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int n = open("/dev/null", O_RDONLY);
      dup2(n, 0);
      dup2(o, 1);
      dup2(e, 2);
      setsid();
      if (who_.uid != 0 && (setgroups(0, nullptr) || setgid(who_.gid) || setuid(who_.uid))) _exit(124);
      if (chdir(work_.c_str())) _exit(124);
      clearenv();
      setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
      setenv("HOME", dir_.c_str(), 1);
      setenv("XDG_DATA_HOME", (dir_ + "/data").c_str(), 1);
      setenv("XDG_CONFIG_HOME", (dir_ + "/config").c_str(), 1);
      setenv("XDG_RUNTIME_DIR", (dir_ + "/run").c_str(), 1);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(127);
    }
    int st = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (waitpid(pid, &st, WNOHANG) != pid) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        ADD_FAILURE() << "timed out: " << argv.back();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    Outcome r;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(outp);
    r.err = slurp(errp);
    return r;
  }

  // `cottonbox run` (outer, with `outer` args) around `cottonbox run`
  // (inner, with `inner` args) around `sh -c script`.
  Outcome nested(const std::vector<std::string>& outer, const std::vector<std::string>& inner,
                 const std::string& script) {
    std::vector<std::string> argv = {kCottonbox, "run", "--ask", "deny"};
    argv.insert(argv.end(), outer.begin(), outer.end());
    argv.insert(argv.end(), {"--", kCottonbox, "run"});
    argv.insert(argv.end(), inner.begin(), inner.end());
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", script});
    return run(argv);
  }

  std::vector<nlohmann::json> sessions(const std::string& db) {
    Outcome o = run({kCottonbox, "sessions", "--json", "--db", db});
    EXPECT_EQ(o.status, 0) << o.err;
    std::vector<nlohmann::json> out;
    std::istringstream in(o.out);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  static std::string degraded(const nlohmann::json& s) {
    std::string all;
    for (const auto& d : s["degraded"]) all += d.get<std::string>() + "\n";
    return all;
  }

  Identity who_;
  std::string dir_, work_, outer_policy_, inner_policy_, outer_db_, nested_db_;
};

TEST_P(Nested, TheInnerSessionRunsAndIsRecordedInItsOwnDatabase) {
  // The default policy outside and inside.
  Outcome o = nested({}, {}, "echo inner-ran; sleep 0.3; exit 3");
  EXPECT_EQ(o.status, 3) << o.err;
  EXPECT_EQ(o.out, "inner-ran\n");
  EXPECT_TRUE(has(o.err, "is hidden here (this runs inside another cottonbox session); recording into " + nested_db_))
      << o.err;

  auto outer = sessions(outer_db_);
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(outer[0]["argv"][0], kCottonbox) << "the outer session ran the inner cottonbox";
  EXPECT_EQ(outer[0]["exit_status"], 3);

  auto inner = sessions(nested_db_);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0]["argv"], (nlohmann::json{"/bin/sh", "-c", "echo inner-ran; sleep 0.3; exit 3"}));
  EXPECT_EQ(inner[0]["exit_status"], 3);
  EXPECT_EQ(inner[0]["state"], "ended");
  EXPECT_EQ(inner[0]["tracer"], "none");
  std::string why = degraded(inner[0]);
  EXPECT_TRUE(has(why, "no supervisor of its own: a seccomp filter above this process already has a listener")) << why;
  EXPECT_TRUE(has(why, "ask rules are deny rules here")) << why;  // mass-delete
  EXPECT_TRUE(has(why, "not enforced by this session")) << why;
  EXPECT_TRUE(has(why, "mass-delete")) << why;

  // Its process tree holds the command (seen by looking: no tracer there).
  Outcome tree = run({kCottonbox, "tree", "--json", "--session", inner[0]["id"].dump(), "--db", nested_db_});
  ASSERT_EQ(tree.status, 0) << tree.err;
  EXPECT_TRUE(has(tree.out, "\"exe\":\"/usr/bin/dash\"") || has(tree.out, "\"exe\":\"/usr/bin/bash\"")) << tree.out;
  EXPECT_TRUE(has(tree.out, "echo inner-ran")) << tree.out;

  // `sessions` of the default database points at the nested sessions.
  Outcome listed = run({kCottonbox, "sessions"});
  EXPECT_EQ(listed.status, 0);
  EXPECT_TRUE(has(listed.out, "1 session started inside other sessions: cottonbox sessions --db " + nested_db_))
      << listed.out;
}

TEST_P(Nested, InsideASessionTheReadingCommandsFindTheNestedDatabase) {
  Outcome o = run({kCottonbox, "run", "--ask", "deny", "--", "/bin/sh", "-c",
                   kCottonbox + " run -q -- true && " + kCottonbox + " sessions --json"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(has(o.out, "\"argv\":[\"true\"]")) << o.out;
  EXPECT_TRUE(has(o.err, "reading " + nested_db_)) << o.err;
}

TEST_P(Nested, AnInnerDenyRuleHoldsAgainstADeleteTheOuterAllows) {
  Outcome o = nested({"--policy", outer_policy_}, {"--policy", inner_policy_},
                     "rm -f prot/keep.txt; echo rm=$?; echo more >> prot/keep.txt; echo append=$?; "
                     "rm -f other.txt; echo other=$?");
  auto inner = sessions(nested_db_);
  ASSERT_EQ(inner.size(), 1u) << o.err;
  std::string why = degraded(inner[0]);
  if (GetParam() && has(why, "no private mount namespace"))
    GTEST_SKIP() << "the inner session could not make its mount namespace as a plain user inside the outer "
                    "session: "
                 << why;
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(has(o.out, "rm=1")) << o.out;
  EXPECT_TRUE(has(o.out, "append=")) << o.out;
  EXPECT_FALSE(has(o.out, "append=0")) << o.out;
  EXPECT_EQ(slurp(work_ + "/prot/keep.txt"), "keep me\n");
  // The outer policy allows deleting: the control file is gone.
  EXPECT_TRUE(has(o.out, "other=0")) << o.out;
  EXPECT_NE(access((work_ + "/other.txt").c_str(), F_OK), 0);
  EXPECT_FALSE(has(why, "inner-protect")) << "the rule is one the session enforces: " << why;
}

TEST_P(Nested, TheInnerFilterRefusesWhatItsPolicyDeniesAndTheOuterAllows) {
  // A mount namespace in a user namespace without id maps, and no mount
  // call after it: the namespaces themselves are all that is asked for.
  const std::string try_ns = "unshare -Um --propagation unchanged true; echo unshare=$?";
  Outcome outer_alone =
      run({kCottonbox, "run", "--ask", "deny", "--policy", outer_policy_, "--", "/bin/sh", "-c", try_ns});
  ASSERT_TRUE(has(outer_alone.out, "unshare=0"))
      << "the outer policy allows it: " << outer_alone.out << outer_alone.err;
  // The inner policy refuses it, in the kernel.
  std::string no_ns = dir_ + "/no-ns.yaml";
  write_file(no_ns, "version: 1\nrules:\n  - {id: no-namespaces, action: sys.namespace, decision: deny}\n");
  (void)!chown(no_ns.c_str(), who_.uid, who_.gid);
  Outcome o = nested({"--policy", outer_policy_}, {"--policy", no_ns}, try_ns);
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(has(o.out, "unshare=1")) << o.out;
  EXPECT_TRUE(has(o.err, "unshare failed: Operation not permitted")) << o.err;
}

TEST_P(Nested, TheInnerSessionCannotTouchTheOuterDatabasePolicyOrSocket) {
  // A running outer session made the database, its control directory and
  // read its policy; the inner session's command tries each.
  mkdir((dir_ + "/run/cottonbox").c_str(), 0700);
  (void)!chown((dir_ + "/run/cottonbox").c_str(), who_.uid, who_.gid);
  write_file(dir_ + "/run/cottonbox/marker", "x");
  (void)!chown((dir_ + "/run/cottonbox/marker").c_str(), who_.uid, who_.gid);
  const std::string policy_before = slurp(outer_policy_);
  Outcome o = nested({"--policy", outer_policy_}, {},
                     "wc -c < " + outer_db_ + "; echo junk >> " + outer_db_ + "; echo db=$?; echo junk >> " +
                         outer_policy_ + "; echo policy=$?; ls -A " + dir_ + "/run/cottonbox; echo ls=$?");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(has(o.out, "0\n")) << "the outer database reads as empty: " << o.out;
  EXPECT_FALSE(has(o.out, "db=0")) << o.out;
  EXPECT_FALSE(has(o.out, "policy=0")) << o.out;
  EXPECT_FALSE(has(o.out, "marker")) << o.out;
  EXPECT_EQ(slurp(outer_policy_), policy_before);
  // The outer trail is whole: it opens, and holds the session that ran.
  auto outer = sessions(outer_db_);
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(outer[0]["exit_status"], 0);

  // Asked to record into the outer database, the inner cottonbox refuses
  // with its own exit status and says why.
  Outcome into = nested({}, {"--db", outer_db_}, "echo must-not-run");
  EXPECT_EQ(into.status, 125) << into.err;
  EXPECT_FALSE(has(into.out, "must-not-run"));
  EXPECT_TRUE(has(into.err, "cannot open the audit database " + outer_db_)) << into.err;
}

TEST_P(Nested, TheInnerTrailIsHiddenFromTheInnerSessionWhereItHasMounts) {
  Outcome o =
      nested({"--policy", outer_policy_}, {},
             "wc -c < " + nested_db_ + " 2>/dev/null || echo unreadable; echo x >> " + nested_db_ + "; echo write=$?");
  auto inner = sessions(nested_db_);
  ASSERT_EQ(inner.size(), 1u) << o.err;
  std::string why = degraded(inner[0]);
  if (has(why, "no private mount namespace")) {
    // Then the session says its own trail is not protected.
    EXPECT_TRUE(has(why, "cottonbox:self-protect-trail")) << why;
    GTEST_SKIP() << "no mount namespace for the inner session here: " << why;
  }
  // An empty file in its place (readable by root; the blocker's mode keeps
  // a plain user from opening it at all): nothing of the trail either way.
  EXPECT_TRUE(has(o.out, "0\n") || has(o.out, "unreadable")) << o.out;
  EXPECT_FALSE(has(o.out, "write=0")) << o.out;
}

TEST_P(Nested, ASandboxRunsInsideTheInnerSessionAndCannotUndoItsTrees) {
  // As root the inner session's command is root in a user namespace of its
  // own: it may mount (bwrap makes its namespaces and mounts), and its
  // copies of the read-only trees are locked.  As a plain user its mounts
  // are in a user namespace already.
  const bool bwrap = access("/usr/bin/bwrap", X_OK) == 0;
  if (!bwrap) std::cerr << "bwrap is not installed: only the mount calls are tried\n";
  std::string script =
      "umount prot; echo umount=$?; umount -l prot; echo lazy=$?; mount -o remount,bind,rw prot; echo remount=$?; "
      "mount --move prot /mnt; echo move=$?; mkdir -p ../b && mount --bind . ../b; echo bind=$?; "
      "unshare -Urm sh -c 'umount prot; rm -f prot/keep.txt'; echo userns-rm=$?; "
      "rm -f prot/keep.txt; echo rm=$?";
  if (bwrap)
    script +=
        "; bwrap --dev-bind / / --proc /proc --unshare-pid --die-with-parent sh -c "
        "'echo in-bwrap; rm -f prot/keep.txt; echo bwrap-rm=$?'";
  Outcome o = nested({"--policy", outer_policy_}, {"--policy", inner_policy_}, script);
  auto inner = sessions(nested_db_);
  ASSERT_EQ(inner.size(), 1u) << o.err;
  if (has(degraded(inner[0]), "no private mount namespace"))
    GTEST_SKIP() << "no mount namespace for the inner session here: " << degraded(inner[0]);
  EXPECT_EQ(slurp(work_ + "/prot/keep.txt"), "keep me\n") << o.out << o.err;
  for (const char* step : {"umount=0", "lazy=0", "remount=0", "move=0", "bind=0", "userns-rm=0", "rm=0"})
    EXPECT_FALSE(has(o.out, step)) << step << "\n" << o.out << o.err;
  if (bwrap) {
    EXPECT_TRUE(has(o.out, "in-bwrap")) << "bwrap runs in the inner session: " << o.out << o.err;
    EXPECT_TRUE(has(o.out, "bwrap-rm=1")) << o.out << o.err;
  }
}

TEST_P(Nested, DoctorInsideASessionSaysWhichLayersItHasAndWhy) {
  Outcome o = run({kCottonbox, "run", "-q", "--ask", "deny", "--", kCottonbox, "doctor", "--json"});
  ASSERT_EQ(o.status, 0) << o.err;
  auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["nested"], true);
  EXPECT_EQ(j["runnable"], true);
  EXPECT_EQ(j["mode"], "kernel-only");
  auto& caps = j["capabilities"];
  EXPECT_EQ(caps["seccomp_notify"]["available"], false);
  EXPECT_TRUE(has(caps["seccomp_notify"]["detail"], "already has a listener")) << caps["seccomp_notify"];
  // The default policy lets a session make its namespaces and mount in them.
  EXPECT_EQ(caps["mount_layer"]["available"], true) << caps["mount_layer"];
  EXPECT_EQ(caps["ebpf"]["available"], false);
  if (!GetParam()) {
    EXPECT_TRUE(has(caps["ebpf"]["detail"], "bpf() is refused here")) << caps["ebpf"];
  }
  // Under a policy that allows them, the same probe finds them.
  Outcome allowed =
      run({kCottonbox, "run", "-q", "--ask", "deny", "--policy", outer_policy_, "--", kCottonbox, "doctor", "--json"});
  ASSERT_EQ(allowed.status, 0) << allowed.err;
  auto a = nlohmann::json::parse(allowed.out);
  EXPECT_EQ(a["capabilities"]["pid_namespace"]["available"], true) << a["capabilities"]["pid_namespace"];
}

TEST_P(Nested, InnerErrorsExit125WithAMessage) {
  write_file(dir_ + "/bad.yaml", "version: 1\nrules:\n  - {id: x, action: file.nothing, decision: deny}\n");
  (void)!chown((dir_ + "/bad.yaml").c_str(), who_.uid, who_.gid);
  Outcome bad = nested({}, {"--policy", dir_ + "/bad.yaml"}, "echo must-not-run");
  EXPECT_EQ(bad.status, 125);
  EXPECT_TRUE(has(bad.err, dir_ + "/bad.yaml:3:")) << bad.err;
  EXPECT_FALSE(has(bad.out, "must-not-run"));
  Outcome missing = nested({}, {}, "exec /nonexistent/program");
  EXPECT_EQ(missing.status, 127) << missing.err;
}

INSTANTIATE_TEST_SUITE_P(AsRootAndAsAPlainUser, Nested, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "PlainUser" : "Root"; });

// cottonbox inside other sandboxes keeps working, and `doctor` says what
// it has there.
class InsideOthers : public Nested {};

TEST_P(InsideOthers, RunAndDoctorWorkInsideUnshareAndBwrap) {
  if (GetParam()) CB_REQUIRE_HOST(cb::test::user_namespaces());
  std::vector<std::vector<std::string>> wrappers = {{"/usr/bin/unshare", "-Ur"}};
  if (access("/usr/bin/bwrap", X_OK) == 0)
    wrappers.push_back({"/usr/bin/bwrap", "--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid"});
  else
    std::cerr << "bwrap is not installed: only unshare is tried\n";
  for (const auto& w : wrappers) {
    SCOPED_TRACE(w[0]);
    std::vector<std::string> argv = w;
    argv.insert(argv.end(), {kCottonbox, "run", "--ask", "deny", "--policy", inner_policy_, "--", "/bin/sh", "-c",
                             "rm -f prot/keep.txt; echo rm=$?; echo ran"});
    Outcome o = run(argv);
    EXPECT_EQ(o.status, 0) << o.err;
    EXPECT_TRUE(has(o.out, "ran")) << o.out << o.err;
    EXPECT_TRUE(has(o.out, "rm=1")) << o.out << o.err;
    EXPECT_EQ(slurp(work_ + "/prot/keep.txt"), "keep me\n");
    EXPECT_FALSE(has(o.err, "no supervisor of its own")) << o.err;

    argv = w;
    argv.insert(argv.end(), {kCottonbox, "doctor", "--json"});
    Outcome d = run(argv);
    ASSERT_EQ(d.status, 0) << d.err;
    auto j = nlohmann::json::parse(d.out);
    EXPECT_EQ(j["nested"], false);
    EXPECT_EQ(j["capabilities"]["seccomp_notify"]["available"], true);
    EXPECT_EQ(j["capabilities"]["mount_layer"]["available"], true) << j["capabilities"]["mount_layer"];
    EXPECT_EQ(j["capabilities"]["landlock"]["available"], cb::test::landlock(1).available);
  }
  // Each session is in the default database, none nested.
  EXPECT_EQ(sessions(outer_db_).size(), wrappers.size());
  EXPECT_NE(access(nested_db_.c_str(), F_OK), 0);
}

INSTANTIATE_TEST_SUITE_P(AsRootAndAsAPlainUser, InsideOthers, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "PlainUser" : "Root"; });

}  // namespace
