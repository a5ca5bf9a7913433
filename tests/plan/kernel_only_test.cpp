// A session without a supervisor of its own (plan/kernel_only.h): which
// decisions the filter can make alone, the refusals it gets, and what the
// plan says it cannot enforce.  Pure: hand-written policies and host facts.
#include "plan/kernel_only.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <string>

#include "plan/layers.h"
#include "plan/plan.h"
#include "policy/policy.h"

namespace cb {
namespace {

Policy load(const std::string& text, bool guards = true) {
  LoadOptions o;
  o.vars = {{"CWD", "/home/u/p"}, {"HOME", "/home/u"}};
  o.add_guards = guards;
  o.resolve_identities = false;
  auto r = load_policy_text({{"p.yaml", text}}, o);
  EXPECT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  return r.policy ? std::move(*r.policy) : Policy{};
}

const char* const kAllowAll = "version: 1\ndefault: allow\n";
// Refuses namespaces (but a bare user namespace) and mounts, as the default
// policy once did: the built-ins allow both.
const char* const kNoNamespaces =
    "version: 1\ndefault: allow\nrules:\n"
    "  - {id: userns, action: sys.namespace, path: [user], decision: allow}\n"
    "  - {id: no-namespaces, action: sys.namespace, decision: deny}\n"
    "  - {id: no-mounts, action: sys.mount, decision: deny}\n";

std::vector<FilterRefusal> refusals_of(const KernelOnlyFilter& k, int nr) {
  std::vector<FilterRefusal> out;
  for (const auto& r : k.refusals)
    if (r.nr == nr) out.push_back(r);
  return out;
}

std::optional<Decision> ns(const Policy& p, const std::string& kinds) {
  return fixed_decision(p, Action::SysNamespace, &kinds);
}

TEST(KernelOnly, TheGuardsAreDecisionsTheFilterCanMakeAlone) {
  Policy open = load(kAllowAll);
  EXPECT_EQ(fixed_decision(open, Action::SysMount, nullptr), Decision::Allow);  // the built-in
  EXPECT_EQ(ns(open, "mnt,user,pid"), Decision::Allow);
  Policy p = load(kNoNamespaces);
  EXPECT_EQ(fixed_decision(p, Action::SysMount, nullptr), Decision::Deny);
  EXPECT_EQ(fixed_decision(p, Action::ProcTrace, nullptr), Decision::Deny);
  std::string bpf = "bpf";
  EXPECT_EQ(fixed_decision(p, Action::SysKernel, &bpf), Decision::Deny);
  // A bare user namespace is allowed by its rule; any other kind is not.
  EXPECT_EQ(ns(p, "user"), Decision::Allow);
  EXPECT_EQ(ns(p, "mnt,user"), Decision::Deny);
  EXPECT_EQ(ns(p, "pid"), Decision::Deny);
}

TEST(KernelOnly, AConditionOnThePathIsEvaluatedAndAnyOtherIsNot) {
  Policy by_path = load(R"(version: 1
rules:
  - {id: ns, action: sys.namespace, when: 'path != "net"', decision: allow}
  - {id: no-ns, action: sys.namespace, decision: deny}
)");
  EXPECT_EQ(ns(by_path, "mnt"), Decision::Allow);
  EXPECT_EQ(ns(by_path, "net"), Decision::Deny);  // the rule after it
  Policy by_process = load(R"(version: 1
rules:
  - {id: ns, action: sys.namespace, when: 'proc.name == "bwrap"', decision: allow}
)");
  EXPECT_EQ(ns(by_process, "mnt"), std::nullopt);
  Policy by_identity = load(R"(version: 1
rules:
  - {id: m, action: sys.mount, process: [bwrap], decision: allow}
)");
  EXPECT_EQ(fixed_decision(by_identity, Action::SysMount, nullptr), std::nullopt);
  // A mount point is a path the filter cannot read.
  Policy by_mount_point = load(R"(version: 1
rules:
  - {id: m, action: sys.mount, path: ["/tmp/**"], decision: allow}
)");
  EXPECT_EQ(fixed_decision(by_mount_point, Action::SysMount, nullptr), std::nullopt);
}

TEST(KernelOnly, TheGuardsBecomeRefusalsOfTheirCalls) {
  Policy p = load(kNoNamespaces);
  KernelOnlyFilter k = kernel_only_filter(p);
  EXPECT_EQ(k.fixed, bit(Action::SysMount) | bit(Action::SysKernel) | bit(Action::ProcTrace) | bit(Action::SysIoUring) |
                         bit(Action::SysNamespace));
  for (int nr : {SYS_mount, SYS_umount2, SYS_pivot_root, SYS_move_mount, SYS_open_tree, SYS_bpf, SYS_ptrace,
                 SYS_init_module, SYS_setns}) {
    auto r = refusals_of(k, nr);
    ASSERT_EQ(r.size(), 1u) << nr;
    EXPECT_EQ(r[0].cmp.op, CmpOp::None) << nr;
    EXPECT_EQ(r[0].err, EPERM) << nr;
  }
  auto uring = refusals_of(k, SYS_io_uring_setup);
  ASSERT_EQ(uring.size(), 1u);
  EXPECT_EQ(uring[0].err, ENOSYS);
  // Every kind but a bare user namespace: one test of the flags.
  for (int nr : {SYS_unshare, SYS_clone}) {
    auto r = refusals_of(k, nr);
    ASSERT_EQ(r.size(), 1u) << nr;
    EXPECT_EQ(r[0].cmp.op, CmpOp::AnyBit);
    EXPECT_EQ(r[0].cmp.arg, 0);
    EXPECT_EQ(r[0].cmp.mask, uint64_t(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET |
                                      CLONE_NEWCGROUP | CLONE_NEWTIME));
    EXPECT_EQ(r[0].err, EPERM);
  }
}

TEST(KernelOnly, WhatThePolicyAllowsIsNotRefused) {
  Policy p = load(R"(version: 1
rules:
  - {id: ns, action: sys.namespace, decision: allow}
  - {id: m, action: sys.mount, decision: allow}
)");
  KernelOnlyFilter k = kernel_only_filter(p);
  EXPECT_TRUE(refusals_of(k, SYS_mount).empty());
  EXPECT_TRUE(refusals_of(k, SYS_unshare).empty());
  EXPECT_TRUE(refusals_of(k, SYS_setns).empty());
  EXPECT_TRUE(k.fixed & bit(Action::SysMount));
  EXPECT_TRUE(k.fixed & bit(Action::SysNamespace));
  EXPECT_EQ(refusals_of(k, SYS_bpf).size(), 1u);
}

TEST(KernelOnly, CombinationsOfKindsAreRefusedOneByOneWhenNoKindDecidesAlone) {
  // Only a mount namespace inside a user namespace: neither kind alone.
  Policy p = load(R"(version: 1
rules:
  - {id: ns, action: sys.namespace, path: ["mnt,user"], decision: allow}
  - {id: userns, action: sys.namespace, path: [user], decision: allow}
  - {id: no-ns, action: sys.namespace, decision: deny}
)");
  KernelOnlyFilter k = kernel_only_filter(p);
  auto r = refusals_of(k, SYS_unshare);
  // Every non-empty combination but that one and a bare user namespace.
  ASSERT_EQ(r.size(), 253u);
  for (const auto& f : r) {
    EXPECT_EQ(f.cmp.op, CmpOp::MaskedEq);
    EXPECT_NE(f.cmp.value, uint64_t(CLONE_NEWNS | CLONE_NEWUSER));
    EXPECT_NE(f.cmp.value, uint64_t(CLONE_NEWUSER));
  }
}

TEST(KernelOnly, APolicyThatLooksAtTheProcessLeavesTheFacilityToTheOuterSupervisor) {
  Policy p = load(R"(version: 1
rules:
  - {id: m, action: sys.mount, process: [bwrap], decision: allow}
)");
  KernelOnlyFilter k = kernel_only_filter(p);
  EXPECT_FALSE(k.fixed & bit(Action::SysMount));
  EXPECT_TRUE(refusals_of(k, SYS_mount).empty());
}

TEST(KernelOnly, AsksBecomeDenials) {
  Policy p = load(R"(version: 1
default: ask
rules:
  - {id: a, action: file.delete, path: ["/srv/**"], decision: ask}
  - {id: b, action: file.write, path: ["/srv/**"], decision: allow}
)");
  auto ids = asks_become_denials(p);
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "(default)"}));
  EXPECT_EQ(p.default_decision, Decision::Deny);
  for (const Rule& r : p.rules) EXPECT_NE(r.decision, Decision::Ask) << r.id;
}

TEST(KernelOnly, APlanWithoutAListenerNotifiesNothingAndNamesWhatItCannotEnforce) {
  Policy p = load(R"(version: 1
default: allow
rules:
  - id: protect
    action: [file.delete, file.rename, file.truncate, file.write, file.attr]
    path: ["/srv/fixture/**"]
    decision: deny
  - {id: by-tar, action: file.delete, path: ["/srv/other/**"], process: [tar], decision: deny}
  - {id: no-connect, action: net.connect, path: ["unix:/run/x"], decision: deny}
)");
  HostFacts h;
  h.paths["/srv/fixture"] = {true, true};
  PlanInput in;
  in.mount_layer = true;
  in.listener = false;
  Plan plan = make_plan(p, in, h);
  EXPECT_FALSE(plan.filter.notify);
  EXPECT_FALSE(plan.filter.refusals.empty());
  EXPECT_EQ(plan.kernel_carried, 0u);
  // The tree is the mount's alone: no supervisor to record its refusals
  // changes nothing about how it is enforced.
  auto protect = std::find_if(plan.layers.begin(), plan.layers.end(), [](auto& l) { return l.rule_id == "protect"; });
  ASSERT_NE(protect, plan.layers.end());
  EXPECT_EQ(protect->layer, Enforcement::Mount);
  ASSERT_EQ(plan.weakened.size(), 1u);
  const std::string& w = plan.weakened[0];
  EXPECT_NE(w.find("not enforced by this session"), std::string::npos) << w;
  EXPECT_NE(w.find("by-tar"), std::string::npos) << w;
  EXPECT_NE(w.find("no-connect"), std::string::npos) << w;
  EXPECT_EQ(w.find("protect,"), std::string::npos) << w;
  EXPECT_EQ(w.find("guard"), std::string::npos) << w;  // the filter refuses what the guards deny
  // `check` shows where each rule lands now: nothing judges the others.
  for (const char* id : {"by-tar", "no-connect"}) {
    auto l = std::find_if(plan.layers.begin(), plan.layers.end(), [&](auto& x) { return x.rule_id == id; });
    ASSERT_NE(l, plan.layers.end());
    EXPECT_EQ(l->layer, Enforcement::None) << id;
  }
  auto guard = std::find_if(plan.layers.begin(), plan.layers.end(),
                            [](auto& x) { return x.rule_id == "cottonbox:guard-kernel"; });
  ASSERT_NE(guard, plan.layers.end());
  EXPECT_EQ(guard->layer, Enforcement::Filter);

  // Without the mount layer the tree is named too.
  in.mount_layer = false;
  Plan bare = make_plan(p, in, h);
  ASSERT_EQ(bare.weakened.size(), 1u);
  EXPECT_NE(bare.weakened[0].find("protect"), std::string::npos) << bare.weakened[0];

  // With a listener nothing changes from before.
  in.listener = true;
  in.mount_layer = true;
  Plan usual = make_plan(p, in, h);
  EXPECT_TRUE(usual.filter.notify);
  EXPECT_TRUE(usual.filter.refusals.empty());
  EXPECT_TRUE(usual.weakened.empty());
}

// Root keeps CAP_SYS_ADMIN over the session's mount namespace: without a
// supervisor, an allowed umount or remount would undo the read-only trees.
TEST(KernelOnly, ARootSessionWithMountsRefusesEveryMountCall) {
  Policy p = load(kAllowAll);
  HostFacts h;
  PlanInput in;
  in.listener = false;
  in.mount_layer = true;
  in.root = true;
  Plan plan = make_plan(p, in, h);
  auto refused = [&](const Plan& pl, int nr) {
    return std::any_of(pl.filter.refusals.begin(), pl.filter.refusals.end(), [&](auto& r) { return r.nr == nr; });
  };
  EXPECT_TRUE(refused(plan, SYS_umount2));
  EXPECT_TRUE(refused(plan, SYS_mount));
  // A plain user's command has no capability over its mounts; without
  // mounts there is nothing to undo: the policy's word stands.
  in.root = false;
  EXPECT_FALSE(refused(make_plan(p, in, h), SYS_umount2));
  in.root = true;
  in.mount_layer = false;
  EXPECT_FALSE(refused(make_plan(p, in, h), SYS_umount2));
  // In a user namespace of its own the copies of its trees are locked: the
  // policy's word stands, and `check` says why.
  in.mount_layer = true;
  in.locked_mounts = true;
  Plan locked = make_plan(p, in, h);
  EXPECT_FALSE(refused(locked, SYS_umount2));
  EXPECT_FALSE(refused(locked, SYS_mount));
  bool said = std::any_of(locked.notes.begin(), locked.notes.end(), [](const std::string& n) {
    return n.find("user namespace of its own") != std::string::npos;
  });
  EXPECT_TRUE(said);
}

// The guard refuses raw and packet sockets, not sockets: a unix or TCP
// socket must still be made in a session without a supervisor.
TEST(KernelOnly, OnlyRawAndPacketSocketsAreRefused) {
  KernelOnlyFilter k = kernel_only_filter(load(kAllowAll));
  auto sockets = refusals_of(k, SYS_socket);
  ASSERT_EQ(sockets.size(), 3u);
  for (const auto& r : sockets) {
    EXPECT_EQ(r.cmp.op, CmpOp::MaskedEq);
    EXPECT_TRUE(r.cmp.value == AF_PACKET || r.cmp.value == AF_INET || r.cmp.value == AF_INET6) << r.cmp.value;
    if (r.cmp.value != AF_PACKET) {
      EXPECT_EQ(r.cmp2.value, static_cast<uint64_t>(SOCK_RAW));
    }
  }
}

TEST(KernelOnly, ObservingRefusesNothing) {
  Policy p = load(kAllowAll);
  PlanInput in;
  in.listener = false;
  in.observe = true;
  Plan plan = make_plan(p, in, HostFacts{});
  EXPECT_FALSE(plan.filter.notify);
  EXPECT_TRUE(plan.filter.refusals.empty());
}

TEST(KernelOnly, TheSessionSaysWhyAndWhatRecordsIt) {
  auto without = kernel_only_degradations("EBUSY here", {"mass-delete"}, false, "no eBPF tracer: bpf() is refused");
  ASSERT_EQ(without.size(), 3u);
  EXPECT_EQ(without[0].rfind("no supervisor of its own: EBUSY here. ", 0), 0u) << without[0];
  EXPECT_NE(without[1].find(": mass-delete"), std::string::npos) << without[1];
  EXPECT_NE(without[2].find("not recorded (no eBPF tracer: bpf() is refused)"), std::string::npos) << without[2];
  auto with = kernel_only_degradations("EBUSY here", {}, true, "");
  ASSERT_EQ(with.size(), 2u);
  EXPECT_NE(with[1].find("the outer supervisor carries out itself"), std::string::npos) << with[1];
  // `--layers` without notify: nothing outside judges, and the text must not say so.
  auto off = kernel_only_degradations("--layers leaves the notify layer out", {}, false, "", false);
  ASSERT_EQ(off.size(), 2u);
  for (const auto& d : off) EXPECT_EQ(d.find("outer"), std::string::npos) << d;
}

TEST(Layers, ParseNamesTheLayersThatRun) {
  auto all = parse_layers("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(layers_off(*all), "");
  auto some = parse_layers("mounts,notify");
  ASSERT_TRUE(some.ok());
  EXPECT_TRUE(some->notify && some->mounts && !some->tracer && !some->landlock);
  EXPECT_EQ(layers_off(*some), "tracer,landlock");
  for (const char* bad : {"", "seccomp", "notify,notify", "notify,", "all,notify"}) {
    auto r = parse_layers(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.error().message.find("--layers"), std::string::npos) << r.error().message;
    }
  }
}

}  // namespace
}  // namespace cb
