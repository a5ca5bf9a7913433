// The handlers of the file families: opens, names in a directory
// (unlink, rename, link, symlink, mkdir, mknod) and sizes.
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>

#include "base/paths.h"
#include "host/mountinfo.h"
#include "notify/fixed_args.h"
#include "notify/handlers.h"
#include "notify/kernel_files.h"
#include "notify/listener.h"
#include "procs/creds.h"
#include "procs/mount_map.h"
#include "syscalls/compat.h"

namespace cb::handlers {
namespace {

bool on_procfs_fd(int fd) {
  struct statfs sf;
  return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

// What writing the resolved (existing) file would change of the kernel's:
// judged on the file system the object is on, wherever it is mounted.
KernelFile kernel_target(const Resolved& r, PathContext& ctx) {
  constexpr KernelFile kUnknown{KernelFile::Setting, nullptr};  // fail closed
  UniqueFd own;
  auto file_itself = [&]() -> int {
    if (r.object) return r.object.get();
    if (!own) own.reset(openat(r.parent.get(), r.name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    return own.get();
  };
  int fd = r.object ? r.object.get() : r.parent.get();
  if (!r.object) {
    // The file may be a mount point of its own (bound onto its name).
    struct stat dir;
    if (fstat(fd, &dir) != 0) return kUnknown;
    if (dir.st_dev != r.st.st_dev && (fd = file_itself()) < 0) return kUnknown;
  }
  struct statfs sf;
  if (fstatfs(fd, &sf) != 0) return kUnknown;
  if (!kernel_fs(sf.f_type)) return {};
  if (sf.f_type != PROC_SUPER_MAGIC) return kernel_file(sf.f_type, "");
  // Where in its procfs: a process's own directory or the machine's.
  int file = file_itself();
  MountMap* mounts = ctx.mounts();
  if (file < 0 || !mounts) return kUnknown;
  auto m = mounts->mount_of(file, ctx.tid());
  if (!m) return kUnknown;
  auto in_fs = fs_path_of(*m, fd_path(file));
  return in_fs ? kernel_file(sf.f_type, *in_fs) : kUnknown;
}

// Whether the thread is in a namespace of the kind `ns` other than the
// supervisor's (the host's).
bool own_namespace(pid_t tid, const char* ns) {
  Privileged priv;
  struct stat mine, theirs;
  std::string p = "/proc/" + std::to_string(tid) + "/ns/" + ns;
  std::string s = std::string("/proc/self/ns/") + ns;
  return stat(p.c_str(), &theirs) == 0 && stat(s.c_str(), &mine) == 0 &&
         (theirs.st_ino != mine.st_ino || theirs.st_dev != mine.st_dev);
}

Classified open_path(const Call& call, PathContext& ctx, const ClassifyEnv& env, int dirfd, uint64_t pathp_arg,
                     uint64_t flags, uint64_t mode, const open_how* how) {
  // An O_PATH descriptor reads, writes and creates nothing (the kernel
  // drops every other flag), and what is done through it later (an *at
  // call, a reopen through /proc/self/fd) is judged then.  It cannot be
  // handed over with ADDFD either: the kernel runs it.
  if (flags & O_PATH) return cont();
  auto path = read_path(call, static_cast<int>(pathp_arg));
  if (!path) return fail(path.error().err);
  bool excl_create = (flags & O_CREAT) && (flags & O_EXCL);
  bool tmpfile = (flags & __O_TMPFILE) == __O_TMPFILE;
  Follow follow = (flags & O_NOFOLLOW) || excl_create ? Follow::NoFinal : Follow::Final;
  if (how && how->resolve) {
    // RESOLVE_* restrictions: refuse what we cannot reproduce exactly rather
    // than widen them.
    if (how->resolve & ~uint64_t(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_BENEATH |
                                 RESOLVE_IN_ROOT | RESOLVE_CACHED))
      return fail(EINVAL);
    if (how->resolve & RESOLVE_CACHED) return fail(EAGAIN);
    return fail(ENOSYS);  // callers fall back to openat(2)
  }
  auto r = resolve_path(ctx, dirfd, *path, follow);
  if (!r) return fail(r.error().err);
  int acc = static_cast<int>(flags & O_ACCMODE);
  bool path_only = flags & O_PATH;
  bool write = !path_only && (acc == O_WRONLY || acc == O_RDWR || acc == O_ACCMODE);
  Classified c;
  c.flags = flags;
  c.op.kind = OpKind::Open;
  c.op.flags = flags;
  c.op.mode = mode & 07777;
  c.op.cloexec = flags & O_CLOEXEC;
  if (r->trailing_slash && r->exists && !S_ISDIR(r->st.st_mode) && !S_ISLNK(r->st.st_mode)) return fail(ENOTDIR);
  if (tmpfile) {
    if (!r->exists) return fail(ENOENT);
    if (!S_ISDIR(r->st.st_mode)) return fail(ENOTDIR);
    c.facets.push_back(facet(Action::FileCreate, join_path(r->path, "")));
    c.op.needs_umask = true;
  } else if (!r->exists) {
    if (!(flags & O_CREAT)) return fail(ENOENT);
    if (r->trailing_slash) return fail(EISDIR);
    c.facets.push_back(facet(Action::FileCreate, r->path));
    c.op.needs_umask = true;
  } else {
    if (excl_create) return fail(EEXIST);
    if (S_ISLNK(r->st.st_mode) && !path_only) return fail(ELOOP);  // O_NOFOLLOW on a symlink
    if (write && S_ISDIR(r->st.st_mode)) return fail(EISDIR);
    bool trunc = write && (flags & O_TRUNC) && S_ISREG(r->st.st_mode);
    Action a = trunc ? Action::FileTruncate : write ? Action::FileWrite : Action::FileRead;
    Facet f = facet(a, r->path, S_ISDIR(r->st.st_mode));
    add_device_aliases(f, r->st, env);
    if (write) add_inode_aliases(f, r->st, env);
    // Another process's memory opened for writing is tracing it.
    if (write && r->path.rfind("/proc/", 0) == 0 && r->path.size() > 4 &&
        r->path.compare(r->path.size() - 4, 4, "/mem") == 0) {
      pid_t target = static_cast<pid_t>(atoi(r->path.c_str() + 6));
      if (target != ctx.ns_ids().first) {
        Facet t = facet(Action::ProcTrace, r->path);
        t.target_pid = target;
        c.facets.push_back(std::move(t));
      }
    }
    if (write && (r->name == "uid_map" || r->name == "gid_map" || r->name == "setgroups" || r->name == "projid_map") &&
        r->parent && on_procfs_fd(r->parent.get()))
      c.kernel_opens =
          unfixed_args(call.tid, {{call.args[pathp_arg], path->size() + 1}}, env.session_pids, dirfd).empty();
    if (write) {
      KernelFile k = kernel_target(*r, ctx);
      if (k.kind == KernelFile::Namespaced && own_namespace(call.tid, k.ns)) {
        // A setting of the caller's own namespace: the kernel picks the
        // namespace of whoever opens it, so only the caller's open reaches it.
        if (unfixed_args(call.tid, {{call.args[pathp_arg], path->size() + 1}}, env.session_pids, dirfd).empty()) {
          c.kernel_opens = true;
        } else {
          Facet s = facet(Action::SysKernel, r->path);
          s.breaks_layer =
              "a setting of the caller's own namespace is reached only by its own open, and another thread can "
              "change the name it gives";
          c.facets.push_back(std::move(s));
        }
      } else if (k.kind != KernelFile::None) {
        // The machine's setting, whatever mount shows it.
        c.facets.push_back(facet(Action::SysKernel, r->path));
      }
    }
    std::vector<std::string> aliases = f.aliases;
    c.facets.push_back(std::move(f));
    if (trunc) {
      Facet w = facet(Action::FileWrite, r->path);
      w.aliases = aliases;
      c.facets.push_back(std::move(w));
    }
    c.op.blocking = S_ISFIFO(r->st.st_mode) && !(flags & O_NONBLOCK) && acc == O_WRONLY;
  }
  c.op.dir = std::move(r->parent);
  c.op.obj = std::move(r->object);
  c.op.name = std::move(r->name);
  return c;
}

Classified unlink_at(const Call& call, PathContext& ctx, int dirfd, int argi, uint64_t flags) {
  auto path = read_path(call, argi);
  if (!path) return fail(path.error().err);
  auto r = resolve_path(ctx, dirfd, *path, Follow::NoFinal);
  if (!r) return fail(r.error().err);
  bool rmdir = flags & AT_REMOVEDIR;
  if (r->object) return fail(rmdir ? (r->name == ".." ? ENOTEMPTY : EINVAL) : EISDIR);
  if (!r->exists) return fail(ENOENT);
  bool dir = S_ISDIR(r->st.st_mode);
  if (rmdir && !dir) return fail(ENOTDIR);
  if (!rmdir && dir) return fail(EISDIR);
  if (r->trailing_slash && !dir) return fail(ENOTDIR);
  Classified c;
  c.flags = flags;
  c.facets.push_back(facet(Action::FileDelete, r->path, dir));
  c.op.kind = OpKind::Unlink;
  c.op.flags = flags;
  c.op.dir = std::move(r->parent);
  c.op.name = std::move(r->name);
  return c;
}

Classified rename_at(const Call& call, PathContext& ctx, int odir, int oarg, int ndir, int narg, uint64_t flags) {
  auto op = read_path(call, oarg);
  if (!op) return fail(op.error().err);
  auto np = read_path(call, narg);
  if (!np) return fail(np.error().err);
  auto o = resolve_path(ctx, odir, *op, Follow::NoFinal);
  if (!o) return fail(o.error().err);
  auto n = resolve_path(ctx, ndir, *np, Follow::NoFinal);
  if (!n) return fail(n.error().err);
  if (o->object || n->object) return fail(EBUSY);
  if (!o->exists) return fail(ENOENT);
  bool exchange = flags & RENAME_EXCHANGE;
  if (exchange && !n->exists) return fail(ENOENT);
  if ((flags & RENAME_NOREPLACE) && n->exists) return fail(EEXIST);
  bool odir_is = S_ISDIR(o->st.st_mode);
  Classified c;
  c.flags = flags;
  Facet f = facet(Action::FileRename, o->path, odir_is);
  f.target = n->path;
  c.facets.push_back(std::move(f));
  if (exchange) {
    Facet g = facet(Action::FileRename, n->path, S_ISDIR(n->st.st_mode));
    g.target = o->path;
    c.facets.push_back(std::move(g));
  } else if (n->exists) {
    c.facets.push_back(facet(Action::FileDelete, n->path, S_ISDIR(n->st.st_mode)));
  } else {
    c.facets.push_back(facet(Action::FileCreate, n->path, odir_is));
  }
  c.op.kind = OpKind::Rename;
  c.op.flags = flags;
  c.op.dir = std::move(o->parent);
  c.op.name = std::move(o->name);
  c.op.dir2 = std::move(n->parent);
  c.op.name2 = std::move(n->name);
  return c;
}

Classified link_at(const Call& call, PathContext& ctx, int odir, int oarg, int ndir, int narg, uint64_t flags) {
  auto np = read_path(call, narg);
  if (!np) return fail(np.error().err);
  Classified c;
  c.flags = flags;
  c.op.kind = OpKind::Link;
  std::string old_path;
  bool old_is_dir = false;
  if (flags & AT_EMPTY_PATH) {
    auto op = read_path(call, oarg);
    if (op && !op->empty()) {
      auto o = resolve_path(ctx, odir, *op, (flags & AT_SYMLINK_FOLLOW) ? Follow::Final : Follow::NoFinal);
      if (!o) return fail(o.error().err);
      if (!o->exists) return fail(ENOENT);
      old_path = o->path;
      old_is_dir = S_ISDIR(o->st.st_mode);
      c.op.dir = std::move(o->parent);
      c.op.obj = std::move(o->object);
      c.op.name = std::move(o->name);
    } else {
      auto d = ctx.dirfd(odir);
      if (!d) return fail(d.error().err);
      auto name = ctx.name_of(d->get());
      if (!name) return fail(name.error().err);
      old_path = std::move(*name);
      c.op.obj = std::move(*d);
    }
  } else {
    auto op = read_path(call, oarg);
    if (!op) return fail(op.error().err);
    auto o = resolve_path(ctx, odir, *op, (flags & AT_SYMLINK_FOLLOW) ? Follow::Final : Follow::NoFinal);
    if (!o) return fail(o.error().err);
    if (!o->exists) return fail(ENOENT);
    old_path = o->path;
    old_is_dir = S_ISDIR(o->st.st_mode);
    c.op.dir = std::move(o->parent);
    c.op.obj = std::move(o->object);
    c.op.name = std::move(o->name);
  }
  if (old_is_dir) return fail(EPERM);
  auto n = resolve_path(ctx, ndir, *np, Follow::NoFinal);
  if (!n) return fail(n.error().err);
  if (n->exists || n->object) return fail(EEXIST);
  Facet f = facet(Action::FileLink, n->path);
  f.target = old_path;
  c.facets.push_back(std::move(f));
  // A second name for a file is a way to write it later without its
  // protected path: linking a file counts as writing it.
  Facet w = facet(Action::FileWrite, old_path);
  c.facets.push_back(std::move(w));
  c.facets.push_back(facet(Action::FileTruncate, old_path));
  c.op.flags = flags & AT_EMPTY_PATH;
  c.op.dir2 = std::move(n->parent);
  c.op.name2 = std::move(n->name);
  return c;
}

Classified symlink_at(const Call& call, PathContext& ctx, int targ_arg, int ndir, int narg) {
  auto target = TargetMemory::read_string(call.tid, call.args[targ_arg], PATH_MAX);
  if (!target) return fail(target.error().err);
  auto np = read_path(call, narg);
  if (!np) return fail(np.error().err);
  auto n = resolve_path(ctx, ndir, *np, Follow::NoFinal);
  if (!n) return fail(n.error().err);
  if (n->exists || n->object) return fail(EEXIST);
  Classified c;
  Facet f = facet(Action::FileLink, n->path);
  f.target = *target;
  c.facets.push_back(std::move(f));
  c.op.kind = OpKind::Symlink;
  c.op.str = std::move(*target);
  c.op.dir2 = std::move(n->parent);
  c.op.name2 = std::move(n->name);
  return c;
}

Classified mknod_at(const Call& call, PathContext& ctx, const ClassifyEnv& env, int dirfd, int argi, uint64_t mode,
                    uint64_t dev, bool is_mkdir) {
  auto p = read_path(call, argi);
  if (!p) return fail(p.error().err);
  auto n = resolve_path(ctx, dirfd, *p, Follow::NoFinal);
  if (!n) return fail(n.error().err);
  if (n->exists || n->object) return fail(EEXIST);
  if (n->trailing_slash && !is_mkdir) return fail(ENOENT);
  Classified c;
  c.flags = mode;
  Facet f = facet(Action::FileCreate, n->path, is_mkdir);
  if (!is_mkdir && (S_ISBLK(mode) || S_ISCHR(mode))) {
    // A new device node for a disk holding protected trees is one more way
    // to write them.
    struct stat st {};
    st.st_mode = static_cast<mode_t>(mode);
    st.st_rdev = static_cast<dev_t>(dev);
    Facet w = facet(Action::FileWrite, n->path);
    add_device_aliases(w, st, env);
    c.facets.push_back(std::move(f));
    if (!w.aliases.empty()) c.facets.push_back(std::move(w));
  } else {
    c.facets.push_back(std::move(f));
  }
  c.op.kind = is_mkdir ? OpKind::Mkdir : OpKind::Mknod;
  c.op.mode = mode;
  c.op.dev = dev;
  c.op.needs_umask = true;
  c.op.dir = std::move(n->parent);
  c.op.name = std::move(n->name);
  return c;
}

}  // namespace

Classified classify_open(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  const uint64_t* a = call.args;
  int dirfd = dirfd_arg(call, row.args.dirfd1);
  if (row.args.how >= 0) {
    open_how how{};
    size_t size = a[row.args.size];
    if (size < sizeof(uint64_t) * 3) return fail(EINVAL);
    if (!TargetMemory::read(call.tid, a[row.args.how], &how, std::min(size, sizeof how))) return fail(EFAULT);
    return open_path(call, ctx, env, dirfd, row.args.path1, how.flags, how.mode, &how);
  }
  return open_path(call, ctx, env, dirfd, row.args.path1, flags_arg(call, row), arg_or(call, row.args.mode, 0),
                   nullptr);
}

Classified classify_open_by_handle(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  const uint64_t* a = call.args;
  // A handle names an inode without a path: find the path, then judge
  // the open like any other.  Needs CAP_DAC_READ_SEARCH, which the
  // target's credentials (in force here) have or not.
  struct {
    unsigned int handle_bytes;
    int handle_type;
    unsigned char f_handle[128];
  } h{};
  if (!TargetMemory::read(call.tid, a[row.args.data], &h, 8)) return fail(EFAULT);
  if (h.handle_bytes > sizeof h.f_handle) return fail(EINVAL);
  if (!TargetMemory::read(call.tid, a[row.args.data] + 8, h.f_handle, h.handle_bytes)) return fail(EFAULT);
  // The mount fd must be a real open file, not an O_PATH one.
  UniqueFd mnt;
  if (as_fd(a[row.args.fd]) == AT_FDCWD) {
    auto c = ctx.cwd();
    if (!c) return fail(c.error().err);
    mnt.reset(openat(*c, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!mnt) return fail(errno);
  } else {
    auto f = target_fd_object(call, as_fd(a[row.args.fd]), true, env);
    if (!f) return fail(f.error().err);
    mnt = std::move(*f);
  }
  UniqueFd obj(static_cast<int>(syscall(SYS_open_by_handle_at, mnt.get(), &h, O_PATH | O_CLOEXEC)));
  if (!obj) return fail(errno);
  struct stat st {};
  fstat(obj.get(), &st);
  uint64_t flags = flags_arg(call, row);
  int acc = static_cast<int>(flags & O_ACCMODE);
  bool write = !(flags & O_PATH) && (acc == O_WRONLY || acc == O_RDWR);
  bool trunc = write && (flags & O_TRUNC) && S_ISREG(st.st_mode);
  auto name = ctx.name_of(obj.get());
  if (!name) return fail(name.error().err);
  Classified c;
  c.flags = flags;
  Facet f = facet(trunc   ? Action::FileTruncate
                  : write ? Action::FileWrite
                          : Action::FileRead,
                  *name, S_ISDIR(st.st_mode));
  add_device_aliases(f, st, env);
  add_inode_aliases(f, st, env);
  if (trunc) {
    Facet w = f;
    w.action = Action::FileWrite;
    c.facets.push_back(std::move(f));
    c.facets.push_back(std::move(w));
  } else {
    c.facets.push_back(std::move(f));
  }
  c.op.kind = OpKind::Open;
  c.op.flags = flags & ~uint64_t(O_CREAT | O_EXCL);
  c.op.cloexec = flags & O_CLOEXEC;
  c.op.obj = std::move(obj);
  return c;
}

Classified classify_unlink(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv&) {
  if (row.args.flags >= 0 && (call.args[row.args.flags] & ~uint64_t(AT_REMOVEDIR))) return fail(EINVAL);
  return unlink_at(call, ctx, dirfd_arg(call, row.args.dirfd1), row.args.path1, flags_arg(call, row));
}

Classified classify_rename(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv&) {
  uint64_t flags = flags_arg(call, row);
  if (flags & ~uint64_t(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) return fail(EINVAL);
  return rename_at(call, ctx, dirfd_arg(call, row.args.dirfd1), row.args.path1, dirfd_arg(call, row.args.dirfd2),
                   row.args.path2, flags);
}

Classified classify_link(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv&) {
  return link_at(call, ctx, dirfd_arg(call, row.args.dirfd1), row.args.path1, dirfd_arg(call, row.args.dirfd2),
                 row.args.path2, flags_arg(call, row));
}

Classified classify_symlink(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv&) {
  return symlink_at(call, ctx, row.args.path2, dirfd_arg(call, row.args.dirfd1), row.args.path1);
}

Classified classify_mknod(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  return mknod_at(call, ctx, env, dirfd_arg(call, row.args.dirfd1), row.args.path1, arg_or(call, row.args.mode, 0),
                  arg_or(call, row.args.dev, 0), row.family == Family::Mkdir);
}

Classified classify_truncate(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  const uint64_t* a = call.args;
  auto p = read_path(call, row.args.path1);
  if (!p) return fail(p.error().err);
  auto r = resolve_path(ctx, dirfd_arg(call, row.args.dirfd1), *p, Follow::Final);
  if (!r) return fail(r.error().err);
  if (!r->exists) return fail(ENOENT);
  if (S_ISDIR(r->st.st_mode)) return fail(EISDIR);
  if (!S_ISREG(r->st.st_mode)) return fail(EINVAL);
  Classified c;
  Facet f = facet(Action::FileTruncate, r->path);
  add_inode_aliases(f, r->st, env);
  c.facets.push_back(std::move(f));
  c.op.kind = OpKind::Truncate;
  c.op.len = static_cast<int64_t>(a[row.args.length]);
  c.op.obj = std::move(r->object);
  if (!c.op.obj) c.op.obj.reset(openat(r->parent.get(), r->name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!c.op.obj) return fail(errno);
  return c;
}

Classified classify_fd_size(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  const uint64_t* a = call.args;
  // On the very open file: another thread may swap the fd number.
  auto f = target_fd_object(call, as_fd(a[row.args.fd]), true, env);
  if (!f) return fail(f.error().err);
  struct stat st {};
  fstat(f->get(), &st);
  auto name = ctx.name_of(f->get());
  if (!name) return fail(name.error().err);
  Classified c;
  Facet fa = facet(Action::FileTruncate, *name);
  add_inode_aliases(fa, st, env);
  c.facets.push_back(std::move(fa));
  c.op.obj = std::move(*f);
  if (row.family == Family::FdTruncate) {
    c.op.kind = OpKind::FdTruncate;
    c.op.len = static_cast<int64_t>(a[row.args.length]);
  } else {
    c.flags = flags_arg(call, row);
    c.op.kind = OpKind::FdFallocate;
    c.op.flags = c.flags;
    c.op.value = static_cast<int64_t>(a[row.args.offset]);
    c.op.len = static_cast<int64_t>(a[row.args.length]);
  }
  return c;
}

}  // namespace cb::handlers
