// `cottonbox why`, `replay`, `suggest`, `events --follow` and `--ask exec:`
// on sessions that the real `cottonbox run` records here, from real programs
// (rm, tar, python), each in a temporary directory with its own database.
// What is asserted is what a user would check: the rule named, the events
// that change, the files that survive.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/host_features.h"

namespace {

using nlohmann::json;

const std::string kCottonbox = COTTONBOX_BIN;

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& p, const std::string& s, mode_t mode = 0644) {
  std::ofstream f(p, std::ios::binary);
  f << s;
  f.close();
  chmod(p.c_str(), mode);
}

struct Outcome {
  int status = -1;
  std::string out, err;
};

// Starts argv in `cwd` with `env`, stdout and stderr to files; no terminal.
pid_t spawn(const std::vector<std::string>& argv, const std::string& cwd, const std::map<std::string, std::string>& env,
            const std::string& outp, const std::string& errp) {
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str())) _exit(126);
    int o = open(outp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int n = open("/dev/null", O_RDONLY);
    dup2(n, 0);
    dup2(o, 1);
    dup2(e, 2);
    for (auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    setsid();
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  return pid;
}

int wait_for(pid_t pid, int timeout_s) {
  int st = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    if (waitpid(pid, &st, WNOHANG) == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      ADD_FAILURE() << "timed out";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

class Audit : public ::testing::Test {
 protected:
  void SetUp() override {
    CB_REQUIRE_HOST(cb::test::user_namespaces());
    char tmpl[] = "/tmp/cb-audit.XXXXXX";
    dir_ = mkdtemp(tmpl);
    chmod(dir_.c_str(), 0755);
    for (const char* d : {"/prot", "/work", "/mass", "/tarme", "/out", "/big"}) mkdir((dir_ + d).c_str(), 0755);
    write_file(dir_ + "/prot/keep.txt", "keep me\n");
    db_ = dir_ + "/audit.db";
    policy_ = dir_ + "/policy.yaml";
  }
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "kept " << dir_ << " for inspection\n";
      return;
    }
    (void)!system(("rm -rf " + dir_).c_str());
  }

  std::map<std::string, std::string> env() {
    std::map<std::string, std::string> e = {
        {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"D", dir_}, {"DB", db_}, {"HOME", dir_}};
    if (const char* f = getenv("COTTONBOX_FAKE_MISSING")) e["COTTONBOX_FAKE_MISSING"] = f;
    return e;
  }

  Outcome cottonbox(std::vector<std::string> args, int timeout_s = 120) {
    args.insert(args.begin(), kCottonbox);
    pid_t pid = spawn(args, dir_, env(), dir_ + "/.out", dir_ + "/.err");
    Outcome r;
    r.status = wait_for(pid, timeout_s);
    r.out = read_file(dir_ + "/.out");
    r.err = read_file(dir_ + "/.err");
    return r;
  }

  // One supervised session of `shell`; extra options go before "--".
  Outcome session(const std::string& shell, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"run", "--policy", policy_, "--db", db_, "-q"};
    if (std::find(extra.begin(), extra.end(), "--ask") == extra.end()) a.insert(a.end(), {"--ask", "deny"});
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {"--", "/bin/sh", "-c", shell});
    return cottonbox(a);
  }

  std::vector<json> events(std::vector<std::string> filters = {}) {
    std::vector<std::string> a = {"events", "--db", db_, "--json"};
    a.insert(a.end(), filters.begin(), filters.end());
    Outcome r = cottonbox(a);
    EXPECT_EQ(r.status, 0) << r.err;
    return json_lines(r.out);
  }

  // The one event that matches, by its fields.
  json event_where(const std::string& action, const std::string& path, const std::string& comm = "") {
    json found;
    for (auto& e : events())
      if (e["action"] == action && e["path"] == path && (comm.empty() || e["comm"] == comm) && found.is_null())
        found = e;
    EXPECT_FALSE(found.is_null()) << "no " << action << " " << path << " recorded";
    return found;
  }

  json why(int64_t id) {
    Outcome r = cottonbox({"why", std::to_string(id), "--db", db_, "--json"});
    EXPECT_EQ(r.status, 0) << r.err;
    return json::parse(r.out);
  }

  std::string dir_, db_, policy_;
};

std::set<int64_t> ids_of(const json& array, const char* key = "id") {
  std::set<int64_t> s;
  for (const auto& x : array) s.insert(x[key].get<int64_t>());
  return s;
}

// ------------------------------------------------------------------ why --

TEST_F(Audit, WhyNamesTheRuleOfEachKindThatDenied) {
  write_file(policy_,
             "version: 1\n"
             "default: allow\n"
             "rules:\n"
             "  - id: protect\n"
             "    action: [file.delete, file.write, file.truncate, file.rename]\n"
             "    path: [\"" +
                 dir_ +
                 "/prot/**\"]\n"
                 "    decision: deny\n"
                 "  - id: no-tar\n"
                 "    action: file.delete\n"
                 "    process: [tar]\n"
                 "    decision: deny\n"
                 "  - id: mass-delete\n"
                 "    action: file.delete\n"
                 "    path: [\"" +
                 dir_ +
                 "/mass/**\"]\n"
                 "    when: 'proc.deletes > 3'\n"
                 "    decision: deny\n");
  for (int i = 1; i <= 5; ++i) write_file(dir_ + "/mass/f" + std::to_string(i), "x");
  write_file(dir_ + "/tarme/t", "t");
  Outcome r = session(
      "rm -f $D/prot/keep.txt; tar --remove-files -cf $D/out/x.tar -C $D tarme; "
      "rm -f $D/mass/f1 $D/mass/f2 $D/mass/f3 $D/mass/f4 $D/mass/f5; (: >> $DB); echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir_ + "/prot/keep.txt"), "keep me\n");

  // A path rule.
  json e = event_where("file.delete", dir_ + "/prot/keep.txt", "rm");
  EXPECT_EQ(e["decision"], "deny");
  json w = why(e["id"]);
  EXPECT_EQ(w["explanation"]["rule"]["id"], "protect");
  EXPECT_EQ(w["explanation"]["rule"]["location"], policy_ + ":4:5");
  EXPECT_NE(w["explanation"]["rule"]["text"].get<std::string>().find("- id: protect"), std::string::npos);
  EXPECT_EQ(w["explanation"]["checks"][1]["test"], "path");
  EXPECT_NE(w["explanation"]["checks"][1]["detail"].get<std::string>().find("matches " + dir_ + "/prot/**"),
            std::string::npos);
  EXPECT_TRUE(w["reproduced"].get<bool>());
  EXPECT_TRUE(w["policy"]["recorded"].get<bool>()) << "explained against the policy the session ran with";
  EXPECT_TRUE(w["uncertain"].empty()) << w["uncertain"];

  // A process rule: tar removing what it archived.
  json t = event_where("file.delete", dir_ + "/tarme/t", "tar");
  EXPECT_EQ(t["decision"], "deny");
  w = why(t["id"]);
  EXPECT_EQ(w["explanation"]["rule"]["id"], "no-tar");
  EXPECT_EQ(w["explanation"]["checks"][1]["test"], "process");
  EXPECT_EQ(w["explanation"]["checks"][1]["detail"], "'tar' is one of tar");
  // protect was passed over for its path.
  bool passed = false;
  for (const auto& p : w["explanation"]["passed_over"])
    if (p["id"] == "protect") passed = p["failed"] == "path";
  EXPECT_TRUE(passed) << w["explanation"]["passed_over"];

  // A when: rule, with the count it read.  rm's 4th deletion is the first
  // over 3; its 3rd was allowed by the default, the rule passed over.
  json fourth = event_where("file.delete", dir_ + "/mass/f4");
  json third = event_where("file.delete", dir_ + "/mass/f3");
  EXPECT_EQ(fourth["decision"], "deny");
  EXPECT_EQ(third["decision"], "allow");
  w = why(fourth["id"]);
  EXPECT_EQ(w["explanation"]["rule"]["id"], "mass-delete");
  const json& when = w["explanation"]["checks"].back();
  EXPECT_EQ(when["test"], "when");
  EXPECT_EQ(when["conditions"][0]["condition"], "proc.deletes > 3");
  EXPECT_EQ(when["conditions"][0]["values"]["proc.deletes"], "4");
  EXPECT_TRUE(when["conditions"][0]["result"].get<bool>());
  w = why(third["id"]);
  EXPECT_TRUE(w["explanation"]["rule"].is_null()) << "the default decided";
  bool mass = false;
  for (const auto& p : w["explanation"]["passed_over"])
    if (p["id"] == "mass-delete")
      mass = p["failed"] == "when" && p["checks"].back()["conditions"][0]["values"]["proc.deletes"] == "3";
  EXPECT_TRUE(mass) << w["explanation"]["passed_over"];

  // A built-in rule: the audit database cannot be written from inside.
  json b;
  for (auto& x : events({"--decision", "deny"}))
    if (x["path"] == db_ && x["builtin"].get<bool>()) b = x;
  ASSERT_FALSE(b.is_null()) << "the write to the database is denied";
  w = why(b["id"]);
  EXPECT_EQ(w["explanation"]["rule"]["id"], "cottonbox:self-protect-files");
  EXPECT_TRUE(w["explanation"]["rule"]["builtin"].get<bool>());
  EXPECT_EQ(w["explanation"]["layer"], "builtin");
  EXPECT_TRUE(w["reproduced"].get<bool>());

  // The text form says the same, with file:line.
  Outcome text = cottonbox({"why", std::to_string(fourth["id"].get<int64_t>()), "--db", db_});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("decided by rule mass-delete: deny at " + policy_ + ":12:5"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("proc.deletes > 3   [proc.deletes = 4]"), std::string::npos) << text.out;

  // An event that has not happened, against the files.
  Outcome hyp = cottonbox(
      {"why", "--db", db_, "--policy", policy_, "file.delete", dir_ + "/work/x", "--process", "tar", "--json"});
  EXPECT_EQ(hyp.status, 0) << hyp.err;
  json h = json::parse(hyp.out);
  EXPECT_EQ(h["explanation"]["verdict"], "deny");
  EXPECT_EQ(h["explanation"]["rule"]["id"], "no-tar");
  EXPECT_EQ(h["explanation"]["layer"], "notify");
}

TEST_F(Audit, WhyNamesTheMountLayer) {
  CB_REQUIRE_HOST(cb::test::root());
  CB_REQUIRE_HOST(cb::test::bpf_programs());
  if (getenv("COTTONBOX_FAKE_MISSING")) GTEST_SKIP() << "needs the mount layer and the tracer";
  // Only an unconditional deny of a whole tree: the kernel refuses through
  // a read-only mount, and the tracer records the refusal.  Without keeping
  // (which sends every destroying call to the supervisor first).
  write_file(policy_,
             "version: 1\nrules:\n  - id: protect\n    action: [file.delete, file.rename, file.truncate, "
             "file.write, file.attr]\n    path: [\"" +
                 dir_ + "/prot/**\"]\n    decision: deny\n");
  // A home as a user's has one: ~/.config (cottonbox makes its own
  // directories there, not ~/.config itself).
  ASSERT_EQ(mkdir((dir_ + "/.config").c_str(), 0755), 0);
  Outcome r = session("rm -f $D/prot/keep.txt; echo done", {"--no-keep"});
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir_ + "/prot/keep.txt"), "keep me\n");
  json e = event_where("file.delete", dir_ + "/prot/keep.txt", "rm");
  // The kernel refused (EROFS), not the supervisor: no rule, not even the
  // protection of cottonbox's configuration (made before the session so
  // that it is a read-only mount too), needed deletes notified.
  EXPECT_EQ(e["layer"], "mount") << e.dump();
  EXPECT_EQ(e["errno"], EROFS);
  struct stat made {};
  EXPECT_EQ(stat((dir_ + "/.config/cottonbox").c_str(), &made), 0);
  json w = why(e["id"]);
  EXPECT_EQ(w["explanation"]["rule"]["id"], "protect");
  EXPECT_EQ(w["explanation"]["layer"], e["layer"]);
  EXPECT_TRUE(w["reproduced"].get<bool>());
  // The prediction for the same event agrees.
  Outcome hyp = cottonbox({"why", "--db", db_, "--policy", policy_, "file.delete", dir_ + "/prot/keep.txt", "--json"});
  EXPECT_EQ(json::parse(hyp.out)["explanation"]["layer"], "mount") << hyp.out;
}

// --------------------------------------------------------------- replay --

TEST_F(Audit, ReplayReportsExactlyWhatAStricterAndALooserPolicyChange) {
  std::string protect = "  - id: protect\n    action: [file.delete, file.rename, file.write]\n    path: [\"" + dir_ +
                        "/prot/**\"]\n    decision: deny\n";
  write_file(policy_, "version: 1\ndefault: allow\nrules:\n" + protect);
  Outcome r =
      session("rm -f $D/prot/keep.txt; touch $D/out/a $D/out/b; rm -f $D/out/a; mv $D/out/b $D/out/c; echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;

  // What each policy must change, found in the trail independently.
  std::set<int64_t> deletes_in_out, prot_denials;
  for (auto& e : events()) {
    if (e["action"] == "file.delete" && e["path"].get<std::string>().starts_with(dir_ + "/out/"))
      deletes_in_out.insert(e["id"].get<int64_t>());
    if (e["decision"] == "deny" && e["rule"] == "protect") prot_denials.insert(e["id"].get<int64_t>());
  }
  ASSERT_EQ(deletes_in_out.size(), 1u);
  ASSERT_EQ(prot_denials.size(), 1u);

  std::string strict = dir_ + "/strict.yaml", loose = dir_ + "/loose.yaml";
  write_file(strict, "version: 1\ndefault: allow\nrules:\n" + protect +
                         "  - id: keep-out\n    action: file.delete\n    path: [\"" + dir_ +
                         "/out/**\"]\n    decision: deny\n");
  write_file(loose, "version: 1\ndefault: allow\nrules: []\n");

  Outcome s = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", strict, "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  json sj = json::parse(s.out);
  EXPECT_EQ(ids_of(sj["changes"]), deletes_in_out);
  EXPECT_EQ(sj["summary"], "would deny 1 that was allowed");
  ASSERT_EQ(sj["by_rule"].size(), 1u);
  EXPECT_EQ(sj["by_rule"][0]["rule"], "keep-out");
  EXPECT_TRUE(sj["uncertain"].empty()) << sj["uncertain"];

  Outcome l = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", loose, "--json"});
  ASSERT_EQ(l.status, 0) << l.err;
  json lj = json::parse(l.out);
  EXPECT_EQ(ids_of(lj["changes"]), prot_denials);
  EXPECT_EQ(lj["summary"], "would allow 1 that was denied");
  EXPECT_TRUE(lj["by_rule"][0]["rule"].is_null()) << "the default decides it now";

  // The session's own policy changes nothing.
  Outcome same = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", policy_});
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_NE(same.out.find("no event would be decided differently"), std::string::npos) << same.out;
  // The text groups by rule, with the events.
  Outcome st = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", strict});
  EXPECT_NE(st.out.find("rule keep-out (deny, " + strict + ":8:5): 1 event"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("allow (default) -> deny (keep-out)"), std::string::npos) << st.out;
}

// -------------------------------------------------------------- suggest --

TEST_F(Audit, SuggestAllowsExactlyWhatTheUserAllowed) {
  write_file(policy_,
             "version: 1\ndefault: allow\nrules:\n"
             "  - id: protect\n    action: [file.delete, file.write]\n    path: [\"" +
                 dir_ +
                 "/prot/**\"]\n    decision: deny\n"
                 "  - id: ask-work\n    action: file.delete\n    path: [\"" +
                 dir_ + "/work/**\"]\n    decision: ask\n");
  for (const char* f : {"a1", "a2", "n1"}) write_file(dir_ + "/work/" + f, f);
  // A real approver: allows what starts with 'a', refuses the rest.
  std::string approver = dir_ + "/approve.py";
  write_file(approver,
             "#!/usr/bin/env python3\nimport json, os, sys\nask = json.loads(sys.stdin.readline())\n"
             "name = os.path.basename(ask['event']['path'])\n"
             "print('allow fine' if name.startswith('a') else 'deny not that one')\n",
             0755);
  Outcome r = session("rm -f $D/work/a1 $D/work/a2 $D/work/n1 $D/prot/keep.txt; echo done",
                      {"--ask", "exec:" + approver, "--ask-timeout", "20"});
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  EXPECT_NE(access((dir_ + "/work/a1").c_str(), F_OK), 0);
  EXPECT_EQ(access((dir_ + "/work/n1").c_str(), F_OK), 0);

  std::set<int64_t> allowed_asks;
  for (auto& e : events({"--decision", "ask"}))
    if (e["decision"] == "allow") allowed_asks.insert(e["id"].get<int64_t>());
  ASSERT_EQ(allowed_asks.size(), 2u);

  Outcome s = cottonbox({"suggest", "--db", db_, "--session", "1", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  json sj = json::parse(s.out);
  EXPECT_TRUE(sj["exact"].get<bool>()) << sj["replay"];
  EXPECT_EQ(std::set<int64_t>(sj["target"].begin(), sj["target"].end()), allowed_asks);
  std::string yaml = sj["yaml"];
  // n1 was refused, so work/* would be too wide: the exact files, by rm.
  EXPECT_EQ(yaml.find(dir_ + "/work/*\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\"" + dir_ + "/work/a1\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("process: [\"rm\"]"), std::string::npos) << yaml;

  // The printed YAML is a policy `cottonbox check` accepts ...
  Outcome text = cottonbox({"suggest", "--db", db_, "--session", "1"});
  ASSERT_EQ(text.status, 0) << text.err;
  std::string sug = dir_ + "/suggested.yaml";
  write_file(sug, text.out);
  Outcome check = cottonbox({"check", "--policy", sug, "--db", db_});
  EXPECT_EQ(check.status, 0) << check.err;
  EXPECT_NE(text.out.find("changes exactly the 2 events it is for"), std::string::npos) << text.out;
  // ... and replayed in front of the session's policy, it allows exactly
  // the asked-and-allowed events.
  Outcome rep = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", sug, "--policy", policy_, "--json"});
  ASSERT_EQ(rep.status, 0) << rep.err;
  json rj = json::parse(rep.out);
  EXPECT_EQ(ids_of(rj["changes"]), allowed_asks);
  for (const auto& c : rj["changes"]) EXPECT_EQ(c["after"], "allow");
}

TEST_F(Audit, SuggestForAnObservedSessionAllowsWhatWasSeenAndAsksTheRest) {
  write_file(policy_,
             "version: 1\ndefault: allow\nrules:\n"
             "  - id: protect\n    action: [file.delete, file.write]\n    path: [\"" +
                 dir_ + "/prot/**\"]\n    decision: deny\n");
  Outcome r = session("rm -f $D/prot/keep.txt; touch $D/out/x; echo done", {"--observe"});
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  Outcome s = cottonbox({"suggest", "--db", db_, "--session", "1", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  json sj = json::parse(s.out);
  EXPECT_TRUE(sj["observe"].get<bool>());
  EXPECT_TRUE(sj["exact"].get<bool>()) << sj["replay"];
  std::string yaml = sj["yaml"];
  EXPECT_NE(yaml.find("default: ask"), std::string::npos) << yaml;
  // Alone, it allows every event of the session but the built-ins' denials.
  std::string sug = dir_ + "/observed.yaml";
  write_file(sug, yaml);
  Outcome rep = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", sug, "--json"});
  ASSERT_EQ(rep.status, 0) << rep.err;
  json rj = json::parse(rep.out);
  for (const auto& c : rj["changes"]) EXPECT_EQ(c["after"], "allow") << c;
  json prot = event_where("file.delete", dir_ + "/prot/keep.txt", "rm");
  EXPECT_TRUE(ids_of(rj["changes"]).count(prot["id"].get<int64_t>())) << "what was seen is allowed now";
  // Something not seen is asked about.
  Outcome hyp =
      cottonbox({"why", "--db", db_, "--policy", sug, "file.delete", "/somewhere/else", "--process", "rm", "--json"});
  EXPECT_EQ(json::parse(hyp.out)["explanation"]["verdict"], "ask") << hyp.out;
}

// ------------------------------------------------------------- identity --

// A repository in $D/repo with one commit, git's own files trusted as git,
// and a copy of rm called git in $D/bin: what an agent would try.
class Identity : public Audit {
 protected:
  void SetUp() override {
    Audit::SetUp();
    if (IsSkipped()) return;
    if (access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/git on this machine";
    repo_ = dir_ + "/repo";
    ASSERT_EQ(system(("git init -q " + repo_ + " && echo a > " + repo_ + "/a && git -C " + repo_ + " add a && git -C " +
                      repo_ + " -c user.email=t@t -c user.name=t commit -qm one")
                         .c_str()),
              0);
    mkdir((dir_ + "/bin").c_str(), 0755);
    ASSERT_EQ(system(("cp /bin/rm " + dir_ + "/bin/git").c_str()), 0);
    write_file(policy_,
               "version: 1\n"
               "identities:\n"
               "  git: [/usr/bin/git, \"/usr/lib/git-core/git*\"]\n"
               "rules:\n"
               "  - id: git-in-repo\n"
               "    action: file.mutate\n"
               "    path: [\"${CWD}/repo/.git/**\"]\n"
               "    process: [git]\n"
               "    decision: allow\n"
               "  - id: no-one-else-in-repo\n"
               "    action: [file.delete, file.rename]\n"
               "    path: [\"${CWD}/repo/.git/**\"]\n"
               "    decision: deny\n");
  }
  std::string repo_;
};

TEST_F(Identity, WhySaysACopyCalledGitHasNoIdentityAndTheRealGitHasIt) {
  Outcome r = session(
      "cd $D/repo && $D/bin/git -f .git/COMMIT_EDITMSG; "
      "git -c user.email=t@t -c user.name=t commit -q --allow-empty -m two && echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;

  // The copy: refused, and the trail says why it is not git.
  json fake = event_where("file.delete", repo_ + "/.git/COMMIT_EDITMSG", "git");
  ASSERT_FALSE(fake.is_null());
  EXPECT_EQ(fake["decision"], "deny");
  EXPECT_EQ(fake["rule"], "no-one-else-in-repo");
  EXPECT_FALSE(fake.contains("identity")) << fake;
  EXPECT_EQ(fake["no_identity"], dir_ + "/bin/git is no file the policy trusts");
  json w = why(fake["id"]);
  EXPECT_TRUE(w["reproduced"].get<bool>()) << w;
  EXPECT_TRUE(w["uncertain"].empty()) << w["uncertain"];
  EXPECT_EQ(w["identity"]["names"], json::array());
  EXPECT_EQ(w["identity"]["check"], "not-trusted");
  EXPECT_EQ(w["identity"]["why"], dir_ + "/bin/git is no file the policy trusts");
  bool passed = false;
  for (const auto& p : w["explanation"]["passed_over"])
    if (p["id"] == "git-in-repo")
      passed = p["failed"] == "process" &&
               p["checks"].back()["detail"] ==
                   "'git' (no identity: " + dir_ + "/bin/git is no file the policy trusts) is none of git";
  EXPECT_TRUE(passed) << w["explanation"]["passed_over"];
  Outcome text = cottonbox({"why", std::to_string(fake["id"].get<int64_t>()), "--db", db_});
  EXPECT_NE(text.out.find("  identity: none: " + dir_ + "/bin/git is no file the policy trusts\n"), std::string::npos)
      << text.out;

  // The real git: git, allowed by the rule that trusts it.
  json real = event_where("file.delete", repo_ + "/.git/index.lock", "git");
  ASSERT_FALSE(real.is_null());
  EXPECT_EQ(real["rule"], "git-in-repo");
  EXPECT_EQ(real["identity"], json::array({"git"}));
  w = why(real["id"]);
  EXPECT_TRUE(w["reproduced"].get<bool>()) << w;
  EXPECT_EQ(w["identity"]["names"], json::array({"git"}));
  EXPECT_EQ(w["identity"]["check"], "trusted");
  EXPECT_EQ(w["explanation"]["checks"][2]["detail"], "'git' is one of git");

  // The process tree keeps each process's identity too.
  Outcome tree = cottonbox({"tree", "--session", "1", "--db", db_, "--json"});
  std::map<std::string, json> by_exe;
  for (auto& p : json_lines(tree.out)) by_exe[p["exe"]] = p;
  EXPECT_EQ(by_exe[dir_ + "/bin/git"]["identity"], json::array());
  EXPECT_EQ(by_exe["/usr/bin/git"]["identity"], json::array({"git"})) << tree.out;
}

TEST_F(Identity, ReplayWithTheSessionsPolicyDecidesAsTheSessionDid) {
  // git's refs are renamed over (a rename that also deletes what it
  // replaces); the copy called git tries both a delete and a rename.
  Outcome r = session(
      "cd $D/repo && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m two && "
      "git branch -q side && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m three && "
      "$D/bin/git -f .git/refs/heads/side; mv .git/HEAD .git/HEAD.x; echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  EXPECT_EQ(access((repo_ + "/.git/refs/heads/side").c_str(), F_OK), 0) << "the copy could not delete the branch";
  EXPECT_EQ(access((repo_ + "/.git/HEAD").c_str(), F_OK), 0) << "mv is not git either";

  std::vector<json> all = events({"--session", "1"});
  size_t allowed_by_git = 0, denied = 0;
  for (auto& e : all) {
    allowed_by_git += e["rule"] == "git-in-repo";
    denied += e["decision"] == "deny";
  }
  EXPECT_GT(allowed_by_git, 5u);
  EXPECT_EQ(denied, 2u);
  Outcome rep = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", policy_, "--json"});
  ASSERT_EQ(rep.status, 0) << rep.err;
  json rj = json::parse(rep.out);
  EXPECT_EQ(rj["judged"], all.size());
  EXPECT_EQ(rj["summary"], "no event would be decided differently") << rj["changes"];
  EXPECT_TRUE(rj["uncertain"].empty()) << rj["uncertain"];
}

TEST_F(Identity, SuggestNamesTheIdentityNeverTheCommandName) {
  write_file(policy_, "version: 1\ndefault: allow\nrules:\n  - id: ask-work\n    action: file.delete\n    path: [\"" +
                          dir_ + "/work/**\"]\n    decision: ask\n");
  for (const char* f : {"a1", "g1"}) write_file(dir_ + "/work/" + f, f);
  std::string approver = dir_ + "/approve.sh";
  write_file(approver, "#!/bin/sh\ncat > /dev/null; echo 'allow fine'\n", 0755);
  // The real rm, and the copy of rm called git.
  Outcome r = session("rm -f $D/work/a1; $D/bin/git -f $D/work/g1; echo done",
                      {"--ask", "exec:" + approver, "--ask-timeout", "20"});
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  EXPECT_NE(access((dir_ + "/work/g1").c_str(), F_OK), 0);

  Outcome s = cottonbox({"suggest", "--db", db_, "--session", "1", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  json sj = json::parse(s.out);
  EXPECT_TRUE(sj["exact"].get<bool>()) << sj["replay"];
  std::map<std::string, json> procs_of;
  for (const auto& rule : sj["rules"])
    for (const auto& p : rule["paths"]) procs_of[p] = rule["processes"];
  // rm is named by its file's system name, which the policy can trust.
  EXPECT_EQ(procs_of[dir_ + "/work/a1"], json::array({"rm"})) << sj["yaml"];
  // The copy is not git: a rule for any process, which says why.
  EXPECT_EQ(procs_of[dir_ + "/work/g1"], json::array()) << sj["yaml"];
  std::string yaml = sj["yaml"];
  EXPECT_EQ(yaml.find("process: [\"git\"]"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("# for any process: 'git' (" + dir_ + "/bin/git is no file the policy trusts"), std::string::npos)
      << yaml;
}

// A trail the previous release wrote (tests/fixtures/v5_identity_session.sql
// says how): no identities in it.  They are never taken from the command
// name: `why` and `replay` reproduce what the supervisor decided from the
// path of each process's executable, and say so.
TEST_F(Audit, ATrailFromBeforeIdentitiesIsJudgedByTheExecutableNotTheCommandName) {
  if (access("/usr/bin/git", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/git on this machine";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, read_file(std::string(SOURCE_DIR) + "/tests/fixtures/v5_identity_session.sql").c_str(),
                         nullptr, nullptr, &err),
            SQLITE_OK)
      << (err ? err : "");
  sqlite3_close(db);

  // Event 3: the copy of rm called git, denied live.
  json w = why(3);
  EXPECT_EQ(w["event"]["comm"], "git");
  EXPECT_EQ(w["explanation"]["rule"]["id"], "no-one-else-in-repo");
  EXPECT_TRUE(w["reproduced"].get<bool>()) << "not allowed as git for its command name";
  EXPECT_FALSE(w["identity"]["recorded"].get<bool>());
  EXPECT_EQ(w["identity"]["names"], json::array());
  ASSERT_EQ(w["uncertain"].size(), 1u) << w["uncertain"];
  EXPECT_NE(
      w["uncertain"][0].get<std::string>().find("judged by the path of its executable, /tmp/cb-v5-fixture/bin/git"),
      std::string::npos);
  // Event 17: the real git renaming a ref over another, allowed live.
  w = why(17);
  EXPECT_EQ(w["event"]["action"], "file.rename");
  EXPECT_TRUE(w["reproduced"].get<bool>()) << w;
  EXPECT_EQ(w["identity"]["names"], json::array({"git"}));

  // Replayed against its own rules: what the supervisor decided.
  std::string rules = dir_ + "/v5.yaml";
  write_file(rules,
             "version: 1\nidentities:\n  git: [/usr/bin/git, \"/usr/lib/git-core/git*\"]\nrules:\n"
             "  - {id: git-in-repo, action: file.mutate, path: [\"/tmp/cb-v5-fixture/w/.git/**\"], process: [git], "
             "decision: allow}\n"
             "  - {id: no-one-else-in-repo, action: file.delete, path: [\"/tmp/cb-v5-fixture/w/.git/**\", "
             "\"/tmp/cb-v5-fixture/w/src/**\"], decision: deny}\n");
  Outcome rep = cottonbox({"replay", "--db", db_, "--session", "1", "--policy", rules, "--json"});
  ASSERT_EQ(rep.status, 0) << rep.err;
  json rj = json::parse(rep.out);
  EXPECT_EQ(rj["judged"], 22);
  EXPECT_EQ(rj["summary"], "no event would be decided differently") << rj["changes"];
  EXPECT_FALSE(rj["uncertain"].empty()) << "where the identity decides, it says it was not recorded";

  // The first new session upgrades the file; the old one reads as before.
  write_file(policy_, "version: 1\nrules: []\n");
  Outcome r = session("echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  Outcome sessions = cottonbox({"sessions", "--db", db_, "--json"});
  EXPECT_EQ(json_lines(sessions.out).size(), 2u) << sessions.out;
  EXPECT_TRUE(why(3)["reproduced"].get<bool>());
}

// --------------------------------------------------------------- follow --

TEST_F(Audit, FollowResumesAfterARestartWithoutGapsOrRepeats) {
  write_file(policy_, "version: 1\ndefault: allow\nrules:\n  - id: log-big\n    action: file.create\n    path: [\"" +
                          dir_ + "/big/**\"]\n    decision: log\n");
  std::vector<std::string> follow = {kCottonbox, "events", "--db", db_, "--follow", "--json"};
  std::string make =
      "python3 -c 'import sys, time\nfor i in range(int(sys.argv[1])):\n"
      "    open(\"%s/big/%s%d\" % (sys.argv[2], sys.argv[3], i), \"w\").close()\n"
      "    if i % 50 == 0: time.sleep(0.01)' ";
  // The first follower starts before the database exists, and is killed
  // (SIGKILL: no chance to finish a line) while a session writes.
  pid_t f1 = spawn(follow, dir_, env(), dir_ + "/f1.out", dir_ + "/f1.err");
  std::vector<std::string> run = {kCottonbox, "run", "--policy", policy_, "--db", db_, "--ask", "deny", "-q", "--"};
  auto session_argv = [&](const std::string& tag, int n) {
    std::vector<std::string> a = run;
    a.insert(a.end(), {"/bin/sh", "-c", make + std::to_string(n) + " $D " + tag});
    return a;
  };
  pid_t s1 = spawn(session_argv("a", 1500), dir_, env(), dir_ + "/s1.out", dir_ + "/s1.err");
  for (int i = 0; i < 400 && read_file(dir_ + "/f1.out").size() < 20000; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  kill(f1, SIGKILL);
  wait_for(f1, 10);
  EXPECT_EQ(wait_for(s1, 120), 0) << read_file(dir_ + "/s1.err");
  // A session nobody follows.
  pid_t s2 = spawn(session_argv("b", 300), dir_, env(), dir_ + "/s2.out", dir_ + "/s2.err");
  EXPECT_EQ(wait_for(s2, 120), 0);

  // Resume after the last whole line.
  std::string first = read_file(dir_ + "/f1.out");
  ASSERT_FALSE(first.empty()) << read_file(dir_ + "/f1.err");
  first.resize(first.rfind('\n') + 1);
  std::vector<json> seen = json_lines(first);
  int64_t last = seen.back()["id"];
  std::vector<std::string> resume = follow;
  resume.insert(resume.end(), {"--after", std::to_string(last)});
  pid_t f2 = spawn(resume, dir_, env(), dir_ + "/f2.out", dir_ + "/f2.err");
  pid_t s3 = spawn(session_argv("c", 300), dir_, env(), dir_ + "/s3.out", dir_ + "/s3.err");
  EXPECT_EQ(wait_for(s3, 120), 0);

  std::vector<json> all = events();
  ASSERT_FALSE(all.empty());
  int64_t max_id = all.back()["id"];
  std::vector<json> second;
  for (int i = 0; i < 400; ++i) {
    std::string out = read_file(dir_ + "/f2.out");
    out.resize(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    second = json_lines(out);
    if (!second.empty() && second.back()["id"] == max_id) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(f2, SIGTERM);
  EXPECT_EQ(wait_for(f2, 10), 0) << "SIGTERM ends a follower cleanly";

  std::vector<int64_t> got, want;
  for (auto& e : seen) got.push_back(e["id"].get<int64_t>());
  for (auto& e : second) got.push_back(e["id"].get<int64_t>());
  for (auto& e : all) want.push_back(e["id"].get<int64_t>());
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "every event once, in order, across the restart";
  EXPECT_EQ(all.size(), ids_of(json(all)).size());
  // The same shape as `events --json`.
  EXPECT_EQ(second.back(), all.back());
  std::set<int64_t> sessions;
  for (auto& e : all) sessions.insert(e["session"].get<int64_t>());
  EXPECT_EQ(sessions.size(), 3u);
}

// ------------------------------------------------------------ approvers --

TEST_F(Audit, AnApproverThatHangsCrashesOrBabblesIsADenial) {
  write_file(policy_, "version: 1\ndefault: allow\nrules:\n  - id: ask-work\n    action: file.delete\n    path: [\"" +
                          dir_ + "/work/**\"]\n    decision: ask\n");
  struct Case {
    const char* name;
    const char* script;  // after the shebang
    bool allowed;
    std::vector<std::string> says;  // in answered_by, one of these
  };
  const Case cases[] = {
      {"answers", "cat > $D/ask.json; echo 'allow-tree looks harmless'", true, {"exec: looks harmless"}},
      {"refuses", "cat > /dev/null; echo 'deny not today'", false, {"exec: not today"}},
      // Killed at the deadline; should the supervisor's own timer come
      // first, it is a timeout: a denial either way.
      {"hangs", "exec sleep 1001", false, {"gave no answer in time", "timeout"}},
      // /bin/sh runs the script, which dies of SIGABRT: sh reports 128+6.
      {"crashes", "cat > /dev/null; exec python3 -c 'import os; os.abort()'", false, {"signal 6", "status 134"}},
      {"babbles", "cat > /dev/null; echo 'sure, why not'", false, {"not understood"}},
      {"fails", "cat > /dev/null; echo allow; exit 3", false, {"exited with status 3"}},
      {"says nothing", "cat > /dev/null", false, {"no answer"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string f = dir_ + "/work/f";
    write_file(f, "x");
    std::string approver = dir_ + "/approver.sh";
    write_file(approver, std::string("#!/bin/sh\n") + c.script + "\n", 0755);
    auto t0 = std::chrono::steady_clock::now();
    // Only the hanging approver meets the deadline; the others get room to
    // start on a loaded machine.
    std::string timeout = std::string(c.name) == "hangs" ? "2" : "10";
    Outcome r = session("rm -f $D/work/f; echo rc=$?", {"--ask", "exec:" + approver, "--ask-timeout", timeout});
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(access(f.c_str(), F_OK) != 0, c.allowed) << r.err;
    EXPECT_LT(secs, 15) << "the ask's timeout bounds it";
    json last;
    for (auto& e : events({"--decision", "ask"})) last = e;
    ASSERT_FALSE(last.is_null());
    ASSERT_TRUE(last.contains("approval"));
    EXPECT_EQ(last["decision"], c.allowed ? "allow" : "deny");
    std::string by = last["approval"]["answered_by"];
    EXPECT_TRUE(std::any_of(c.says.begin(), c.says.end(), [&](const std::string& s) {
      return by.find(s) != std::string::npos;
    })) << by;
    if (!c.allowed) {
      EXPECT_EQ(last["approval"]["answer"], "deny-once");
    }
    if (c.allowed) {
      // The approver was given the ask as the protocol's message, with why.
      json ask = json::parse(read_file(dir_ + "/ask.json"));
      EXPECT_EQ(ask["type"], "ask");
      EXPECT_EQ(ask["event"]["path"], f);
      EXPECT_EQ(ask["why"]["rule"]["id"], "ask-work");
      EXPECT_EQ(ask["why"]["rule"]["location"], policy_ + ":4:5");
      EXPECT_EQ(ask["why"]["checks"][1]["detail"], f + " matches " + dir_ + "/work/**");
    }
  }
  // The hanging approver did not outlive its ask.
  EXPECT_NE(system("pgrep -f 'slee[p] 1001' >/dev/null"), 0) << "the hung approver was killed";
}

TEST_F(Audit, TheExampleApproverDoesWhatItsDocumentSays) {
  // docs/approvers.md's example, as shipped.
  std::string example = std::string(SOURCE_DIR) + "/docs/examples/approver.py";
  write_file(policy_,
             "version: 1\ndefault: allow\nrules:\n  - id: ask-deletes\n    action: file.delete\n    path: [\"" + dir_ +
                 "/work/**\"]\n    decision: ask\n");
  for (const char* d : {"/work/build", "/work/.git", "/work/src"}) mkdir((dir_ + d).c_str(), 0755);
  for (const char* f : {"/work/build/a.o", "/work/build/b.o", "/work/.git/HEAD", "/work/src/api.py"})
    write_file(dir_ + f, "x");
  Outcome r = session("rm -f $D/work/build/a.o $D/work/.git/HEAD $D/work/src/api.py $D/work/build/b.o; echo done",
                      {"--ask", "exec:" + example, "--ask-timeout", "20"});
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  EXPECT_NE(access((dir_ + "/work/build/a.o").c_str(), F_OK), 0);
  EXPECT_NE(access((dir_ + "/work/build/b.o").c_str(), F_OK), 0);
  EXPECT_EQ(access((dir_ + "/work/.git/HEAD").c_str(), F_OK), 0);
  EXPECT_EQ(access((dir_ + "/work/src/api.py").c_str(), F_OK), 0);
  std::map<std::string, json> by_path;
  for (auto& e : events({"--decision", "ask"})) by_path[e["path"]] = e;
  EXPECT_EQ(by_path[dir_ + "/work/build/a.o"]["approval"]["answer"], "allow-once");
  EXPECT_EQ(by_path[dir_ + "/work/build/b.o"]["approval"]["answer"], "allow-once");
  EXPECT_EQ(by_path[dir_ + "/work/.git/HEAD"]["approval"]["answer"], "deny-once");
  std::string why = by_path[dir_ + "/work/src/api.py"]["approval"]["answered_by"];
  EXPECT_NE(why.find("exec: nobody approved file.delete " + dir_ +
                     "/work/src/api.py (rule ask-deletes: file.delete is one of file.delete; " + dir_ +
                     "/work/src/api.py matches " + dir_ + "/work/**)"),
            std::string::npos)
      << why;
}

}  // namespace
