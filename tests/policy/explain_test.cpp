// explain(): the slow, explained decide().  Its verdict must be decide()'s on
// every event, and what it says must name the values that decided.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "policy/explain.h"
#include "policy/policy.h"

namespace cb {
namespace {

const char* const kPolicy = R"(version: 1
default: allow
lists:
  archivers: [tar, zip, rsync]
rules:
  - id: allow-cache
    action: file.mutate
    path: ["${HOME}/.cache/**"]
    decision: allow
  - id: no-archivers-in-src
    action: [file.delete, file.rename]
    path: ["${CWD}/src/**"]
    process: ["@archivers"]
    decision: deny
    message: archivers may not remove sources
  # mass deletion
  - id: mass-delete
    action: file.delete
    path: ["${CWD}/**"]
    when: 'proc.deletes > 100 and not (proc.name == "make" or "make" in proc.ancestors)'
    decision: ask
  - id: protect-git
    action: [file.write, file.delete, file.rename, file.truncate]
    path: ["${CWD}/.git/**"]
    when: 'proc.name != "git"'
    decision: deny
  - id: log-net
    action: net.connect
    path: ["tcp:*"]
    decision: log
  - id: exec-sh
    action: proc.exec
    when: 'proc.argv contains "-c" and uid == 0'
    decision: ask
)";

Policy load(const std::string& text) {
  LoadOptions o;
  o.vars = {{"CWD", "/home/u/p"}, {"HOME", "/home/u"}};
  auto r = load_policy_text({{"p.yaml", text}}, o);
  EXPECT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  Policy p = r.policy ? std::move(*r.policy) : Policy{};
  SelfProtection sp;
  sp.protected_files = {"/home/u/.local/share/cottonbox/audit.db", "p.yaml"};
  sp.protected_dirs = {"/run/user/1000/cottonbox"};
  add_self_protection(p, sp);
  return p;
}

std::shared_ptr<ProcessInfo> proc(std::string comm, std::string exe, std::vector<std::string> ancestors = {},
                                  std::vector<std::string> argv = {}, uint32_t uid = 1000) {
  auto p = std::make_shared<ProcessInfo>();
  p->pid = 100;
  p->uid = uid;
  // A plain struct for a real program: its identity is its name.
  p->names = {comm};
  p->comm = std::move(comm);
  p->exe = std::move(exe);
  p->ancestors = std::move(ancestors);
  p->argv = std::move(argv);
  return p;
}

TEST(Explain, AgreesWithDecideOnGeneratedEvents) {
  Policy p = load(kPolicy);
  std::mt19937 rng(7);
  const char* paths[] = {"/home/u/p/src/a.c",
                         "/home/u/p/src",
                         "/home/u/p/.git/HEAD",
                         "/home/u/p/build/x.o",
                         "/home/u/.cache/pip/x",
                         "/home/u/.local/share/cottonbox/audit.db",
                         "/run/user/1000/cottonbox/gui.sock",
                         "unix:/run/user/1000/cottonbox/gui.sock",
                         "tcp:127.0.0.1:80",
                         "/etc/passwd",
                         "/bin/sh",
                         "user",
                         "mnt",
                         "p.yaml",
                         "/"};
  std::shared_ptr<ProcessInfo> procs[] = {nullptr,
                                          proc("tar", "/usr/bin/tar", {"bash"}),
                                          proc("python3", "/usr/bin/zip", {"make", "bash"}),
                                          proc("git", "/usr/bin/git", {"bash"}, {"git", "gc"}),
                                          proc("make", "/usr/bin/make"),
                                          proc("sh", "/bin/sh", {"bash"}, {"sh", "-c", "x"}, 0),
                                          proc("rm", "/usr/bin/rm", {"make", "bash"})};
  int n = 0;
  for (int i = 0; i < 20000; ++i) {
    Event ev;
    ev.action = static_cast<Action>(rng() % static_cast<unsigned>(Action::Count));
    ev.path = paths[rng() % std::size(paths)];
    if (rng() % 5 == 0) ev.aliases.push_back(paths[rng() % std::size(paths)]);
    ev.is_dir = rng() % 3 == 0;
    ev.proc_deletes = rng() % 3 == 0 ? 150 : rng() % 100;
    ev.proc = procs[rng() % std::size(procs)];
    Verdict fast = decide(p, ev);
    Explanation x = explain(p, ev);
    ASSERT_EQ(x.verdict.decision, fast.decision) << ev.path;
    ASSERT_EQ(x.verdict.rule_id, fast.rule_id) << ev.path;
    ASSERT_EQ(x.verdict.message, fast.message);
    ASSERT_EQ(x.verdict.builtin, fast.builtin);
    ASSERT_EQ(x.decided.has_value(), !fast.rule_id.empty());
    if (x.decided) {
      for (const auto& c : x.decided->checks) ASSERT_TRUE(c.held) << c.detail;
    }
    // Every rule is either decided, passed over with a reason, or counted
    // as being about other actions, and the reasons end in a failed test.
    size_t up_to = x.decided ? x.decided->index : p.rules.size();
    ASSERT_EQ(x.passed.size() + x.other_actions, up_to);
    for (const auto& t : x.passed) ASSERT_FALSE(t.checks.back().held);
    n += !fast.rule_id.empty();
  }
  EXPECT_GT(n, 5000) << "the generated events reach the rules";
}

TEST(Explain, NamesTheValuesThatDecided) {
  Policy p = load(kPolicy);
  Event ev;
  ev.action = Action::FileDelete;
  ev.path = "/home/u/p/build/x.o";
  ev.proc_deletes = 141;
  ev.proc = proc("rm", "/usr/bin/rm", {"bash"});
  Explanation x = explain(p, ev);
  ASSERT_TRUE(x.decided);
  EXPECT_EQ(x.verdict.rule_id, "mass-delete");
  EXPECT_EQ(x.verdict.decision, Decision::Ask);
  const RuleCheck& when = x.decided->checks.back();
  ASSERT_EQ(when.kind, RuleCheck::Kind::When);
  ASSERT_FALSE(when.steps.empty());
  EXPECT_EQ(when.steps[0].condition, "proc.deletes > 100");
  ASSERT_EQ(when.steps[0].values.size(), 1u);
  EXPECT_EQ(when.steps[0].values[0].first, "proc.deletes");
  EXPECT_EQ(when.steps[0].values[0].second, "141");
  EXPECT_TRUE(when.steps[0].result);
  // The ancestors were read, as a list.
  bool saw_ancestors = false;
  for (const auto& s : when.steps)
    for (const auto& [f, v] : s.values)
      if (f == "proc.ancestors") saw_ancestors = v == "(\"bash\")";
  EXPECT_TRUE(saw_ancestors);
  // Passed over: the archivers rule for its process (and the earlier
  // rules for their paths), with the reason.
  bool archivers = false;
  for (const auto& t : x.passed)
    if (t.rule->id == "no-archivers-in-src") {
      archivers = true;
      EXPECT_EQ(t.checks.back().kind, RuleCheck::Kind::Path);
      EXPECT_NE(t.checks.back().detail.find("matches none of /home/u/p/src/**"), std::string::npos)
          << t.checks.back().detail;
    }
  EXPECT_TRUE(archivers);

  // Under the threshold: the rule is passed over for its `when`, and the
  // default decides.
  ev.proc_deletes = 3;
  x = explain(p, ev);
  EXPECT_FALSE(x.decided);
  EXPECT_EQ(x.verdict.decision, Decision::Allow);
  bool mass = false;
  for (const auto& t : x.passed)
    if (t.rule->id == "mass-delete") {
      mass = true;
      EXPECT_EQ(t.checks.back().kind, RuleCheck::Kind::When);
      EXPECT_EQ(t.checks.back().steps[0].values[0].second, "3");
    }
  EXPECT_TRUE(mass);
}

TEST(Explain, AliasesAndDirectoriesSayHowThePathMatched) {
  Policy p = load(kPolicy);
  Event ev;
  ev.action = Action::FileDelete;
  ev.path = "/tmp/other";
  ev.aliases = {"/home/u/p/src/a.c"};
  ev.proc = proc("tar", "/usr/bin/tar");
  Explanation x = explain(p, ev);
  ASSERT_TRUE(x.decided);
  EXPECT_EQ(x.verdict.rule_id, "no-archivers-in-src");
  EXPECT_NE(x.decided->checks[1].detail.find("is also /home/u/p/src/a.c"), std::string::npos);
  EXPECT_NE(x.decided->checks[2].detail.find("'tar' is one of tar, zip, rsync"), std::string::npos)
      << x.decided->checks[2].detail;

  ev.path = "/home/u/p";
  ev.aliases.clear();
  ev.is_dir = true;
  x = explain(p, ev);
  ASSERT_TRUE(x.decided);
  EXPECT_NE(x.decided->checks[1].detail.find("holds what"), std::string::npos) << x.decided->checks[1].detail;
}

TEST(Explain, BuiltinsAndLayers) {
  Policy p = load(kPolicy);
  Event ev;
  ev.action = Action::FileWrite;
  ev.path = "/home/u/.local/share/cottonbox/audit.db";
  ev.proc = proc("sh", "/bin/sh");
  Explanation x = explain(p, ev);
  ASSERT_TRUE(x.decided);
  EXPECT_TRUE(x.verdict.builtin);
  EXPECT_EQ(predicted_layer(p, ev, x.verdict), "builtin");

  // An unconditional deny of a whole tree is a read-only mount's.
  Policy q = load(
      "version: 1\nrules:\n  - id: ro\n    action: file.mutate\n    path: [\"/srv/keep/**\"]\n"
      "    decision: deny\n");
  ev.path = "/srv/keep/a";
  EXPECT_EQ(predicted_layer(q, ev, decide(q, ev)), "mount");
  // An allowed read no rule can refuse never leaves the kernel.
  ev.action = Action::FileRead;
  EXPECT_EQ(predicted_layer(q, ev, decide(q, ev)), "filter");
  // A conditional deny is the supervisor's.
  ev.action = Action::FileDelete;
  ev.path = "/home/u/p/.git/HEAD";
  EXPECT_EQ(predicted_layer(p, ev, decide(p, ev)), "notify");
}

TEST(Explain, RuleSourceTextIsTheEntryAsWritten) {
  Policy p = load(kPolicy);
  const Rule* mass = nullptr;
  for (const auto& r : p.rules)
    if (r.id == "mass-delete") mass = &r;
  ASSERT_TRUE(mass);
  std::string text = rule_source_text(*mass, kPolicy);
  EXPECT_EQ(text,
            "  - id: mass-delete\n"
            "    action: file.delete\n"
            "    path: [\"${CWD}/**\"]\n"
            "    when: 'proc.deletes > 100 and not (proc.name == \"make\" or \"make\" in proc.ancestors)'\n"
            "    decision: ask\n");
}

}  // namespace
}  // namespace cb
