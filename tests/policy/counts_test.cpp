// Counts that follow the data (policy/counts.h), on the shipped policy and
// plain events.
#include <gtest/gtest.h>

#include "policy/counts.h"
#include "policy/policy.h"

namespace cb {
namespace {

const std::string kCwd = "/home/u/proj";
const std::string kHome = "/home/u";

Policy shipped() {
  LoadOptions o;
  o.vars = {{"CWD", kCwd}, {"HOME", kHome}};
  o.canonical_vars = false;
  auto r = load_policy_files({COTTONBOX_DEFAULT_RULES}, o);
  EXPECT_TRUE(r.policy);
  return r.policy ? *r.policy : Policy{};
}

std::shared_ptr<ProcessInfo> proc(std::string comm, std::vector<std::string> names = {},
                                  std::vector<std::string> argv = {}) {
  auto p = std::make_shared<ProcessInfo>();
  p->comm = std::move(comm);
  p->names = std::move(names);
  p->argv = std::move(argv);
  return p;
}

Event rename_of(std::string from, std::string to, bool dir = false, uint32_t tree = 0) {
  Event e;
  e.action = Action::FileRename;
  e.path = std::move(from);
  e.target = std::move(to);
  e.is_dir = dir;
  e.tree_deletes = e.session_deletes = tree;
  e.proc = proc("mv");
  return e;
}

TEST(Counts, OnlyWhatThePolicyGuardsCounts) {
  Policy p = shipped();
  Event e;
  e.proc = proc("rm");
  EXPECT_TRUE(guarded_delete(p, e, kCwd + "/src/a.c", false));
  EXPECT_FALSE(guarded_delete(p, e, kCwd + "/build/a.o", false));
  EXPECT_FALSE(guarded_delete(p, e, kCwd + "/src/a.o", false));
  EXPECT_FALSE(guarded_delete(p, e, "/tmp/x", false));
  EXPECT_FALSE(guarded_delete(p, e, kHome + "/.cache/x", false));
  EXPECT_TRUE(guarded_delete(p, e, kHome + "/Documents/thesis.txt", false));
  // git deleting tracked files loses nothing; git clean does.
  e.proc = proc("git", {"git"}, {"git", "checkout", "main"});
  EXPECT_FALSE(guarded_delete(p, e, kCwd + "/src/a.c", false));
  e.proc = proc("git", {"git"}, {"git", "clean", "-fdx"});
  EXPECT_TRUE(guarded_delete(p, e, kCwd + "/notes/draft.md", false));
}

TEST(Counts, TheCommandTreeAndTheSessionCountNotTheProcess) {
  Policy p = shipped();
  Event e;
  e.action = Action::FileDelete;
  e.path = kCwd + "/pkg/mod_001.py";
  e.proc = proc("rm");
  e.proc_deletes = 1;  // one of 300 rm processes of one xargs
  e.tree_deletes = 101;
  EXPECT_EQ(decide(p, e).decision, Decision::Ask);
  e.tree_deletes = 1;  // one rm per command, 201 commands
  e.session_deletes = 201;
  EXPECT_EQ(decide(p, e).decision, Decision::Ask);
  e.session_deletes = 200;
  EXPECT_EQ(decide(p, e).decision, Decision::Allow);
}

TEST(Counts, MovingWorkWhereItsDeletionIsNotGuardedIsTheDeletion) {
  Policy p = shipped();
  // Out of the working directory, into build/, into *.o, into node_modules/.
  for (std::string to : {std::string("/tmp/x/mod.py"), kCwd + "/build/stale/mod.py", kCwd + "/pkg/mod.o",
                         kCwd + "/node_modules/x/mod.py"}) {
    auto d = prepared_delete(p, rename_of(kCwd + "/pkg/mod.py", to, false, 100));
    ASSERT_TRUE(d) << to;
    EXPECT_EQ(d->action, Action::FileDelete);
    EXPECT_EQ(d->path, kCwd + "/pkg/mod.py");
    EXPECT_EQ(d->tree_deletes, 101u);
    EXPECT_EQ(decide(p, *d).decision, Decision::Ask) << to;
    // Below the threshold the rename is one deletion more, not a question.
    auto first = prepared_delete(p, rename_of(kCwd + "/pkg/mod.py", to, false, 0));
    ASSERT_TRUE(first);
    EXPECT_EQ(decide(p, *first).decision, Decision::Allow) << to;
  }
  // A whole directory moved that way stands for more than any threshold.
  auto dir = prepared_delete(p, rename_of(kCwd + "/pkg", "/tmp/pkg-old", true, 0));
  ASSERT_TRUE(dir);
  EXPECT_EQ(decide(p, *dir).decision, Decision::Ask);
  // Renames within the work (an editor's save, git mv, a refactor) are not deletions.
  EXPECT_FALSE(prepared_delete(p, rename_of(kCwd + "/pkg/.mod.py.swp", kCwd + "/pkg/mod.py")));
  EXPECT_FALSE(prepared_delete(p, rename_of(kCwd + "/pkg", kCwd + "/src/pkg", true)));
  // Build outputs moving about are nothing.
  EXPECT_FALSE(prepared_delete(p, rename_of(kCwd + "/build/a.tmp", "/tmp/a")));
  // Not a rename: nothing.
  Event del = rename_of(kCwd + "/pkg/mod.py", "/tmp/x");
  del.action = Action::FileDelete;
  EXPECT_FALSE(prepared_delete(p, del));
}

}  // namespace
}  // namespace cb
