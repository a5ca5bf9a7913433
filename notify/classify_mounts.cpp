// The mount family.  Inside a mount namespace of its own, a process may
// mount what it likes (sandboxing tools do: bwrap, unshare, srt): every
// name it then uses is judged as the host's name of the same object
// (procs/mount_map.h), so a bind mount is only another name.  What no rule
// can allow is undoing a layer of the session: unmounting, moving or making
// writable a read-only tree (or its copy), a bind that leaves one behind so
// what it covers shows, a file system that reaches host files around the
// layers (overlay, a disk), reconfiguring a file system the host shares, or
// any mount in the session's own namespace, which every process sees.
//
// The calls are then let through to the kernel, which reads their pointer
// arguments again: only when nothing else can change them in between
// (notify/fixed_args.h).
#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include <set>
#include <string>

#include "base/paths.h"
#include "notify/fixed_args.h"
#include "notify/handlers.h"
#include "notify/listener.h"
#include "syscalls/compat.h"

namespace cb::handlers {
namespace {

constexpr uint64_t kPropagation = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE;

// File systems of the kernel's whose files are its settings
// (notify/kernel_files.h).
bool kernel_settings(const std::string& type) {
  return type == "proc" || type == "sysfs" || type == "cgroup" || type == "cgroup2";
}

// File systems a namespace gets for itself, holding nothing of the host's.
bool own_file_system(const std::string& type) {
  static const std::set<std::string> kinds = {"tmpfs",  "ramfs",  "proc",    "sysfs",
                                              "devpts", "mqueue", "cgroup2", "cgroup"};
  return kinds.count(type) > 0;
}

struct Place {
  std::string name;  // the host's name of the object
  MountEntry mount;
  std::string fs_path;  // where the object lies in its file system
  bool session_ns = false;
};

// The object a (dirfd, path) pair names; an empty path (AT_EMPTY_PATH and
// its kin) names the dirfd's own object.
Result<Place> place_at(const Call& call, PathContext& ctx, const ClassifyEnv& env, int dirfd, const std::string& path,
                       bool follow) {
  MountMap* mounts = ctx.mounts();
  if (!mounts) return Error{EPERM, "no mount map"};
  UniqueFd obj;
  if (path.empty()) {
    auto f = target_fd_object(call, dirfd, false, env);
    if (!f) return f.error();
    obj = std::move(*f);
  } else {
    auto r = resolve_path(ctx, dirfd, path, follow ? Follow::Final : Follow::NoFinal);
    if (!r) return r.error();
    if (!r->exists) return Error{ENOENT, "no such file"};
    obj = r->object ? std::move(r->object)
                    : UniqueFd(openat(r->parent.get(), r->name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!obj) return Error::from_errno(r->name);
  }
  auto m = mounts->mount_of(obj.get(), ctx.tid());
  if (!m) return m.error();
  Place p;
  auto name = ctx.name_of(obj.get());
  p.name = name ? *name : path;
  p.session_ns = mounts->in_session_ns(m->id);
  p.fs_path = fs_path_of(*m, fd_path(obj.get())).value_or(m->root);
  p.mount = std::move(*m);
  return p;
}

// A layer mount at or below the place, not carried along by a bind of it.
bool leaves_layer_behind(MountMap& mounts, const Place& src) {
  if (mounts.layer_below(src.mount.dev, src.fs_path)) return true;
  // The covered directory itself, reached through a mount that is not the layer.
  MountEntry at = src.mount;
  at.root = src.fs_path;
  return mounts.is_layer(at) && !mounts.is_layer(src.mount);
}

const char* const kOwnNs =
    "a mount in the session's own mount namespace changes what every process of the session sees; mount in a "
    "namespace of your own (unshare -m, bwrap)";

Classified judged(Action a, std::string what, uint64_t flags, std::string breaks) {
  Classified c;
  c.flags = flags;
  Facet f = facet(a, std::move(what));
  f.breaks_layer = std::move(breaks);
  c.facets.push_back(std::move(f));
  c.op.kind = OpKind::Continue;
  c.mounts_changed = true;
  return c;
}

}  // namespace

Classified classify_mount(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  MountMap* mounts = ctx.mounts();
  std::vector<ArgRange> read;
  auto str = [&](int argi) -> Result<std::string> {
    auto s = read_path(call, argi);
    if (s) read.push_back({call.args[argi], s->size() + 1});
    return s;
  };
  auto place = [&](int dirfd, int argi, bool follow) -> Result<Place> {
    auto p = str(argi);
    if (!p) return p.error();
    return place_at(call, ctx, env, dirfd, *p, follow);
  };
  std::string what, breaks;
  uint64_t flags = 0;
  bool kernel_fs = false;
  switch (call.nr) {
    case SYS_mount: {
      flags = call.args[3];
      auto target = place(AT_FDCWD, 1, true);
      if (!target) return fail(target.error().err);
      what = target->name;
      bool propagation_only = (flags & kPropagation) && !(flags & (MS_BIND | MS_MOVE | MS_REMOUNT));
      if (propagation_only) break;
      if (target->session_ns) {
        breaks = kOwnNs;
      } else if (flags & MS_REMOUNT) {
        if (!(flags & MS_BIND))
          breaks = "remounting reconfigures the file system itself, which the host shares";
        else if (!(flags & MS_RDONLY) && mounts->is_layer(target->mount))
          breaks = "it would make a read-only tree of the session writable";
      } else if (flags & (MS_MOVE | MS_BIND)) {
        auto src = place(AT_FDCWD, 0, !(flags & MS_MOVE));
        if (!src) return fail(src.error().err);
        if (flags & MS_MOVE) {
          if (src->session_ns)
            breaks = kOwnNs;
          else if (mounts->is_layer(src->mount))
            breaks = "it would move a read-only tree of the session off what it covers";
        } else if (!(flags & MS_REC) && leaves_layer_behind(*mounts, *src)) {
          breaks =
              "a bind mount without its submounts would show what a read-only tree of the session covers "
              "(bind recursively: --rbind)";
        }
      } else {
        auto type = str(2);
        if (!type) return fail(type.error().err);
        if (!own_file_system(*type))
          breaks = "a file system of type '" + *type + "' can reach the host's files around the session's layers";
        kernel_fs = kernel_settings(*type);
      }
      break;
    }
    case SYS_umount2: {
      flags = call.args[1];
      auto target = place(AT_FDCWD, 0, !(flags & UMOUNT_NOFOLLOW));
      if (!target) return fail(target.error().err);
      what = target->name;
      if (target->session_ns)
        breaks = kOwnNs;
      else if (mounts->is_layer(target->mount))
        breaks = "it would uncover what a read-only tree of the session covers";
      break;
    }
    case SYS_pivot_root: {
      auto root = place(AT_FDCWD, 0, true);
      if (!root) return fail(root.error().err);
      what = root->name;
      if (root->session_ns) breaks = kOwnNs;
      break;
    }
    case SYS_chroot: {
      auto p = str(0);
      if (!p) return fail(p.error().err);
      auto r = resolve_path(ctx, AT_FDCWD, *p, Follow::Final);
      if (!r) return fail(r.error().err);
      what = r->path;
      Classified c = judged(Action::SysMount, what, 0, "");
      return c;
    }
    case SYS_fsopen: {
      auto type = str(0);
      if (!type) return fail(type.error().err);
      what = *type;
      if (!own_file_system(*type))
        breaks = "a file system of type '" + *type + "' can reach the host's files around the session's layers";
      kernel_fs = kernel_settings(*type);
      break;
    }
    case SYS_fspick: {
      auto p = place(as_fd(call.args[0]), 1, true);
      if (!p) return fail(p.error().err);
      what = p->name;
      if (!own_file_system(p->mount.fstype))
        breaks = "reconfiguring a file system the host shares changes it for every process";
      break;
    }
    case SYS_open_tree:
    case __NR_open_tree_attr: {
      flags = call.args[2];
      auto src = place(as_fd(call.args[0]), 1, !(flags & AT_SYMLINK_NOFOLLOW));
      if (!src) return fail(src.error().err);
      what = src->name;
      if ((flags & OPEN_TREE_CLONE) && !(flags & AT_RECURSIVE) && leaves_layer_behind(*mounts, *src))
        breaks = "a copy without its submounts would show what a read-only tree of the session covers";
      if (call.nr == __NR_open_tree_attr && call.args[3]) {
        mount_attr attr{};
        if (!TargetMemory::read(call.tid, call.args[3], &attr, sizeof attr)) return fail(EFAULT);
        read.push_back({call.args[3], sizeof attr});
        if ((attr.attr_clr & MOUNT_ATTR_RDONLY) &&
            (mounts->is_layer(src->mount) || mounts->layer_below(src->mount.dev, src->fs_path)))
          breaks = "it would make a read-only tree of the session writable";
      }
      break;
    }
    case SYS_move_mount: {
      flags = call.args[4];
      if (!(flags & MOVE_MOUNT_F_EMPTY_PATH)) {
        auto from = place(as_fd(call.args[0]), 1, true);
        if (!from) return fail(from.error().err);
        if (from->session_ns)
          breaks = kOwnNs;
        else if (mounts->is_layer(from->mount))
          breaks = "it would move a read-only tree of the session off what it covers";
      }
      auto to = place(as_fd(call.args[2]), 3, true);
      if (!to) return fail(to.error().err);
      what = to->name;
      if (to->session_ns) breaks = kOwnNs;
      break;
    }
    case SYS_mount_setattr: {
      flags = call.args[2];
      auto target = place(as_fd(call.args[0]), 1, !(flags & AT_SYMLINK_NOFOLLOW));
      if (!target) return fail(target.error().err);
      what = target->name;
      mount_attr attr{};
      if (call.args[3] && !TargetMemory::read(call.tid, call.args[3], &attr, sizeof attr)) return fail(EFAULT);
      read.push_back({call.args[3], sizeof attr});
      if (target->session_ns && (attr.attr_set || attr.attr_clr))
        breaks = kOwnNs;
      else if ((attr.attr_clr & MOUNT_ATTR_RDONLY) &&
               (mounts->is_layer(target->mount) ||
                ((flags & AT_RECURSIVE) && mounts->layer_below(target->mount.dev, target->fs_path))))
        breaks = "it would make a read-only tree of the session writable";
      break;
    }
    default:  // fsconfig, fsmount: on a context fsopen or fspick judged
      return judged(Action::SysMount, std::string(row.name), 0, "");
  }
  if (breaks.empty()) breaks = unfixed_args(call.tid, read, env.session_pids);
  Classified c = judged(Action::SysMount, what, flags, std::move(breaks));
  c.kernel_fs_mount = kernel_fs;
  return c;
}

}  // namespace cb::handlers
