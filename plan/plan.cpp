#include "plan/plan.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/paths.h"
#include "plan/kernel_only.h"
#include "plan/short_way.h"

namespace cb {

std::string_view mount_kind_name(MountKind k) {
  switch (k) {
    case MountKind::RoBind: return "read-only";
    case MountKind::HideDir: return "hidden";
    case MountKind::HideFile: return "hidden file";
    case MountKind::ReplaceFile: return "replaced";
    case MountKind::BlockNode: return "raw disk blocked";
    case MountKind::Proc: return "fresh procfs";
  }
  return "?";
}
namespace {

bool is_under(const std::string& path, const std::string& root) { return root == "/" || path_within(path, root); }

constexpr ActionMask kRoBlocks = bit(Action::FileWrite) | bit(Action::FileTruncate) | bit(Action::FileDelete) |
                                 bit(Action::FileRename) | bit(Action::FileAttr);
constexpr ActionMask kWritesInPlace = bit(Action::FileWrite) | bit(Action::FileTruncate) | bit(Action::FileAttr);
// The kernel's tunables and /sys: core_pattern, modprobe and uevent helpers
// would run code outside the session.  Raw memory and I/O ports reach past
// every layer.
constexpr const char* kKernelTrees[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/sys"};
constexpr const char* kRawMemory[] = {"/dev/mem", "/dev/kmem", "/dev/port"};

// The directories that deny/ask rules on `actions` name as the literal
// start of their paths (~/.ssh for "~/.ssh/**"), each once; with `host`,
// only those that exist as directories.
std::vector<std::string> protected_directories(const Policy& p, ActionMask actions, bool with_builtin,
                                               const HostFacts* host = nullptr) {
  std::vector<std::string> out;
  for (const Rule& r : p.rules) {
    if ((r.builtin() && !with_builtin) || !(r.decision == Decision::Deny || r.decision == Decision::Ask) ||
        !(r.actions & actions))
      continue;
    for (const auto& g : r.paths) {
      const std::string& b = g.literal_base();
      if (!b.empty() && b[0] == '/' && b != "/" && (!host || host->is_dir(b)) &&
          std::find(out.begin(), out.end(), b) == out.end())
        out.push_back(b);
    }
  }
  return out;
}

// Roots whose raw disks would reach what the policy protects.
std::vector<std::string> device_roots(const Policy& p, const PlanInput& in) {
  std::vector<std::string> roots;
  auto add = [&](const std::string& r) {
    if (!r.empty() && r[0] == '/' && std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  };
  for (const StaticDenial& sd : static_denials(p)) add(sd.root);
  for (const Rule& r : p.rules) {
    if (r.decision != Decision::Deny || !(r.actions & kFileMutate)) continue;
    for (const auto& g : r.paths) add(g.literal_base());
  }
  for (const auto& f : in.self_files) add(f);
  return roots;
}

int rule_path_count(const Rule& r) { return static_cast<int>(r.paths.size()); }

}  // namespace

std::string_view enforcement_name(Enforcement e) {
  switch (e) {
    case Enforcement::Mount: return "mount";
    case Enforcement::MountAndNotify: return "mount+notify";
    case Enforcement::Notify: return "notify";
    case Enforcement::Filter: return "filter";
    case Enforcement::None: return "none";
  }
  return "unknown";
}

HostQuery plan_query(const Policy& p, const PlanInput& in) {
  HostQuery q;
  auto ask = [&](const std::string& path) {
    if (std::find(q.paths.begin(), q.paths.end(), path) == q.paths.end()) q.paths.push_back(path);
  };
  for (const StaticDenial& sd : static_denials(p)) ask(sd.root);
  for (const auto& d : protected_directories(p, kFileMutate, true)) ask(d);
  for (const auto& f : in.self_files) ask(f);
  for (const auto& f : in.trail_files) ask(f);
  for (const auto& d : in.hidden_dirs) ask(d);
  for (const auto& r : in.replaced_files) ask(r.first);
  for (const char* k : kKernelTrees) ask(k);
  for (const char* k : kRawMemory) ask(k);
  q.alias_dirs = protected_directories(p, kFileMutate, true);
  q.device_roots = device_roots(p, in);
  q.link_trees = protected_directories(p, kWritesInPlace, false);
  return q;
}

Plan make_plan(const Policy& p, const PlanInput& in) { return make_plan(p, in, gather_host_facts(plan_query(p, in))); }

Plan make_plan(const Policy& p, const PlanInput& in, const HostFacts& host) {
  Plan plan;
  ActionMask need = actions_needing_decision(p);
  // Without the tracer, `log` rules can only see what is notified.
  if (!in.ebpf) need |= actions_logged(p);

  // ---- mount layer: read-only trees
  if (in.mount_layer && !in.observe) {
    for (const StaticDenial& sd : static_denials(p)) {
      // A read-only mount refuses writes, truncation, deletion, renames and
      // attribute changes all at once: it enforces the rule exactly only if
      // the rule denies all of them below the root.  Creation is handled
      // apart (notified, and carried out through the supervisor's own view
      // when allowed).
      if ((sd.actions & kRoBlocks) != kRoBlocks) continue;
      if (!host.is_dir(sd.root)) {
        plan.notes.push_back("rule " + sd.rule_id + ": " + sd.root +
                             " does not exist (yet): enforced by the supervisor only");
        continue;
      }
      bool nested = false;
      for (const auto& m : plan.mounted)
        if (is_under(sd.root, m.root)) nested = true;
      plan.mounted.push_back(sd);
      if (!nested) plan.mounts.push_back({MountKind::RoBind, sd.root, "", false});
    }
  }

  // ---- other names of protected directories: bind mounts of their file
  // system made before the session show them elsewhere.  The rules see the
  // protected name behind such a path, and where the tree is a read-only
  // mount, the other name is made read-only too.
  {
    plan.alias_of = host.mount_aliases;
    for (const auto& [alias, base] : plan.alias_of) {
      for (const auto& m : plan.mounted) {
        if (m.root != base) continue;
        bool covered = false;
        for (const auto& a : plan.aliases)
          if (is_under(alias, a.root)) covered = true;
        if (covered) break;
        StaticDenial a = m;
        a.root = alias;
        plan.aliases.push_back(a);
        plan.mounts.push_back({MountKind::RoBind, alias, "", true});
        break;
      }
      plan.notes.push_back(base + " also shows as " + alias +
                           " (a bind mount made before the session): "
                           "the rules on it apply there too");
    }
  }
  // The trail is hidden: an empty read-only file in its place is read-only
  // too.
  auto hides = [&](const std::string& f) {
    return in.mount_layer && !in.blocker_file.empty() && host.path(f).exists &&
           std::find(in.trail_files.begin(), in.trail_files.end(), f) != in.trail_files.end();
  };
  if (in.mount_layer) {
    for (const auto& f : in.trail_files)
      if (hides(f)) plan.mounts.push_back({MountKind::HideFile, f, in.blocker_file, false});
    for (const auto& f : in.self_files)
      if (host.path(f).exists && !hides(f)) plan.mounts.push_back({MountKind::RoBind, f, "", false});
    for (const auto& d : in.hidden_dirs)
      if (host.is_dir(d)) plan.mounts.push_back({MountKind::HideDir, d, "", false});
    // Optional: a failure is the session's degradation (no names), not an
    // error of the session.
    for (const auto& [path, source] : in.replaced_files)
      if (host.path(path).exists) plan.mounts.push_back({MountKind::ReplaceFile, path, source, true});
  }

  // ---- raw disks: writing the device is writing every file on it
  std::set<std::string> blocked_nodes;
  for (const auto& root : device_roots(p, in)) {
    auto found = host.devices.find(root);
    if (found == host.devices.end()) continue;
    for (const auto& dev : found->second) {
      const dev_t rdev = dev.first;
      const std::string& node = dev.second;
      auto it = std::find_if(plan.devices.begin(), plan.devices.end(),
                             [rdev](const ProtectedDevice& d) { return d.rdev == rdev; });
      if (it == plan.devices.end()) it = plan.devices.insert(plan.devices.end(), ProtectedDevice{rdev, {}});
      if (std::find(it->roots.begin(), it->roots.end(), root) == it->roots.end()) it->roots.push_back(root);
      if (in.mount_layer && in.root && !in.blocker_file.empty() && blocked_nodes.insert(node).second)
        plan.mounts.push_back({MountKind::BlockNode, node, in.blocker_file, true});
    }
  }

  // ---- hard links made before the session: the other names are not under
  // the protected trees, so writes through them must be judged by inode.
  {
    // Small trees were walked with the host's facts, so that the filter
    // knows whether any file has other names; larger ones (a repository's
    // .git) are walked while the session runs, and every write open is
    // notified meanwhile.
    if (host.links_complete)
      plan.inodes = host.links;
    else
      plan.link_trees = protected_directories(p, kWritesInPlace, false, &host);
  }

  if (in.mount_layer) {
    // A fresh /proc for the session's pid namespace.  For root, the kernel's
    // tunables and /sys are read-only too: core_pattern, modprobe and
    // uevent helpers would run code outside the session.
    plan.mounts.push_back({MountKind::Proc, "/proc", "", false});
    if (in.root) {
      for (const char* q : kKernelTrees)
        if (host.path(q).exists) plan.mounts.push_back({MountKind::RoBind, q, "", true});
      if (!in.blocker_file.empty())
        for (const char* q : kRawMemory)
          if (host.path(q).exists) plan.mounts.push_back({MountKind::BlockNode, q, in.blocker_file, true});
    }
  }

  // ---- descriptors from outside: the command inherits them opened in the
  // host's view, where the read-only mounts do not apply.  A directory (or a
  // disk) reaches whole trees, through /proc/self/fd/N and its "..", and so
  // does a protected file or another name of one.  Then the mounts cannot
  // be the only thing that refuses.
  bool host_view = false;
  if (in.mount_layer && !plan.mounted.empty()) {
    for (const auto& f : in.inherited) {
      bool reaches = f.dir || f.nlink > 1 || f.path.empty() || f.path[0] != '/';
      for (const auto& m : plan.mounted)
        if (is_under(f.path, m.root)) reaches = true;
      for (const auto& a : plan.aliases)
        if (is_under(f.path, a.root)) reaches = true;
      for (const auto& sf : in.self_files)
        if (f.path == sf) reaches = true;
      if (reaches) {
        host_view = true;
        plan.notes.push_back("descriptor " + std::to_string(f.fd) + " (" + f.path +
                             ") is inherited from outside the session, past its read-only mounts: "
                             "the supervisor judges what the mounts would refuse");
      }
    }
  }

  // ---- what still needs the supervisor
  bool keeps = in.keep && !in.observe && !in.ebpf_only &&
               (!p.keep.paths.empty() ||
                std::any_of(p.rules.begin(), p.rules.end(), [](const Rule& r) { return r.keep.value_or(false); }));
  if (keeps)
    plan.notes.push_back("what allowed calls destroy is kept for undo: they are carried out by the supervisor");
  ActionMask notify = need;
  // What each deny/ask rule still needs the supervisor for, in rule order.
  std::vector<ActionMask> rule_notified;
  for (const Rule& r : p.rules) {
    ActionMask decidable = (r.decision == Decision::Deny || r.decision == Decision::Ask) ? r.actions : 0;
    if (!decidable) continue;
    RuleLayer rl{r.id, Enforcement::Notify, ""};
    ActionMask by_mount = 0;
    int trees = 0;
    // A read-only tree refuses creation and links into it as well; a rule
    // that denies those too is enforced there exactly.  (A rule that allows
    // them has them carried out by the supervisor.)
    for (const auto& m : plan.mounted)
      if (m.rule_id == r.id) {
        by_mount |= m.actions & (kRoBlocks | bit(Action::FileCreate) | bit(Action::FileLink));
        ++trees;
      }
    bool fully_mounted = trees > 0 && trees == rule_path_count(r) && !r.when && r.processes.empty();
    if (host_view && trees > 0) {
      rl.layer = Enforcement::MountAndNotify;
      rl.detail = "read-only bind mount; also judged by the supervisor (a descriptor from outside reaches past it)";
    } else if (!in.ebpf && in.listener && trees > 0) {
      // Without the tracer nothing would record what the mount refuses:
      // the supervisor is asked too, so every denial reaches the trail.
      rl.layer = Enforcement::MountAndNotify;
      rl.detail = "read-only bind mount; also judged by the supervisor to record denials (no eBPF tracer)";
    } else if (host_view && r.builtin()) {
      rl.layer = Enforcement::Notify;
      rl.detail = "decided by the supervisor (a descriptor from outside reaches past the mounts)";
    } else if (r.kind == Builtin::SelfProtectFiles && in.mount_layer && (in.ebpf || !in.listener)) {
      rl.layer = Enforcement::Mount;
      rl.detail = "the audit database and policy files are read-only in the session";
    } else if (r.kind == Builtin::SelfProtectTrail && !r.paths.empty() &&
               std::all_of(r.paths.begin(), r.paths.end(), [&](const Glob& g) {
                 return std::any_of(in.trail_files.begin(), in.trail_files.end(),
                                    [&](const std::string& f) { return hides(f) && g.text() == Glob::escape(f); });
               })) {
      // Nothing to refuse, so nothing to record: a read finds an empty file.
      rl.layer = Enforcement::Mount;
      rl.detail = "the audit database is hidden in the session (an empty read-only file in its place)";
    } else if (r.kind == Builtin::SelfProtectControl && in.mount_layer && (in.ebpf || !in.listener)) {
      rl.layer = Enforcement::Mount;
      rl.detail = "the control socket directory is hidden in the session";
    } else if (fully_mounted && (decidable & ~by_mount & kFileMutate) == 0) {
      rl.layer = Enforcement::Mount;
      rl.detail = "read-only bind mount";
    } else if (trees > 0) {
      rl.layer = Enforcement::MountAndNotify;
      rl.detail = "read-only bind mount, plus the supervisor for what a mount cannot express";
    } else {
      rl.layer = Enforcement::Notify;
      rl.detail = "decided by the supervisor as it happens";
    }
    ActionMask notified = decidable;
    if (rl.layer == Enforcement::Mount) notified = 0;
    // Only the actions the mounts leave over: the supervisor is not asked
    // about every delete of the session for a rule whose trees refuse them.
    else if (fully_mounted && rl.layer == Enforcement::MountAndNotify && !host_view && in.ebpf)
      notified = decidable & ~by_mount;
    rule_notified.push_back(notified);
    plan.layers.push_back(std::move(rl));
  }
  // ---- allowed actions the kernel may carry out itself
  // The supervisor carries out an allowed mutation on what it checked
  // because its check is what stands between a swapped path and a
  // protected file.  Where every refusal of an action is the mount
  // layer's (exact, whatever path the kernel resolves), that race cannot
  // reach anything, and the kernel may run the call.  Renames stay with the
  // supervisor (renaming an ancestor moves a mounted tree), and so does
  // everything when other names of protected files exist outside the
  // mounts (hard links, raw disks the mount layer does not cover).
  {
    constexpr ActionMask kCarriable = kFileMutate & ~bit(Action::FileRename);
    constexpr ActionMask kMountRefuses = kRoBlocks | bit(Action::FileCreate) | bit(Action::FileLink);
    bool disks_blocked = plan.devices.empty() || (in.root && !in.blocker_file.empty());
    ActionMask carried = (in.mount_layer && !in.observe && !host_view && disks_blocked && plan.inodes.empty() &&
                          plan.link_trees.empty() && p.default_decision == Decision::Allow)
                             ? kCarriable
                             : 0;
    auto all_paths_in = [](const Rule& r, const std::vector<std::string>& where, bool trees) {
      for (const auto& g : r.paths) {
        bool found = false;
        for (const auto& w : where)
          if (trees ? (g.is_whole_tree() && g.literal_base() == w) || g.text().starts_with("unix:")
                    : g.literal_base() == w && g.text() == Glob::escape(w))
            found = true;
        if (!found) return false;
      }
      return true;
    };
    for (const Rule& r : p.rules) {
      if (!carried) break;
      if (!(r.decision == Decision::Deny || r.decision == Decision::Ask) || !(r.actions & carried)) continue;
      bool exact = false;
      if (r.decision == Decision::Deny && !r.when && r.processes.empty()) {
        if (r.kind == Builtin::SelfProtectFiles) {
          exact = all_paths_in(r, in.self_files, false);
        } else if (r.kind == Builtin::SelfProtectControl) {
          exact = all_paths_in(r, in.hidden_dirs, true);
        } else {
          ActionMask by_mount = 0;
          int trees = 0;
          for (const auto& m : plan.mounted)
            if (m.rule_id == r.id) {
              by_mount |= m.actions;
              ++trees;
            }
          exact = trees > 0 && trees == rule_path_count(r) &&
                  ((r.actions & kFileMutate) & ~(by_mount | kMountRefuses)) == 0 && (by_mount & kRoBlocks) == kRoBlocks;
        }
      }
      if (!exact) carried &= ~r.actions;
    }
    // What is kept is kept on the supervisor's path, before it carries the
    // call out: the kernel carrying it would skip the keep.
    if (keeps) carried &= ~kDestroys;
    plan.kernel_carried = carried;
  }

  // An action needs notification when some deny/ask rule on it is not
  // entirely enforced by mounts (or the default is deny/ask).
  ActionMask still = 0;
  if (p.default_decision == Decision::Deny || p.default_decision == Decision::Ask) still = kAllActions;
  for (ActionMask m : rule_notified) still |= m;
  if (!in.ebpf) still |= actions_logged(p);
  // read(@list) needs every read and write-open of the session, seen while
  // the caller waits: what it holds open for writing (a pipe, a file its
  // shell opened) is tainted before it can exit (supervisor/taint.h).  The
  // tracer's records come too late for that.
  if (!p.taints.empty())
    still |= bit(Action::FileRead) | bit(Action::FileWrite) | bit(Action::FileCreate) | bit(Action::FileTruncate);
  if (keeps) still |= kDestroys;
  notify = still;

  FilterSpec& f = plan.filter;
  f.set(Gate::ReadOpens, notify & bit(Action::FileRead));
  // For root the kernel's settings are files too, and a sandbox inside the
  // session mounts a proc or a sys of its own, writable where the session's
  // are not: every write open is judged by the file system it lands on
  // (notify/kernel_files.h).
  bool writes_notified = notify & (bit(Action::FileWrite) | bit(Action::FileTruncate) | bit(Action::FileCreate));
  f.set(Gate::WriteOpens, in.root || writes_notified);
  f.set(Gate::Deletes, notify & bit(Action::FileDelete));
  // Renames are always judged: renaming an ancestor moves protected trees
  // (and the audit database) away, which no mount can prevent.
  f.set(Gate::Renames);
  bool links = notify & (bit(Action::FileLink) | bit(Action::FileWrite) | bit(Action::FileTruncate));
  f.set(Gate::HardLinks, links);
  f.set(Gate::Symlinks, links);
  f.set(Gate::Creates, notify & bit(Action::FileCreate));
  f.set(Gate::Truncates, notify & bit(Action::FileTruncate));
  f.set(Gate::Attrs, notify & bit(Action::FileAttr));
  // Without the tracer, exec notifications keep the process table exact
  // (exec changes name, exe, argv); with it, its exec records do.
  f.set(Gate::Execs, !in.ebpf || (notify & bit(Action::ProcExec)));
  // Without a pid namespace or Landlock's signal scope the supervisor is in
  // reach: every signal is judged so none can touch it.
  f.set(Gate::Signals, (notify & bit(Action::ProcSignal)) || !in.signals_scoped);
  f.set(Gate::Net,
        notify & (bit(Action::NetConnect) | bit(Action::NetBind) | bit(Action::NetSend) | bit(Action::NetListen)));
  // Every sendmsg is notified once this is open (its address is behind a
  // pointer): only for policies that judge datagrams.
  f.set(Gate::Sends, notify & bit(Action::NetSend));
  f.set(Gate::CredChanges);
  // Inside read-only trees, creating is refused by the mount; where the
  // policy allows it, the supervisor carries it out through its own view.
  bool ro_allows_create = false;
  for (const auto& m : plan.mounted)
    if (!(m.actions & bit(Action::FileCreate)) || !(m.actions & bit(Action::FileLink))) ro_allows_create = true;
  if (ro_allows_create) {
    for (Gate g : {Gate::CreateOpens, Gate::Creates, Gate::HardLinks, Gate::Symlinks}) f.set(g);
  }
  // With the tracer recording them, hard links need no round trip where
  // the mounts answer them wholly: the supervisor would only let them
  // continue (notify/carry.h), and the tracer's record is their row.
  // Symlinks stay: a new one may repoint a name the short way remembers.
  // So do hard links where writes are judged: the supervisor learns each
  // new name of a file before anything can write through it.
  // (Root's write opens of kernel settings are no file a link could name.)
  bool writes_judged = writes_notified || f.has(Gate::Truncates) || f.has(Gate::Attrs);
  if (in.ebpf && !in.observe && plan.alias_of.empty() && !writes_judged &&
      short_way_allowed(plan.kernel_carried, CarryShape{CarryShape::Link, 0, 0, false}))
    f.set(Gate::HardLinks, false);
  if (!plan.inodes.empty() || !plan.link_trees.empty()) {
    // Writes through another name of a protected file reach no protected
    // path (nor a read-only mount): judge them by inode.
    for (Gate g : {Gate::WriteOpens, Gate::Truncates, Gate::Attrs}) f.set(g);
  }
  if (in.observe && in.ebpf) {
    // Observing: the tracer records everything and nothing is decided as
    // it happens, so nothing needs the supervisor but the guards.
    FilterSpec g;
    g.set(Gate::CredChanges, f.has(Gate::CredChanges));
    f = g;
  }
  if (in.ebpf_only) {
    FilterSpec g;
    g.set(Gate::CredChanges);
    f = g;
    for (const auto& l : plan.layers)
      if (l.layer != Enforcement::Mount)
        plan.weakened.push_back("rule " + l.rule_id +
                                " needs the supervisor, which --tracer ebpf leaves out: recorded, not enforced");
  }
  f.io_uring_allowed = false;
  {
    Event probe;
    probe.action = Action::SysIoUring;
    probe.path = "io_uring";
    f.io_uring_allowed = decide(p, probe).decision == Decision::Allow;
  }
  if (!in.listener) {
    // Nothing is notified: the mounts above, and refusals in the filter.
    KernelOnlyFilter k =
        in.observe ? KernelOnlyFilter{} : kernel_only_filter(p, in.root && in.mount_layer && !in.locked_mounts);
    FilterSpec g;
    g.notify = false;
    g.io_uring_allowed = f.io_uring_allowed;
    g.refusals = std::move(k.refusals);
    f = std::move(g);
    plan.kernel_carried = 0;
    for (auto& n : k.notes) plan.notes.push_back(std::move(n));
    if (in.root && in.mount_layer && in.locked_mounts)
      plan.notes.push_back(
          "the command runs as root in a user namespace of its own (ids mapped to themselves): the read-only "
          "trees are locked there, so that it may mount but not unmount, move or make them writable, and it has "
          "no capability over the host's namespaces");
    if (!in.observe)
      if (std::string w = kernel_only_unenforced(p, plan.layers, k.fixed); !w.empty()) plan.weakened.push_back(w);
    // Where each rule lands now, for `check`.
    for (RuleLayer& l : plan.layers) {
      if (l.layer == Enforcement::Mount) continue;
      auto r = std::find_if(p.rules.begin(), p.rules.end(), [&](const Rule& x) { return x.id == l.rule_id; });
      if (l.layer == Enforcement::MountAndNotify) {
        l.layer = Enforcement::Mount;
        l.detail = "read-only bind mount only; what else it covers needs a supervisor, which this session lacks";
      } else if (!in.observe && r != p.rules.end() && (r->actions & ~k.fixed) == 0) {
        l.layer = Enforcement::Filter;
        l.detail = "refused in the seccomp filter, whoever calls";
      } else {
        l.layer = Enforcement::None;
        l.detail = "not enforced: it needs a supervisor to judge each call, which this session lacks";
      }
    }
  }
  return plan;
}

}  // namespace cb
