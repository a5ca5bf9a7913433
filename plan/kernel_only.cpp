#include "plan/kernel_only.h"

#include <sched.h>

#include <algorithm>
#include <array>

#include "plan/plan.h"
#include "syscalls/table.h"

namespace cb {
namespace {

// The namespace kinds as the supervisor names them (notify/classify_guards.cpp,
// ns_names): a call's path is the kinds its flags make, in this order,
// joined by commas.
constexpr std::array<std::pair<uint64_t, const char*>, 8> kKinds = {{{CLONE_NEWNS, "mnt"},
                                                                     {CLONE_NEWUTS, "uts"},
                                                                     {CLONE_NEWIPC, "ipc"},
                                                                     {CLONE_NEWUSER, "user"},
                                                                     {CLONE_NEWPID, "pid"},
                                                                     {CLONE_NEWNET, "net"},
                                                                     {CLONE_NEWCGROUP, "cgroup"},
                                                                     {CLONE_NEWTIME, "time"}}};
constexpr uint64_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
                                     CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME;

uint64_t combo_flags(unsigned combo) {
  uint64_t f = 0;
  for (size_t i = 0; i < kKinds.size(); ++i)
    if (combo & (1U << i)) f |= kKinds[i].first;
  return f;
}

std::string combo_name(unsigned combo) {
  std::string s;
  for (size_t i = 0; i < kKinds.size(); ++i)
    if (combo & (1U << i)) s += (s.empty() ? "" : ",") + std::string(kKinds[i].second);
  return s;
}

bool refuses(std::optional<Decision> d) { return d && (*d == Decision::Deny || *d == Decision::Ask); }

// Whole families the filter can refuse call by call: every row of `f`,
// each judged on `path_of(row)` (null: any path).
template <typename PathOf>
bool refuse_family(const Policy& p, Family f, Action a, int16_t err, PathOf path_of, KernelOnlyFilter& out) {
  bool fixed = true;
  for (const Syscall& row : syscall_table()) {
    if (row.family != f) continue;
    std::optional<std::string> path = path_of(row);
    auto d = fixed_decision(p, a, path ? &*path : nullptr);
    if (!d) {
      fixed = false;
      continue;
    }
    if (!refuses(d)) continue;
    // Only the calls the row is about: socket() is a kernel facility for
    // packet and raw sockets alone, not for every socket.
    for (const FilterClause& c : row.filter)
      if (c.gate != Gate::Count) out.refusals.push_back({row.nr, c.cmp[0], err, c.cmp[1]});
  }
  return fixed;
}

// Namespaces: every combination of kinds a call can make is judged as the
// supervisor would name it; the refused ones become comparisons of the
// flags.
bool refuse_namespaces(const Policy& p, KernelOnlyFilter& out) {
  std::vector<unsigned> refused;
  for (unsigned combo = 1; combo < (1U << kKinds.size()); ++combo) {
    std::string name = combo_name(combo);
    auto d = fixed_decision(p, Action::SysNamespace, &name);
    if (!d) return false;
    if (refuses(d)) refused.push_back(combo);
  }
  if (refused.empty()) return true;
  // Most policies refuse every combination with one of some kinds (all but
  // a bare user namespace): one test of the flags.
  uint64_t any = 0;
  for (unsigned c : refused)
    if ((c & (c - 1)) == 0) any |= combo_flags(c);
  bool upward = true;
  for (unsigned combo = 1; combo < (1U << kKinds.size()) && upward; ++combo) {
    bool r = std::find(refused.begin(), refused.end(), combo) != refused.end();
    if (r != ((combo_flags(combo) & any) != 0)) upward = false;
  }
  std::vector<ArgCmp> cmps;
  if (upward) {
    cmps.push_back(ArgCmp{0, CmpOp::AnyBit, any, 0});
  } else {
    for (unsigned c : refused) cmps.push_back(ArgCmp{0, CmpOp::MaskedEq, kNamespaceFlags, combo_flags(c)});
  }
  for (const Syscall& row : syscall_table()) {
    if (row.family == Family::Namespace && row.args.fd >= 0) {
      // setns: the kind is the fd's, which the filter cannot see.
      out.refusals.push_back({row.nr, ArgCmp{}, EPERM});
      continue;
    }
    if (row.family != Family::Namespace && row.family != Family::Clone) continue;
    for (ArgCmp c : cmps) {
      c.arg = row.args.flags;
      out.refusals.push_back({row.nr, c, EPERM});
    }
  }
  out.notes.push_back("setns is refused whole: the filter cannot see which namespace an fd names");
  return true;
}

}  // namespace

std::optional<Decision> fixed_decision(const Policy& p, Action a, const std::string* path) {
  for (const Rule& r : p.rules) {
    if (!(r.actions & bit(a))) continue;
    if (!r.processes.empty() || !r.hosts.empty() || !r.ports.empty()) return std::nullopt;
    bool matches = true;
    if (!r.paths.empty()) {
      if (!path) return std::nullopt;
      matches = std::any_of(r.paths.begin(), r.paths.end(), [&](const Glob& g) { return g.match(*path); });
    }
    if (matches && r.when) {
      for (const auto& field : expr_fields(*r.when))
        if (!(field == "action" || (field == "path" && path))) return std::nullopt;
      Event ev;
      ev.action = a;
      if (path) ev.path = *path;
      matches = eval_expr(*r.when, ev);
    }
    if (matches) return r.decision == Decision::Log ? Decision::Allow : r.decision;
  }
  return p.default_decision == Decision::Log ? Decision::Allow : p.default_decision;
}

std::vector<std::string> asks_become_denials(Policy& p) {
  std::vector<std::string> ids;
  for (Rule& r : p.rules)
    if (r.decision == Decision::Ask) {
      r.decision = Decision::Deny;
      ids.push_back(r.id);
    }
  if (p.default_decision == Decision::Ask) {
    p.default_decision = Decision::Deny;
    ids.emplace_back("(default)");
  }
  return ids;
}

KernelOnlyFilter kernel_only_filter(const Policy& p, bool guard_mounts) {
  KernelOnlyFilter out;
  auto any_path = [](const Syscall&) { return std::optional<std::string>(); };
  auto row_name = [](const Syscall& row) { return std::optional<std::string>(std::string(row.name)); };
  auto io_uring = [](const Syscall&) { return std::optional<std::string>("io_uring"); };
  if (guard_mounts) {
    // Root keeps CAP_SYS_ADMIN over the session's mount namespace: with no
    // supervisor to judge a mount by its path, `umount` or a remount would
    // undo the read-only trees.  Every mount call is refused instead, more
    // than the policy asks (it judges mounts by path).
    for (const Syscall& row : syscall_table())
      if (row.family == Family::Mount) out.refusals.push_back({row.nr, ArgCmp{}, EPERM});
    out.notes.push_back(
        "every mount call is refused in the seccomp filter: without a supervisor to judge its path, one could "
        "undo the read-only trees (the command runs as root)");
  } else if (refuse_family(p, Family::Mount, Action::SysMount, EPERM, any_path, out)) {
    // The mount point is a path the filter cannot read: only a policy that
    // decides every mount alike is enforced here.
    out.fixed |= bit(Action::SysMount);
  }
  if (refuse_family(p, Family::Kernel, Action::SysKernel, EPERM, row_name, out)) out.fixed |= bit(Action::SysKernel);
  // The target's executable is the path of proc.trace.
  if (refuse_family(p, Family::Trace, Action::ProcTrace, EPERM, any_path, out)) out.fixed |= bit(Action::ProcTrace);
  // ENOSYS, as the supervisor answers: programs fall back to plain calls.
  if (refuse_family(p, Family::IoUringSetup, Action::SysIoUring, ENOSYS, io_uring, out))
    out.fixed |= bit(Action::SysIoUring);
  if (refuse_namespaces(p, out)) out.fixed |= bit(Action::SysNamespace);
  return out;
}

std::string kernel_only_unenforced(const Policy& p, const std::vector<RuleLayer>& layers, ActionMask fixed) {
  std::string none, partly;
  for (const RuleLayer& l : layers) {
    if (l.layer == Enforcement::Mount) continue;
    auto r = std::find_if(p.rules.begin(), p.rules.end(), [&](const Rule& x) { return x.id == l.rule_id; });
    if (r != p.rules.end() && (r->actions & ~fixed) == 0) continue;
    std::string& to = l.layer == Enforcement::MountAndNotify ? partly : none;
    to += (to.empty() ? "" : ", ") + l.rule_id;
  }
  std::string out;
  if (!none.empty()) out = "not enforced by this session (they need a supervisor to judge each call): " + none;
  if (!partly.empty())
    out += (out.empty() ? "" : "; ") +
           std::string("enforced only where their read-only mounts reach (the rest needs a supervisor): ") + partly;
  return out;
}

std::vector<std::string> kernel_only_degradations(const std::string& no_listener,
                                                  const std::vector<std::string>& asks_denied, bool tracer,
                                                  const std::string& no_tracer, bool nested) {
  std::vector<std::string> out;
  out.push_back("no supervisor of its own: " + no_listener +
                ". Its policy is enforced by kernel layers alone (read-only mounts where it may make them, refusals "
                "in its seccomp filter, Landlock)" +
                (nested ? "; the outer supervisor still judges every call" : ""));
  if (!asks_denied.empty()) {
    std::string ids;
    for (const auto& id : asks_denied) ids += (ids.empty() ? "" : ", ") + id;
    out.push_back("ask rules are deny rules here (nothing can hold a call while someone answers): " + ids);
  }
  if (tracer && nested)
    out.push_back(
        "calls the outer supervisor carries out itself are not in this session's record (the kernel runs no entry "
        "tracepoint for a call seccomp answered); the outer session records them");
  else if (!tracer)
    out.push_back("this session's calls are not recorded (" + (no_tracer.empty() ? "no eBPF tracer" : no_tracer) +
                  (nested ? "): its processes are, and the outer session records every call" : "): its processes are"));
  return out;
}

}  // namespace cb
