// The handlers of the attribute families: mode, owner, times, extended
// attributes and the chattr flags, each changed on an O_PATH object of the
// very file checked (or on the target's own open file for the fd forms).
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>
#include <utime.h>

#include <cstring>

#include "notify/handlers.h"
#include "notify/listener.h"
#include "procs/creds.h"

namespace cb::handlers {
namespace {

// Resolves a path (or takes fd `fdarg` when the path is empty/NULL and the
// call allows it) into an O_PATH object for attribute changes.
Result<std::pair<UniqueFd, std::string>> attr_object(const Call& call, PathContext& ctx, const ClassifyEnv& env,
                                                     int dirfd, int path_arg, bool follow, bool empty_ok,
                                                     bool null_ok) {
  std::string path;
  if (path_arg >= 0 && call.args[path_arg] != 0) {
    auto p = read_path(call, path_arg);
    if (!p) return p.error();
    path = std::move(*p);
  } else if (!null_ok) {
    return Error{EFAULT, "null path"};
  }
  if (path.empty()) {
    if (!empty_ok && !null_ok) return Error{ENOENT, "empty path"};
    auto f = target_fd_object(call, dirfd, false, env);
    if (!f) return f.error();
    auto fp = ctx.name_of(f->get());
    if (!fp) return fp.error();
    return std::make_pair(std::move(*f), std::move(*fp));
  }
  auto r = resolve_path(ctx, dirfd, path, follow ? Follow::Final : Follow::NoFinal);
  if (!r) return r.error();
  if (!r->exists) return Error{ENOENT, "no such file"};
  UniqueFd obj = std::move(r->object);
  if (!obj) {
    obj.reset(openat(r->parent.get(), r->name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!obj) return Error::from_errno("open");
  }
  return std::make_pair(std::move(obj), r->path);
}

Classified attr_classified(Result<std::pair<UniqueFd, std::string>> o, OpKind kind, const ClassifyEnv& env) {
  if (!o) return fail(o.error().err);
  Classified c;
  struct stat st {};
  fstat(o->first.get(), &st);
  Facet f = facet(Action::FileAttr, o->second, S_ISDIR(st.st_mode));
  add_inode_aliases(f, st, env);
  c.facets.push_back(std::move(f));
  c.op.kind = kind;
  c.op.obj = std::move(o->first);
  return c;
}

// The object of an attribute call: by its fd (fchmod, fchown, fsetxattr),
// or by path relative to its dirfd, following a final symlink unless the
// flags (given or implied) say AT_SYMLINK_NOFOLLOW.
Result<std::pair<UniqueFd, std::string>> object_of(const Call& call, const Syscall& row, PathContext& ctx,
                                                   const ClassifyEnv& env, bool null_ok = false) {
  if (row.args.path1 < 0) return attr_object(call, ctx, env, as_fd(call.args[row.args.fd]), -1, true, true, true);
  // An xattr call's flags argument is XATTR_CREATE/REPLACE, not AT_ flags.
  bool xattr = row.family == Family::SetXattr || row.family == Family::RemoveXattr;
  uint64_t flags = xattr ? row.args.implied_flags : flags_arg(call, row);
  return attr_object(call, ctx, env, dirfd_arg(call, row.args.dirfd1), row.args.path1, !(flags & AT_SYMLINK_NOFOLLOW),
                     flags & AT_EMPTY_PATH, null_ok);
}

}  // namespace

Classified classify_chmod(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  auto c = attr_classified(object_of(call, row, ctx, env), OpKind::Chmod, env);
  c.op.mode = call.args[row.args.mode];
  return c;
}

Classified classify_chown(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  auto c = attr_classified(object_of(call, row, ctx, env), OpKind::Chown, env);
  if (c.op.kind != OpKind::Chown) return c;
  // The ids as the caller's user namespace names them, carried out by the
  // supervisor in its own.
  auto uid = host_id(call.tid, static_cast<uint32_t>(call.args[row.args.uid]), false);
  auto gid = host_id(call.tid, static_cast<uint32_t>(call.args[row.args.gid]), true);
  if (!uid || !gid) return fail(EINVAL);
  c.op.uid = *uid;
  c.op.gid = *gid;
  return c;
}

Classified classify_utime(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  // utimensat alone (the one with flags) takes a NULL path for its dirfd.
  bool nanoseconds = row.args.flags >= 0;
  auto c = attr_classified(object_of(call, row, ctx, env, nanoseconds), OpKind::Utimens, env);
  if (c.op.kind != OpKind::Utimens) return c;
  uint64_t times = call.args[row.args.data];
  timespec ts[2];
  if (times == 0) {
    ts[0].tv_nsec = ts[1].tv_nsec = UTIME_NOW;
    ts[0].tv_sec = ts[1].tv_sec = 0;
  } else if (nanoseconds) {
    if (!TargetMemory::read(call.tid, times, ts, sizeof ts)) return fail(EFAULT);
  } else if (row.nr == SYS_utime) {
    utimbuf u;
    if (!TargetMemory::read(call.tid, times, &u, sizeof u)) return fail(EFAULT);
    ts[0] = {u.actime, 0};
    ts[1] = {u.modtime, 0};
  } else {
    timeval tv[2];
    if (!TargetMemory::read(call.tid, times, tv, sizeof tv)) return fail(EFAULT);
    ts[0] = {tv[0].tv_sec, tv[0].tv_usec * 1000};
    ts[1] = {tv[1].tv_sec, tv[1].tv_usec * 1000};
  }
  c.op.blob.resize(sizeof ts);
  memcpy(c.op.blob.data(), ts, sizeof ts);
  return c;
}

Classified classify_xattr(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  bool set = row.family == Family::SetXattr;
  auto c = attr_classified(object_of(call, row, ctx, env), set ? OpKind::SetXattr : OpKind::RemoveXattr, env);
  if (c.op.kind == OpKind::Fail) return c;
  auto name = TargetMemory::read_string(call.tid, call.args[row.args.name], 256);
  if (!name) return fail(name.error().err == ENAMETOOLONG ? ERANGE : name.error().err);
  c.op.str = std::move(*name);
  if (set) {
    size_t size = call.args[row.args.size];
    if (size > 65536) return fail(E2BIG);
    c.op.blob.resize(size);
    if (size && !TargetMemory::read(call.tid, call.args[row.args.data], c.op.blob.data(), size)) return fail(EFAULT);
    c.op.flags = call.args[row.args.flags];
  }
  return c;
}

Classified classify_chattr(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env) {
  auto f = target_fd_object(call, as_fd(call.args[row.args.fd]), true, env);
  if (!f) return fail(f.error().err);
  uint64_t cmd = call.args[row.args.flags];
  Classified c;
  c.flags = cmd;
  auto name = ctx.name_of(f->get());
  if (!name) return fail(name.error().err);
  Facet fa = facet(Action::FileAttr, *name);
  struct stat st {};
  if (fstat(f->get(), &st) == 0) add_inode_aliases(fa, st, env);
  c.facets.push_back(std::move(fa));
  c.op.kind = OpKind::IoctlFlags;
  c.op.flags = cmd;
  c.op.obj = std::move(*f);
  size_t size = (cmd & 0xffffffffu) == FS_IOC_FSSETXATTR   ? sizeof(fsxattr)
                : (cmd & 0xffffffffu) == FS_IOC32_SETFLAGS ? sizeof(int)
                                                           : sizeof(long);
  c.op.blob.resize(size);
  if (!TargetMemory::read(call.tid, call.args[row.args.data], c.op.blob.data(), size)) return fail(EFAULT);
  return c;
}

}  // namespace cb::handlers
