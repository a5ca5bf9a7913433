// Classification: what an intercepted syscall means, in the action
// vocabulary, and what carrying it out involves.  Pointer arguments are read
// exactly once, here; everything later works on these copies and on the
// resolved objects.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <utime.h>

#include <climits>
#include <cstring>

#include "notify/listener.h"
#include "notify/ops.h"
#include "procs/creds.h"
#include "syscalls/compat.h"
#include "syscalls/names.h"

namespace cb {
namespace {

Classified fail(int err) {
  Classified c;
  c.op.kind = OpKind::Fail;
  c.op.err = err;
  return c;
}

Classified cont() {
  Classified c;
  c.op.kind = OpKind::Continue;
  return c;
}

Result<std::string> read_path(const Call& call, int argi) {
  return TargetMemory::read_string(call.tid, call.args[argi], PATH_MAX);
}

int as_fd(uint64_t v) { return static_cast<int>(static_cast<int32_t>(v)); }

// The protected trees a block device (or its partitions' disk) holds.
void add_device_aliases(Facet& f, const struct stat& st, const ClassifyEnv& env) {
  if (!env.devices || !(S_ISBLK(st.st_mode))) return;
  for (const auto& d : *env.devices)
    if (d.rdev == st.st_rdev) f.aliases.insert(f.aliases.end(), d.roots.begin(), d.roots.end());
}

// An fd of the target as an O_PATH object of ours, with its path.
Result<UniqueFd> target_fd_object(const Call& call, int fd, bool real_fd, const ClassifyEnv& env) {
  Privileged priv;
  if (real_fd && env.target_pidfd >= 0) {
    // The very open file (ioctl needs it, not a new open of the same path).
    UniqueFd f(static_cast<int>(syscall(SYS_pidfd_getfd, env.target_pidfd, fd, 0)));
    if (f) return f;
    if (errno == EBADF) return Error{EBADF, "bad fd"};
  }
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/fd/%d", call.tid, fd);
  UniqueFd f(open(p, O_PATH | O_CLOEXEC));
  if (!f) return Error{errno == ENOENT ? EBADF : errno, "fd"};
  return f;
}

// A file with several names is one file: a write through any of them is a
// write to the protected one.
void add_inode_aliases(Facet& f, const struct stat& st, const ClassifyEnv& env) {
  if (!env.links || st.st_nlink < 2 || S_ISDIR(st.st_mode)) return;
  const InodeAliases& inodes = env.links->wait();
  auto it = inodes.find(inode_key(st.st_dev, st.st_ino));
  if (it == inodes.end()) return;
  for (const auto& p : it->second)
    if (p != f.path) f.aliases.push_back(p);
}

Facet facet(Action a, std::string path, bool is_dir = false) {
  Facet f;
  f.action = a;
  f.path = std::move(path);
  f.is_dir = is_dir;
  return f;
}

// ------------------------------------------------------------------ open --

Classified classify_open(const Call& call, PathContext& ctx, const ClassifyEnv& env, int dirfd, uint64_t pathp_arg,
                         uint64_t flags, uint64_t mode, const open_how* how) {
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
    std::vector<std::string> aliases = f.aliases;
    c.facets.push_back(std::move(f));
    if (trunc) {
      Facet w = facet(Action::FileWrite, r->path);
      w.aliases = aliases;
      c.facets.push_back(std::move(w));
    }
    c.op.fifo = S_ISFIFO(r->st.st_mode) && !(flags & O_NONBLOCK) && acc == O_WRONLY;
    c.op.blocking = c.op.fifo;
  }
  c.op.dir = std::move(r->parent);
  c.op.obj = std::move(r->object);
  c.op.name = std::move(r->name);
  return c;
}

// ------------------------------------------------------- names in a dir --

Classified classify_unlink(const Call& call, PathContext& ctx, int dirfd, int argi, uint64_t flags) {
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

Classified classify_rename(const Call& call, PathContext& ctx, int odir, int oarg, int ndir, int narg, uint64_t flags) {
  auto op = read_path(call, oarg);
  if (!op) return fail(op.error().err);
  auto np = read_path(call, narg);
  if (!np) return fail(np.error().err);
  auto o = resolve_path(ctx, odir, *op, Follow::NoFinal);
  if (!o) return fail(o.error().err);
  auto n = resolve_path(ctx, ndir, *np, Follow::NoFinal);
  if (!n) return fail(n.error().err);
  if (o->object || n->object) return fail(o->object ? EBUSY : EBUSY);
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

Classified classify_link(const Call& call, PathContext& ctx, int odir, int oarg, int ndir, int narg, uint64_t flags) {
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
      old_path = fd_path(d->get());
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

Classified classify_symlink(const Call& call, PathContext& ctx, int targ_arg, int ndir, int narg) {
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

Classified classify_mknod(const Call& call, PathContext& ctx, const ClassifyEnv& env, int dirfd, int argi,
                          uint64_t mode, uint64_t dev, bool is_mkdir) {
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

// --------------------------------------------------- metadata on objects --

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
    std::string fp = fd_path(f->get());
    return std::make_pair(std::move(*f), fp);
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

// ------------------------------------------------------------ processes --

std::string exe_of(pid_t pid) {
  char p[64], buf[PATH_MAX];
  snprintf(p, sizeof p, "/proc/%d/exe", pid);
  ssize_t n = readlink(p, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The process a pidfd names, in the supervisor's pid namespace; -1 if none.
pid_t pid_of_pidfd(int fd) {
  char p[64];
  snprintf(p, sizeof p, "/proc/self/fdinfo/%d", fd);
  UniqueFd info(open(p, O_RDONLY | O_CLOEXEC));
  if (!info) return -1;
  char buf[512];
  ssize_t n = read(info.get(), buf, sizeof buf - 1);
  if (n <= 0) return -1;
  buf[n] = 0;
  const char* s = strstr(buf, "\nPid:");
  return s ? static_cast<pid_t>(atoi(s + 5)) : -1;
}

Classified classify_target_process(Action a, pid_t target, const ClassifyEnv& env, uint64_t flags) {
  Classified c;
  c.flags = flags;
  Facet f = facet(a, target > 0 ? exe_of(target) : std::string());
  f.target_pid = target;
  if (target > 0) {
    std::string comm;
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/comm", target);
    if (UniqueFd fd{open(p, O_RDONLY | O_CLOEXEC)}) {
      char buf[64];
      ssize_t n = read(fd.get(), buf, sizeof buf);
      if (n > 0) comm.assign(buf, static_cast<size_t>(n - (buf[n - 1] == '\n')));
    }
    f.target = comm;
  }
  c.facets.push_back(std::move(f));
  c.op.kind = OpKind::Continue;
  // The supervisor itself is only visible without a pid namespace; it is
  // never a target, whatever the rules say.
  if (target == env.self_pid && target > 0) {
    c.facets.clear();
    c.op.kind = OpKind::Fail;
    c.op.err = EPERM;
  }
  return c;
}

std::string ns_names(uint64_t flags) {
  static const std::pair<uint64_t, const char*> kinds[] = {
      {CLONE_NEWNS, "mnt"},  {CLONE_NEWUTS, "uts"}, {CLONE_NEWIPC, "ipc"},       {CLONE_NEWUSER, "user"},
      {CLONE_NEWPID, "pid"}, {CLONE_NEWNET, "net"}, {CLONE_NEWCGROUP, "cgroup"}, {CLONE_NEWTIME, "time"}};
  std::string s;
  for (auto& [bit, name] : kinds)
    if (flags & bit) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "ns" : s;
}

std::string sockaddr_text(const std::vector<uint8_t>& a, int type) {
  if (a.size() < sizeof(sa_family_t)) return "?";
  sa_family_t fam;
  memcpy(&fam, a.data(), sizeof fam);
  const char* proto = type == SOCK_DGRAM ? "udp" : "tcp";
  char host[INET6_ADDRSTRLEN] = "?";
  if (fam == AF_INET && a.size() >= sizeof(sockaddr_in)) {
    sockaddr_in s;
    memcpy(&s, a.data(), sizeof s);
    inet_ntop(AF_INET, &s.sin_addr, host, sizeof host);
    return std::string(proto) + ":" + host + ":" + std::to_string(ntohs(s.sin_port));
  }
  if (fam == AF_INET6 && a.size() >= sizeof(sockaddr_in6)) {
    sockaddr_in6 s;
    memcpy(&s, a.data(), sizeof s);
    inet_ntop(AF_INET6, &s.sin6_addr, host, sizeof host);
    return std::string(proto) + ":[" + host + "]:" + std::to_string(ntohs(s.sin6_port));
  }
  if (fam == AF_UNIX) {
    size_t off = offsetof(sockaddr_un, sun_path);
    if (a.size() <= off) return "unix:";
    const char* p = reinterpret_cast<const char*>(a.data() + off);
    size_t n = a.size() - off;
    if (p[0] == 0) return "unix:@" + std::string(p + 1, strnlen(p + 1, n - 1));
    return "unix:" + std::string(p, strnlen(p, n));
  }
  return "family:" + std::to_string(fam);
}

}  // namespace

Classified classify(const Call& call, PathContext& ctx, const ClassifyEnv& env) {
  const uint64_t* a = call.args;
  switch (call.nr) {
    case __NR_open: return classify_open(call, ctx, env, AT_FDCWD, 0, a[1], a[2], nullptr);
    case __NR_creat: return classify_open(call, ctx, env, AT_FDCWD, 0, O_CREAT | O_WRONLY | O_TRUNC, a[1], nullptr);
    case __NR_openat: return classify_open(call, ctx, env, as_fd(a[0]), 1, a[2], a[3], nullptr);
    case __NR_openat2: {
      open_how how{};
      size_t size = a[3];
      if (size < sizeof(uint64_t) * 3) return fail(EINVAL);
      if (!TargetMemory::read(call.tid, a[2], &how, std::min(size, sizeof how))) return fail(EFAULT);
      return classify_open(call, ctx, env, as_fd(a[0]), 1, how.flags, how.mode, &how);
    }
    case __NR_open_by_handle_at: {
      // A handle names an inode without a path: find the path, then judge
      // the open like any other.  Needs CAP_DAC_READ_SEARCH, which the
      // target's credentials (in force here) have or not.
      struct {
        unsigned int handle_bytes;
        int handle_type;
        unsigned char f_handle[128];
      } h{};
      if (!TargetMemory::read(call.tid, a[1], &h, 8)) return fail(EFAULT);
      if (h.handle_bytes > sizeof h.f_handle) return fail(EINVAL);
      if (!TargetMemory::read(call.tid, a[1] + 8, h.f_handle, h.handle_bytes)) return fail(EFAULT);
      // The mount fd must be a real open file, not an O_PATH one.
      UniqueFd mnt;
      if (as_fd(a[0]) == AT_FDCWD) {
        auto c = ctx.cwd();
        if (!c) return fail(c.error().err);
        mnt.reset(openat(*c, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!mnt) return fail(errno);
      } else {
        auto f = target_fd_object(call, as_fd(a[0]), true, env);
        if (!f) return fail(f.error().err);
        mnt = std::move(*f);
      }
      UniqueFd obj(static_cast<int>(syscall(SYS_open_by_handle_at, mnt.get(), &h, O_PATH | O_CLOEXEC)));
      if (!obj) return fail(errno);
      struct stat st {};
      fstat(obj.get(), &st);
      uint64_t flags = a[2];
      int acc = static_cast<int>(flags & O_ACCMODE);
      bool write = !(flags & O_PATH) && (acc == O_WRONLY || acc == O_RDWR);
      bool trunc = write && (flags & O_TRUNC) && S_ISREG(st.st_mode);
      Classified c;
      c.flags = flags;
      Facet f = facet(trunc   ? Action::FileTruncate
                      : write ? Action::FileWrite
                              : Action::FileRead,
                      fd_path(obj.get()), S_ISDIR(st.st_mode));
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
    case __NR_unlink: return classify_unlink(call, ctx, AT_FDCWD, 0, 0);
    case __NR_rmdir: return classify_unlink(call, ctx, AT_FDCWD, 0, AT_REMOVEDIR);
    case __NR_unlinkat:
      if (a[2] & ~uint64_t(AT_REMOVEDIR)) return fail(EINVAL);
      return classify_unlink(call, ctx, as_fd(a[0]), 1, a[2]);
    case __NR_rename: return classify_rename(call, ctx, AT_FDCWD, 0, AT_FDCWD, 1, 0);
    case __NR_renameat: return classify_rename(call, ctx, as_fd(a[0]), 1, as_fd(a[2]), 3, 0);
    case __NR_renameat2:
      if (a[4] & ~uint64_t(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) return fail(EINVAL);
      return classify_rename(call, ctx, as_fd(a[0]), 1, as_fd(a[2]), 3, a[4]);
    case __NR_link: return classify_link(call, ctx, AT_FDCWD, 0, AT_FDCWD, 1, 0);
    case __NR_linkat: return classify_link(call, ctx, as_fd(a[0]), 1, as_fd(a[2]), 3, a[4]);
    case __NR_symlink: return classify_symlink(call, ctx, 0, AT_FDCWD, 1);
    case __NR_symlinkat: return classify_symlink(call, ctx, 0, as_fd(a[1]), 2);
    case __NR_mkdir: return classify_mknod(call, ctx, env, AT_FDCWD, 0, a[1], 0, true);
    case __NR_mkdirat: return classify_mknod(call, ctx, env, as_fd(a[0]), 1, a[2], 0, true);
    case __NR_mknod: return classify_mknod(call, ctx, env, AT_FDCWD, 0, a[1], a[2], false);
    case __NR_mknodat: return classify_mknod(call, ctx, env, as_fd(a[0]), 1, a[2], a[3], false);
    case __NR_truncate: {
      auto p = read_path(call, 0);
      if (!p) return fail(p.error().err);
      auto r = resolve_path(ctx, AT_FDCWD, *p, Follow::Final);
      if (!r) return fail(r.error().err);
      if (!r->exists) return fail(ENOENT);
      if (S_ISDIR(r->st.st_mode)) return fail(EISDIR);
      if (!S_ISREG(r->st.st_mode)) return fail(EINVAL);
      Classified c;
      Facet f = facet(Action::FileTruncate, r->path);
      add_inode_aliases(f, r->st, env);
      c.facets.push_back(std::move(f));
      c.op.kind = OpKind::Truncate;
      c.op.len = static_cast<int64_t>(a[1]);
      c.op.obj = std::move(r->object);
      if (!c.op.obj) c.op.obj.reset(openat(r->parent.get(), r->name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!c.op.obj) return fail(errno);
      return c;
    }
    // ---- attributes
    case __NR_chmod:
    case __NR_fchmodat:
    case __NR_fchmodat2: {
      bool at = call.nr != __NR_chmod;
      uint64_t flags = call.nr == __NR_fchmodat2 ? a[3] : 0;
      auto c = attr_classified(attr_object(call, ctx, env, at ? as_fd(a[0]) : AT_FDCWD, at ? 1 : 0,
                                           !(flags & AT_SYMLINK_NOFOLLOW), flags & AT_EMPTY_PATH, false),
                               OpKind::Chmod, env);
      c.op.mode = at ? a[2] : a[1];
      return c;
    }
    case __NR_fchmod: {
      auto c = attr_classified(attr_object(call, ctx, env, as_fd(a[0]), -1, true, true, true), OpKind::Chmod, env);
      c.op.mode = a[1];
      return c;
    }
    case __NR_chown:
    case __NR_lchown:
    case __NR_fchownat:
    case __NR_fchown: {
      Classified c;
      if (call.nr == __NR_fchown) {
        c = attr_classified(attr_object(call, ctx, env, as_fd(a[0]), -1, true, true, true), OpKind::Chown, env);
        c.op.uid = static_cast<uint32_t>(a[1]);
        c.op.gid = static_cast<uint32_t>(a[2]);
      } else if (call.nr == __NR_fchownat) {
        c = attr_classified(
            attr_object(call, ctx, env, as_fd(a[0]), 1, !(a[4] & AT_SYMLINK_NOFOLLOW), a[4] & AT_EMPTY_PATH, false),
            OpKind::Chown, env);
        c.op.uid = static_cast<uint32_t>(a[2]);
        c.op.gid = static_cast<uint32_t>(a[3]);
      } else {
        c = attr_classified(attr_object(call, ctx, env, AT_FDCWD, 0, call.nr == __NR_chown, false, false),
                            OpKind::Chown, env);
        c.op.uid = static_cast<uint32_t>(a[1]);
        c.op.gid = static_cast<uint32_t>(a[2]);
      }
      return c;
    }
    case __NR_utime:
    case __NR_utimes:
    case __NR_futimesat:
    case __NR_utimensat: {
      bool at = call.nr == __NR_futimesat || call.nr == __NR_utimensat;
      int patharg = at ? 1 : 0;
      uint64_t flags = call.nr == __NR_utimensat ? a[3] : 0;
      uint64_t times = call.nr == __NR_utimensat ? a[2] : at ? a[2] : a[1];
      auto c =
          attr_classified(attr_object(call, ctx, env, at ? as_fd(a[0]) : AT_FDCWD, patharg,
                                      !(flags & AT_SYMLINK_NOFOLLOW), flags & AT_EMPTY_PATH, call.nr == __NR_utimensat),
                          OpKind::Utimens, env);
      if (c.op.kind != OpKind::Utimens) return c;
      timespec ts[2];
      if (times == 0) {
        ts[0].tv_nsec = ts[1].tv_nsec = UTIME_NOW;
        ts[0].tv_sec = ts[1].tv_sec = 0;
      } else if (call.nr == __NR_utimensat) {
        if (!TargetMemory::read(call.tid, times, ts, sizeof ts)) return fail(EFAULT);
      } else if (call.nr == __NR_utime) {
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
    case __NR_setxattr:
    case __NR_lsetxattr:
    case __NR_fsetxattr:
    case __NR_removexattr:
    case __NR_lremovexattr:
    case __NR_fremovexattr: {
      bool set = call.nr == __NR_setxattr || call.nr == __NR_lsetxattr || call.nr == __NR_fsetxattr;
      bool byfd = call.nr == __NR_fsetxattr || call.nr == __NR_fremovexattr;
      bool follow = call.nr == __NR_setxattr || call.nr == __NR_removexattr;
      auto c = attr_classified(byfd ? attr_object(call, ctx, env, as_fd(a[0]), -1, true, true, true)
                                    : attr_object(call, ctx, env, AT_FDCWD, 0, follow, false, false),
                               set ? OpKind::SetXattr : OpKind::RemoveXattr, env);
      if (c.op.kind == OpKind::Fail) return c;
      auto name = TargetMemory::read_string(call.tid, a[1], 256);
      if (!name) return fail(name.error().err == ENAMETOOLONG ? ERANGE : name.error().err);
      c.op.str = std::move(*name);
      if (set) {
        size_t size = a[3];
        if (size > 65536) return fail(E2BIG);
        c.op.blob.resize(size);
        if (size && !TargetMemory::read(call.tid, a[2], c.op.blob.data(), size)) return fail(EFAULT);
        c.op.flags = a[4];
      }
      return c;
    }
    case __NR_ftruncate:
    case __NR_fallocate: {
      // On the very open file: another thread may swap the fd number.
      auto f = target_fd_object(call, as_fd(a[0]), true, env);
      if (!f) return fail(f.error().err);
      struct stat st {};
      fstat(f->get(), &st);
      Classified c;
      Facet fa = facet(Action::FileTruncate, fd_path(f->get()));
      add_inode_aliases(fa, st, env);
      c.facets.push_back(std::move(fa));
      c.op.obj = std::move(*f);
      if (call.nr == __NR_ftruncate) {
        c.op.kind = OpKind::FdTruncate;
        c.op.len = static_cast<int64_t>(a[1]);
      } else {
        c.flags = a[1];
        c.op.kind = OpKind::FdFallocate;
        c.op.flags = a[1];
        c.op.value = static_cast<int64_t>(a[2]);
        c.op.len = static_cast<int64_t>(a[3]);
      }
      return c;
    }
    case __NR_setxattrat:
    case __NR_removexattrat:
      // Rare and new (6.13): refused with ENOSYS so callers use the classic calls.
      return fail(ENOSYS);
    case __NR_ioctl: {
      auto f = target_fd_object(call, as_fd(a[0]), true, env);
      if (!f) return fail(f.error().err);
      Classified c;
      c.flags = a[1];
      Facet fa = facet(Action::FileAttr, fd_path(f->get()));
      struct stat st {};
      if (fstat(f->get(), &st) == 0) add_inode_aliases(fa, st, env);
      c.facets.push_back(std::move(fa));
      c.op.kind = OpKind::IoctlFlags;
      c.op.flags = a[1];
      c.op.obj = std::move(*f);
      size_t size = (a[1] & 0xffffffffu) == FS_IOC_FSSETXATTR   ? sizeof(fsxattr)
                    : (a[1] & 0xffffffffu) == FS_IOC32_SETFLAGS ? sizeof(int)
                                                                : sizeof(long);
      c.op.blob.resize(size);
      if (!TargetMemory::read(call.tid, a[2], c.op.blob.data(), size)) return fail(EFAULT);
      return c;
    }
    // ---- exec
    case __NR_execve:
    case __NR_execveat: {
      bool at = call.nr == __NR_execveat;
      Classified c;
      c.exec = true;
      c.op.kind = OpKind::Continue;
      std::string path;
      auto p = read_path(call, at ? 1 : 0);
      if (p && !p->empty()) {
        auto r = resolve_path(ctx, at ? as_fd(a[0]) : AT_FDCWD, *p, Follow::Final);
        // A shell's PATH search tries many names: a name that does not
        // exist fails here exactly as the kernel would fail it, and is no
        // event.
        if (!r && (r.error().err == ENOENT || r.error().err == ENOTDIR)) return fail(r.error().err);
        if (r && !r->exists) return fail(ENOENT);
        path = r ? r->path : *p;
      } else if (at) {
        if (auto f = target_fd_object(call, as_fd(a[0]), false, env)) path = fd_path(f->get());
      }
      c.facets.push_back(facet(Action::ProcExec, path));
      return c;
    }
    // ---- signals
    case __NR_kill: return classify_target_process(Action::ProcSignal, static_cast<pid_t>(a[0]), env, a[1]);
    case __NR_tkill:
    case __NR_rt_sigqueueinfo: return classify_target_process(Action::ProcSignal, static_cast<pid_t>(a[0]), env, a[1]);
    case __NR_tgkill:
    case __NR_rt_tgsigqueueinfo:
      return classify_target_process(Action::ProcSignal, static_cast<pid_t>(a[0]), env, a[2]);
    case __NR_pidfd_send_signal: {
      auto f = target_fd_object(call, as_fd(a[0]), true, env);
      pid_t target = f ? pid_of_pidfd(f->get()) : -1;
      return classify_target_process(Action::ProcSignal, target, env, a[1]);
    }
    // ---- tracing
    case __NR_ptrace:
      if (a[0] == 0 /* PTRACE_TRACEME */) {
        Classified c = classify_target_process(Action::ProcTrace, 0, env, a[0]);
        c.facets[0].path = "traceme";
        return c;
      }
      return classify_target_process(Action::ProcTrace, static_cast<pid_t>(a[1]), env, a[0]);
    case __NR_process_vm_writev: return classify_target_process(Action::ProcTrace, static_cast<pid_t>(a[0]), env, 0);
    case __NR_pidfd_getfd: {
      auto f = target_fd_object(call, as_fd(a[0]), true, env);
      pid_t target = f ? pid_of_pidfd(f->get()) : -1;
      return classify_target_process(Action::ProcTrace, target, env, a[1]);
    }
    case __NR_prlimit64: {
      pid_t target = static_cast<pid_t>(a[0]);
      if (target == ctx.ns_ids().first || target == call.tid) return cont();
      return classify_target_process(Action::ProcTrace, target, env, a[1]);
    }
    // ---- network
    case __NR_connect:
    case __NR_bind: {
      size_t len = a[2];
      if (len > sizeof(sockaddr_storage)) return fail(EINVAL);
      std::vector<uint8_t> addr(len);
      if (len && !TargetMemory::read(call.tid, a[1], addr.data(), len)) return fail(EFAULT);
      int type = SOCK_STREAM;
      if (auto f = target_fd_object(call, as_fd(a[0]), true, env)) {
        socklen_t sl = sizeof type;
        getsockopt(f->get(), SOL_SOCKET, SO_TYPE, &type, &sl);
      }
      auto sock = target_fd_object(call, as_fd(a[0]), true, env);
      if (!sock) return fail(sock.error().err == EBADF ? EBADF : ENOTSOCK);
      Classified c;
      bool connecting = call.nr == __NR_connect;
      c.facets.push_back(facet(connecting ? Action::NetConnect : Action::NetBind, sockaddr_text(addr, type)));
      // Carried out on the very socket, with the address as it was checked.
      c.op.kind = connecting ? OpKind::Connect : OpKind::Bind;
      sa_family_t fam = 0;
      if (addr.size() >= sizeof fam) memcpy(&fam, addr.data(), sizeof fam);
      size_t off = offsetof(sockaddr_un, sun_path);
      if (fam == AF_UNIX && addr.size() > off && addr[off] != 0) {
        // A path names the socket in the target's mount namespace: resolve it
        // there and reach it through the resolved object.
        std::string sp(reinterpret_cast<const char*>(addr.data() + off),
                       strnlen(reinterpret_cast<const char*>(addr.data() + off), addr.size() - off));
        auto r = resolve_path(ctx, AT_FDCWD, sp, connecting ? Follow::Final : Follow::NoFinal);
        if (!r) return fail(r.error().err);
        std::string via;
        if (connecting) {
          if (!r->exists) return fail(ENOENT);
          UniqueFd o = std::move(r->object);
          if (!o) o.reset(openat(r->parent.get(), r->name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
          if (!o) return fail(errno);
          via = "/proc/self/fd/" + std::to_string(o.get());
          c.op.dir2 = std::move(o);
        } else {
          if (r->exists) return fail(EADDRINUSE);
          via = "/proc/self/fd/" + std::to_string(r->parent.get()) + "/" + r->name;
          c.op.dir2 = std::move(r->parent);
        }
        if (via.size() >= sizeof(sockaddr_un::sun_path)) return fail(ENAMETOOLONG);
        sockaddr_un un{};
        un.sun_family = AF_UNIX;
        memcpy(un.sun_path, via.data(), via.size());
        addr.assign(reinterpret_cast<uint8_t*>(&un), reinterpret_cast<uint8_t*>(&un) + off + via.size() + 1);
      }
      c.op.blob = std::move(addr);
      int fl = fcntl(sock->get(), F_GETFL);
      c.op.blocking = connecting && type == SOCK_STREAM && fl >= 0 && !(fl & O_NONBLOCK);
      c.op.obj = std::move(*sock);
      return c;
    }
    // ---- guards
    case __NR_io_uring_setup: {
      Classified c;
      c.io_uring = true;
      c.facets.push_back(facet(Action::SysIoUring, "io_uring"));
      c.op.kind = OpKind::Continue;
      c.deny_errno = ENOSYS;  // programs fall back to plain syscalls
      return c;
    }
    case __NR_mount:
    case __NR_umount2:
    case __NR_pivot_root:
    case __NR_chroot:
    case __NR_fsopen:
    case __NR_fsconfig:
    case __NR_fsmount:
    case __NR_move_mount:
    case __NR_open_tree:
    case __NR_mount_setattr:
    case __NR_fspick:
    case __NR_open_tree_attr: {
      int parg = call.nr == __NR_mount || call.nr == __NR_pivot_root   ? 1
                 : call.nr == __NR_umount2 || call.nr == __NR_chroot   ? 0
                 : call.nr == __NR_move_mount                          ? 3
                 : call.nr == __NR_fsopen                              ? 0
                 : call.nr == __NR_fsconfig || call.nr == __NR_fsmount ? -1
                                                                       : 1;
      std::string what;
      if (parg >= 0 && a[parg]) {
        auto p = read_path(call, parg);
        if (p) {
          what = *p;
          if (call.nr != __NR_fsopen) {
            auto r = resolve_path(ctx, AT_FDCWD, *p, Follow::Final);
            if (r) what = r->path;
          }
        }
      }
      Classified c;
      c.flags = call.nr == __NR_mount ? a[3] : 0;
      c.facets.push_back(facet(Action::SysMount, what));
      c.op.kind = OpKind::Continue;
      return c;
    }
    case __NR_chdir:
    case __NR_fchdir: {
      Classified c = cont();
      c.fs_changed = true;
      return c;
    }
    case __NR_clone:
      if ((a[0] & CLONE_FS) && !(a[0] & CLONE_THREAD) && !(a[0] & 0x7e020000 /* CLONE_NEW* */)) {
        Classified c = cont();
        c.shares_fs = true;
        return c;
      }
      [[fallthrough]];
    case __NR_unshare: {
      Classified c;
      c.flags = a[0];
      c.facets.push_back(facet(Action::SysNamespace, ns_names(a[0])));
      c.op.kind = OpKind::Continue;
      return c;
    }
    case __NR_setns: {
      Classified c;
      c.flags = a[1];
      std::string what = "setns";
      if (auto f = target_fd_object(call, as_fd(a[0]), false, env)) what = fd_path(f->get());
      c.facets.push_back(facet(Action::SysNamespace, what));
      c.op.kind = OpKind::Continue;
      return c;
    }
    case __NR_bpf:
    case __NR_init_module:
    case __NR_finit_module:
    case __NR_delete_module:
    case __NR_kexec_load:
    case __NR_kexec_file_load:
    case __NR_iopl:
    case __NR_ioperm: {
      Classified c;
      c.facets.push_back(facet(Action::SysKernel, std::string(syscall_name(call.nr))));
      c.op.kind = OpKind::Continue;
      return c;
    }
    // ---- credential changes: keep the cache exact
    case __NR_setuid:
    case __NR_setgid:
    case __NR_setreuid:
    case __NR_setregid:
    case __NR_setresuid:
    case __NR_setresgid:
    case __NR_setfsuid:
    case __NR_setfsgid:
    case __NR_setgroups:
    case __NR_capset: {
      Classified c = cont();
      c.creds_changed = true;
      return c;
    }
    default: return fail(ENOSYS);
  }
}

}  // namespace cb
