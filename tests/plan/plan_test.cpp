// The planner decided from hand-written host facts: no test here reads the
// host, so each one states the machine it plans for.
#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <string>

#include "plan/plan.h"
#include "policy/policy.h"

namespace cb {
namespace {

const char* const kProtectTree = R"(version: 1
default: allow
rules:
  - id: protect
    action: [file.delete, file.rename, file.truncate, file.write, file.attr]
    path: ["/srv/fixture/**"]
    decision: deny
)";

Policy load(const std::string& text) {
  LoadOptions o;
  o.vars = {{"CWD", "/home/u/p"}, {"HOME", "/home/u"}};
  o.add_guards = false;
  auto r = load_policy_text({{"p.yaml", text}}, o);
  EXPECT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  return r.policy ? std::move(*r.policy) : Policy{};
}

PlanInput session(bool ebpf = true) {
  PlanInput in;
  in.mount_layer = true;
  in.ebpf = ebpf;
  in.self_files = {"/var/lib/cb/audit.db"};
  return in;
}

HostFacts host_with_dir(const std::string& dir) {
  HostFacts h;
  h.paths[dir] = {true, true};
  h.paths["/var/lib/cb/audit.db"] = {true, false};
  return h;
}

const RuleLayer* layer_of(const Plan& plan, const std::string& id) {
  for (const auto& l : plan.layers)
    if (l.rule_id == id) return &l;
  return nullptr;
}

bool has_mount(const Plan& plan, MountKind kind, const std::string& path) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(),
                     [&](const MountOp& m) { return m.kind == kind && m.path == path; });
}

TEST(Plan, AsksTheHostAboutEveryTreeAndSelfFile) {
  Policy p = load(kProtectTree);
  HostQuery q = plan_query(p, session());
  EXPECT_NE(std::find(q.paths.begin(), q.paths.end(), "/srv/fixture"), q.paths.end());
  EXPECT_NE(std::find(q.paths.begin(), q.paths.end(), "/var/lib/cb/audit.db"), q.paths.end());
  EXPECT_NE(std::find(q.alias_dirs.begin(), q.alias_dirs.end(), "/srv/fixture"), q.alias_dirs.end());
  EXPECT_NE(std::find(q.link_trees.begin(), q.link_trees.end(), "/srv/fixture"), q.link_trees.end());
}

TEST(Plan, AnExistingTreeBecomesAReadOnlyMountThatTheKernelEnforces) {
  Policy p = load(kProtectTree);
  Plan plan = make_plan(p, session(), host_with_dir("/srv/fixture"));
  EXPECT_TRUE(has_mount(plan, MountKind::RoBind, "/srv/fixture"));
  EXPECT_TRUE(has_mount(plan, MountKind::RoBind, "/var/lib/cb/audit.db"));
  EXPECT_TRUE(has_mount(plan, MountKind::Proc, "/proc"));
  const RuleLayer* l = layer_of(plan, "protect");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->layer, Enforcement::Mount);
  // Every refusal is the mount's, so allowed writes elsewhere need no round trip.
  EXPECT_TRUE(plan.kernel_carried & bit(Action::FileWrite));
  EXPECT_FALSE(plan.kernel_carried & bit(Action::FileRename));
}

TEST(Plan, KeepingKeepsWhatDestroysWithTheSupervisor) {
  Policy p = load(kProtectTree);
  PlanInput in = session();
  in.keep = true;
  in.hidden_dirs = {"/var/lib/cb/keep"};
  HostFacts h = host_with_dir("/srv/fixture");
  h.paths["/var/lib/cb/keep"] = {true, true};
  Plan plan = make_plan(p, in, h);
  // The tree is still the mount's, and the store is hidden in the session.
  EXPECT_EQ(layer_of(plan, "protect")->layer, Enforcement::Mount);
  EXPECT_TRUE(has_mount(plan, MountKind::HideDir, "/var/lib/cb/keep"));
  // Only the supervisor can keep before the call goes ahead: nothing that
  // destroys is left to the kernel, and every such call is notified.
  for (Action a : {Action::FileWrite, Action::FileTruncate, Action::FileDelete, Action::FileRename, Action::FileAttr})
    EXPECT_FALSE(plan.kernel_carried & bit(a)) << action_name(a);
  EXPECT_TRUE(plan.kernel_carried & bit(Action::FileCreate)) << "creates keep nothing: the kernel may carry them";
  for (Gate g : {Gate::WriteOpens, Gate::Deletes, Gate::Renames, Gate::Truncates, Gate::Attrs})
    EXPECT_TRUE(plan.filter.has(g));

  // Without keeping, the same plan leaves all of them to the kernel and the
  // filter lets them pass.
  in.keep = false;
  Plan off = make_plan(p, in, h);
  EXPECT_TRUE(off.kernel_carried & bit(Action::FileDelete));
  EXPECT_TRUE(off.kernel_carried & bit(Action::FileWrite));
  EXPECT_FALSE(off.filter.has(Gate::Deletes));

  // Nowhere to keep (no scope, no rule that keeps): as without keeping.
  Policy none = load(kProtectTree);
  none.keep.paths.clear();
  in.keep = true;
  Plan nowhere = make_plan(none, in, h);
  EXPECT_TRUE(nowhere.kernel_carried & bit(Action::FileDelete));
  EXPECT_FALSE(nowhere.filter.has(Gate::Deletes));
}

TEST(Plan, HardLinksReachTheSupervisorWhereWritesAreJudged) {
  Policy p = load(kProtectTree);
  HostFacts h = host_with_dir("/srv/fixture");
  // The tree is the mount's and nothing else is judged: a link answers
  // itself (EXDEV out of the mount), the tracer records it.
  PlanInput off = session();
  off.keep = false;
  EXPECT_FALSE(make_plan(p, off, h).filter.has(Gate::HardLinks));
  // Keeping judges writes: each new name of a file must be known before a
  // write through it (a kept file linked into /tmp and truncated there).
  PlanInput in = session();
  in.keep = true;
  Plan plan = make_plan(p, in, h);
  ASSERT_TRUE(plan.filter.has(Gate::WriteOpens));
  EXPECT_TRUE(plan.filter.has(Gate::HardLinks));
}

TEST(Plan, RootsWriteOpensAreJudgedForTheKernelsSettings) {
  // A sandbox inside a root session mounts a proc or sys of its own,
  // writable: whatever the policy, every write open reaches the supervisor,
  // which refuses the kernel's settings (notify/kernel_files.h).
  Policy p = load(kProtectTree);
  HostFacts h = host_with_dir("/srv/fixture");
  PlanInput in = session();
  in.keep = false;
  EXPECT_FALSE(make_plan(p, in, h).filter.has(Gate::WriteOpens));
  in.root = true;
  Plan plan = make_plan(p, in, h);
  EXPECT_TRUE(plan.filter.has(Gate::WriteOpens));
  // Nothing else changes: allowed writes are still the kernel's to carry
  // out, and hard links (no kernel setting has one) still answer themselves.
  EXPECT_TRUE(plan.kernel_carried & bit(Action::FileWrite));
  EXPECT_FALSE(plan.filter.has(Gate::HardLinks));
}

TEST(Plan, ARuleOnSendsAloneSendsThemToTheSupervisor) {
  PlanInput in = session();
  in.keep = false;
  HostFacts h = host_with_dir("/srv/fixture");
  EXPECT_FALSE(make_plan(load(kProtectTree), in, h).filter.has(Gate::Net));
  Policy p = load(R"(version: 1
default: allow
rules:
  - {id: no-dns-elsewhere, action: net.send, port: [53], decision: deny}
)");
  EXPECT_TRUE(make_plan(p, in, h).filter.has(Gate::Net));
  EXPECT_TRUE(make_plan(p, in, h).filter.has(Gate::Sends));
  // A rule on connections alone leaves every sendmsg in the kernel.
  Policy c = load(R"(version: 1
default: allow
rules:
  - {id: no-telnet, action: net.connect, port: [23], decision: deny}
)");
  EXPECT_TRUE(make_plan(c, in, h).filter.has(Gate::Net));
  EXPECT_FALSE(make_plan(c, in, h).filter.has(Gate::Sends));
}

TEST(Plan, AMissingTreeIsLeftToTheSupervisorAndSaysSo) {
  Policy p = load(kProtectTree);
  HostFacts h;  // /srv/fixture does not exist
  Plan plan = make_plan(p, session(), h);
  EXPECT_FALSE(has_mount(plan, MountKind::RoBind, "/srv/fixture"));
  const RuleLayer* l = layer_of(plan, "protect");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->layer, Enforcement::Notify);
  EXPECT_TRUE(std::any_of(plan.notes.begin(), plan.notes.end(), [](const std::string& n) {
    return n.find("/srv/fixture does not exist") != std::string::npos;
  }));
  EXPECT_EQ(plan.kernel_carried & bit(Action::FileWrite), 0u);
}

TEST(Plan, WithoutTheTracerTheSupervisorRecordsWhatTheMountRefuses) {
  Policy p = load(kProtectTree);
  Plan plan = make_plan(p, session(/*ebpf=*/false), host_with_dir("/srv/fixture"));
  EXPECT_TRUE(has_mount(plan, MountKind::RoBind, "/srv/fixture"));
  EXPECT_EQ(layer_of(plan, "protect")->layer, Enforcement::MountAndNotify);
}

TEST(Plan, AnInheritedDirectoryReachesPastTheMounts) {
  Policy p = load(kProtectTree);
  PlanInput in = session();
  in.inherited.push_back({3, "/srv", true, 1});
  Plan plan = make_plan(p, in, host_with_dir("/srv/fixture"));
  EXPECT_EQ(layer_of(plan, "protect")->layer, Enforcement::MountAndNotify);
  EXPECT_EQ(plan.kernel_carried, 0u) << "a write through the descriptor must be judged";
}

TEST(Plan, AnotherNameOfTheTreeIsMadeReadOnlyToo) {
  Policy p = load(kProtectTree);
  HostFacts h = host_with_dir("/srv/fixture");
  h.mount_aliases = {{"/mnt/copy", "/srv/fixture"}};
  Plan plan = make_plan(p, session(), h);
  EXPECT_TRUE(has_mount(plan, MountKind::RoBind, "/mnt/copy"));
  ASSERT_EQ(plan.aliases.size(), 1u);
  EXPECT_EQ(plan.aliases[0].root, "/mnt/copy");
}

TEST(Plan, HardLinksOutsideTheTreeKeepWritesWithTheSupervisor) {
  Policy p = load(kProtectTree);
  HostFacts h = host_with_dir("/srv/fixture");
  h.links[inode_key(8, 42)] = {"/srv/fixture/a"};
  Plan plan = make_plan(p, session(), h);
  EXPECT_EQ(plan.inodes.size(), 1u);
  EXPECT_EQ(plan.kernel_carried, 0u);

  HostFacts big = host_with_dir("/srv/fixture");
  big.links_complete = false;  // the walk hit its limit: walked while the session runs
  Plan later = make_plan(p, session(), big);
  EXPECT_TRUE(later.inodes.empty());
  EXPECT_EQ(later.link_trees, std::vector<std::string>{"/srv/fixture"});
  EXPECT_EQ(later.kernel_carried, 0u);
}

TEST(Plan, RawDisksUnderATreeAreBlockedForRoot) {
  Policy p = load(kProtectTree);
  PlanInput in = session();
  in.root = true;
  in.blocker_file = "/run/cb/blocker";
  HostFacts h = host_with_dir("/srv/fixture");
  h.devices["/srv/fixture"] = {{makedev(8, 1), "/dev/sda1"}};
  Plan plan = make_plan(p, in, h);
  ASSERT_EQ(plan.devices.size(), 1u);
  EXPECT_EQ(plan.devices[0].rdev, makedev(8, 1));
  EXPECT_TRUE(has_mount(plan, MountKind::BlockNode, "/dev/sda1"));

  in.root = false;  // a plain user cannot open the disk; nothing to bind over
  Plan user = make_plan(p, in, h);
  EXPECT_FALSE(has_mount(user, MountKind::BlockNode, "/dev/sda1"));
}

TEST(Plan, AConditionalRuleStaysWithTheSupervisor) {
  Policy p = load(R"(version: 1
default: allow
rules:
  - id: big-deletes
    action: file.delete
    path: ["/home/u/p/**"]
    when: proc.name == "rm"
    decision: ask
)");
  Plan plan = make_plan(p, session(), host_with_dir("/home/u/p"));
  EXPECT_FALSE(has_mount(plan, MountKind::RoBind, "/home/u/p"));
  EXPECT_EQ(layer_of(plan, "big-deletes")->layer, Enforcement::Notify);
  EXPECT_TRUE(plan.filter.has(Gate::Deletes));
}

TEST(Plan, ObserveMountsNothingReadOnly) {
  Policy p = load(kProtectTree);
  PlanInput in = session();
  in.observe = true;
  Plan plan = make_plan(p, in, host_with_dir("/srv/fixture"));
  EXPECT_FALSE(has_mount(plan, MountKind::RoBind, "/srv/fixture"));
}

}  // namespace
}  // namespace cb
