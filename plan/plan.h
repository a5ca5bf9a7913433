// Compiling a policy into enforcement layers.
//
// Each rule goes to the cheapest layer that enforces it exactly:
//   - mount:  an unconditional deny of every write-class action on a whole
//             tree becomes a read-only bind mount in the session's private
//             mount namespace (no round trip, no race, io_uring included);
//   - filter: actions no rule can deny or ask about never leave the kernel;
//   - notify: everything else is decided by the supervisor as it happens.
// The same plan drives `cottonbox run` and explains itself in `cottonbox check`.
#pragma once

#include <string>
#include <vector>

#include "host/facts.h"
#include "host/inherited.h"
#include "host/links.h"
#include "host/mounts.h"
#include "plan/filter_spec.h"
#include "policy/policy.h"

namespace cb {

enum class MountKind : uint8_t {
  RoBind,       // bind `path` onto itself read-only (recursively for a directory)
  HideDir,      // an empty private tmpfs over directory `path`
  BlockNode,    // bind the read-only empty file `source` over device node `path`
  HideFile,     // bind the read-only empty file `source` over the file `path`
  ReplaceFile,  // bind the read-only file `source` over the file `path` (the session's resolv.conf)
  Proc,         // a fresh procfs on /proc for the session's pid namespace
};

// "read-only", "hidden", "hidden file", "replaced", "raw disk blocked", "fresh procfs".
std::string_view mount_kind_name(MountKind k);

struct MountOp {
  MountKind kind;
  std::string path;
  std::string source;
  bool optional = false;  // a failure is reported but not fatal (e.g. /proc/sys/... missing)
};

struct PlanInput {
  bool mount_layer = true;               // a private mount namespace is available
  bool root = false;                     // the command runs as root: kernel interfaces, raw disks
  std::vector<std::string> self_files;   // audit db and its -wal/-shm, policy files
  std::vector<std::string> trail_files;  // those of them hidden (the audit db and its companions)
  std::vector<std::string> hidden_dirs;  // control socket directories
  std::string blocker_file;              // an empty read-only file bound over raw disk nodes and the trail
  bool ebpf = false;                     // the tracer records what is not notified
  bool observe = false;                  // --observe: policy trees are not made read-only
  bool ebpf_only = false;                // --tracer ebpf: no decisions as they happen, only kernel layers
  bool signals_scoped = true;            // a pid namespace or Landlock keeps signals off the supervisor
  std::vector<InheritedFile> inherited;  // files and directories the command inherits
  // What allowed calls destroy is kept first for undo (the policy's keep
  // scope and rules say where): those calls must reach the supervisor, and
  // the kernel may not carry them out (only the supervisor can keep).
  bool keep = false;
  // The session can have a seccomp listener.  Without one (inside another
  // supervisor: host/nesting.h) nothing is decided as it happens, and the
  // policy is enforced by kernel layers alone (plan/kernel_only.h).
  bool listener = true;
  // A root command without a supervisor runs in a user namespace of its own
  // (ids mapped to themselves): its copies of the read-only trees are
  // locked, so that it may mount (a sandbox inside) but not undo them.
  // Without it such a session refuses every mount call in its filter.
  bool locked_mounts = false;
  // Files the session sees in place of the host's: (path, the file bound
  // read-only over it).  The session's resolv.conf, which names the
  // session's resolver; an empty file over a host resolver cache's socket
  // (nscd, systemd-resolved), which would answer names around it.
  std::vector<std::pair<std::string, std::string>> replaced_files;
};

// Where a deny or ask rule is enforced.
enum class Enforcement : uint8_t {
  Mount,           // a kernel layer alone: a read-only bind mount, a hidden directory
  MountAndNotify,  // a mount, and the supervisor for what a mount cannot express or record
  Notify,          // the supervisor as the call happens
  // Without a supervisor (plan/kernel_only.h, `--layers` without notify):
  Filter,  // refused in the seccomp filter, whoever calls
  None,    // nothing enforces it; named in Plan::weakened
};
// "mount", "mount+notify", "notify", "filter", "none"
std::string_view enforcement_name(Enforcement e);

struct RuleLayer {
  std::string rule_id;
  Enforcement layer = Enforcement::Notify;
  std::string detail;
};

struct Plan {
  FilterSpec filter;
  std::vector<MountOp> mounts;
  std::vector<StaticDenial> mounted;  // trees the mount layer enforces
  std::vector<StaticDenial> aliases;  // the same trees under other names (host bind mounts), also read-only
  std::vector<std::pair<std::string, std::string>> alias_of;  // (other name, the protected tree it shows)
  std::vector<ProtectedDevice> devices;
  // Other names of files under the protected trees: known already when the
  // trees are small (`inodes`), else found by a LinkIndex over `link_trees`
  // while the session runs.
  InodeAliases inodes;
  std::vector<std::string> link_trees;
  // File actions that no rule refuses anywhere except where the mount layer
  // refuses them too: allowed ones may run in the kernel (CONTINUE), which
  // enforces every refusal itself whatever path it ends up at.  Empty when
  // any refusal of them rests on the supervisor's check alone.
  ActionMask kernel_carried = 0;
  std::vector<RuleLayer> layers;      // one per rule, for `check`
  std::vector<std::string> notes;     // how rules are enforced, for `check`
  std::vector<std::string> weakened;  // what the session cannot enforce or record as asked: degraded
};

// The planner is a pure function of the policy, the session's inputs and
// the host's facts; plan_query says which facts it needs.  The two-argument
// form gathers them (host/facts.h) and plans.
HostQuery plan_query(const Policy& p, const PlanInput& in);
Plan make_plan(const Policy& p, const PlanInput& in, const HostFacts& host);
Plan make_plan(const Policy& p, const PlanInput& in);

}  // namespace cb
