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

#include "policy/policy.h"
#include "tracer/filter.h"
#include "tracer/launch.h"
#include "tracer/supervisor.h"

namespace cb {

struct PlanInput {
  bool mount_layer = true;               // a private mount namespace is available
  bool root = false;                     // the command runs as root: kernel interfaces, raw disks
  std::vector<std::string> self_files;   // audit db and its -wal/-shm, policy files
  std::vector<std::string> hidden_dirs;  // control socket directories
  std::string blocker_file;              // an empty read-only file bound over raw disk nodes
  bool ebpf = false;                     // the tracer records what is not notified
  bool observe = false;                  // --observe: policy trees are not made read-only
  bool ebpf_only = false;                // --tracer ebpf: no decisions as they happen, only kernel layers
  bool signals_scoped = true;            // a pid namespace or Landlock keeps signals off the supervisor
  std::vector<InheritedFile> inherited;  // files and directories the command inherits
};

struct RuleLayer {
  std::string rule_id;
  std::string layer;  // "mount", "notify", "mount+notify", "filter (never notified)", ...
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

Plan make_plan(const Policy& p, const PlanInput& in);

// Other paths at which each of `dirs` already shows through bind mounts of
// its file system, as (other path, dir) (from /proc/self/mountinfo, read
// once; each checked to be the very same directory by device and inode).
std::vector<std::pair<std::string, std::string>> mount_aliases(const std::vector<std::string>& dirs);

// Regular files with more than one name below `roots` (at most `limit`
// entries visited): writing any other name of them writes the protected one.
// Returns false when the limit cut the walk short.
bool collect_multilinked(const std::vector<std::string>& roots, InodeAliases& out, size_t limit,
                         const std::atomic<bool>* stop = nullptr);

// The block devices (with partitions' disks and device-mapper/md members)
// that hold the file systems of `paths`, as device nodes found under /dev:
// for each path, the nodes that reach it.  /dev is read once.
std::vector<std::vector<std::pair<dev_t, std::string>>> block_devices_of(const std::vector<std::string>& paths);

}  // namespace cb
