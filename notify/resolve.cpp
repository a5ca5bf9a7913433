#include "notify/resolve.h"

#include "procs/creds.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace cb {
namespace {

constexpr int kMaxSymlinks = 40;  // the kernel's MAXSYMLINKS

Error err(int e, const char* what) { return Error{e, what}; }

UniqueFd open_path(int dir, const char* name, int extra = 0) {
  return UniqueFd(openat(dir, name, O_PATH | O_CLOEXEC | extra));
}

bool on_procfs(int fd) {
  struct statfs sf;
  return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

bool same_inode(int a, int b) {
  struct stat sa, sb;
  return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool has_dotdot(std::string_view p) {
  size_t i = 0;
  while (i < p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    if (p.substr(i, j - i) == "..") return true;
    i = j + 1;
  }
  return false;
}

// Components are pushed in reverse so the next one is at the back.
void push_components(std::vector<std::string>& stack, std::string_view p) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    if (j > i) parts.push_back(p.substr(i, j - i));
    i = j + 1;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) stack.emplace_back(*it);
}

Result<std::string> read_link_at(int dir, const std::string& name) {
  char buf[PATH_MAX];
  ssize_t n = readlinkat(dir, name.c_str(), buf, sizeof buf);
  if (n < 0) return Error::from_errno("readlink");
  if (n == sizeof buf) return err(ENAMETOOLONG, "symlink too long");
  return std::string(buf, static_cast<size_t>(n));
}

Result<Resolved> done(PathContext& ctx, Resolved r) {
  auto name = ctx.name_of(r.object ? r.object.get() : r.parent.get());
  if (!name) return name.error();
  r.path = r.object ? std::move(*name) : join_path(*name, r.name);
  return r;
}

// The authoritative walk, one component at a time.
Result<Resolved> walk(PathContext& ctx, UniqueFd cur, std::string_view path, Follow follow, bool trailing_slash) {
  auto root = ctx.root();
  if (!root) return root.error();
  std::vector<std::string> stack;
  push_components(stack, path);
  int links = 0;
  Resolved r;
  r.trailing_slash = trailing_slash;
  if (stack.empty()) {  // "/" or only slashes
    r.object = std::move(cur);
    r.exists = fstat(r.object.get(), &r.st) == 0;
    return done(ctx, std::move(r));
  }
  while (!stack.empty()) {
    std::string comp = std::move(stack.back());
    stack.pop_back();
    bool last = stack.empty();
    if (comp == "." || comp == "..") {
      if (comp == ".." && !same_inode(cur.get(), *root)) {
        UniqueFd up = open_path(cur.get(), "..", O_DIRECTORY);
        if (!up) return Error::from_errno("..");
        cur = std::move(up);
      }
      if (last) {
        r.object = std::move(cur);
        r.name = comp;
        r.exists = fstat(r.object.get(), &r.st) == 0;
        return done(ctx, std::move(r));
      }
      continue;
    }
    if (comp.size() > NAME_MAX) return err(ENAMETOOLONG, "name too long");
    bool procfs = on_procfs(cur.get());
    if (procfs && !last) {
      // /proc/self and /proc/thread-self name the reader, which would be the
      // supervisor: map them to the target in the target's procfs.
      struct stat st;
      if (fstat(cur.get(), &st) == 0 && st.st_ino == 1) {
        // Which pid namespace this procfs shows: the session's own (ids
        // innermost), or the supervisor's, when a session without a mount
        // namespace of its own sees the host's /proc (ids as notified).
        static const dev_t host_proc = [] {
          struct stat h;
          return stat("/proc", &h) == 0 ? h.st_dev : dev_t(-1);
        }();
        auto [nstgid, nstid] = st.st_dev == host_proc ? std::pair{ctx.tgid(), ctx.tid()} : ctx.ids_in_procfs(cur.get());
        if (comp == "self") {
          comp = std::to_string(nstgid);
        } else if (comp == "thread-self") {
          stack.push_back(std::to_string(nstid));
          stack.push_back("task");
          comp = std::to_string(nstgid);
        }
      }
    }
    struct stat st;
    if (fstatat(cur.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW)) {
      if (errno == ENOENT && last) {
        r.parent = std::move(cur);
        r.name = comp;
        r.exists = false;
        return done(ctx, std::move(r));
      }
      return Error::from_errno(comp);
    }
    bool follow_this = !last || follow == Follow::Final || trailing_slash;
    if (S_ISLNK(st.st_mode) && follow_this) {
      if (procfs) {
        // A magic link: the kernel follows it to the object, not to the
        // text readlink would return.
        UniqueFd obj = open_path(cur.get(), comp.c_str());
        if (!obj) return Error::from_errno(comp);
        if (last) {
          r.parent = std::move(cur);
          r.name = comp;
          r.object = std::move(obj);
          r.exists = fstat(r.object.get(), &r.st) == 0;
          return done(ctx, std::move(r));
        }
        cur = std::move(obj);
        continue;
      }
      if (++links > kMaxSymlinks) return err(ELOOP, "too many symbolic links");
      auto target = read_link_at(cur.get(), comp);
      if (!target) return target.error();
      if (target->empty()) return err(ENOENT, "empty symlink");
      push_components(stack, *target);
      if ((*target)[0] == '/') {
        cur = UniqueFd(dup(*root));
        if (!cur) return Error::from_errno("dup");
        if (stack.empty()) {  // a link to "/"
          r.object = std::move(cur);
          r.exists = fstat(r.object.get(), &r.st) == 0;
          return done(ctx, std::move(r));
        }
      }
      continue;
    }
    if (last) {
      r.parent = std::move(cur);
      r.name = comp;
      r.exists = true;
      r.st = st;
      return done(ctx, std::move(r));
    }
    if (!S_ISDIR(st.st_mode)) return err(ENOTDIR, "not a directory");
    UniqueFd next = open_path(cur.get(), comp.c_str(), O_NOFOLLOW | O_DIRECTORY);
    if (!next) return Error::from_errno(comp);
    cur = std::move(next);
  }
  return err(ENOENT, "empty path");
}

}  // namespace

Result<int> PathContext::root() {
  FsCache& c = fs();
  if (!c.root) {
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/root", tid_);
    Privileged priv;
    c.root.reset(open(p, O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!c.root) return Error::from_errno("open /proc/TID/root", errno == ENOENT ? ESRCH : errno);
    c.root_gen = ~0ull;
  }
  return c.root.get();
}

Result<int> PathContext::cwd() {
  FsCache& c = fs();
  if (!c.cwd) {
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/cwd", tid_);
    Privileged priv;
    c.cwd.reset(open(p, O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!c.cwd) return Error::from_errno("open /proc/TID/cwd", errno == ENOENT ? ESRCH : errno);
    c.cwd_gen = ~0ull;
  }
  return c.cwd.get();
}

Result<std::string> PathContext::root_path() {
  auto r = root();
  if (!r) return r.error();
  FsCache& c = fs();
  if (c.root_gen != gen_) {
    auto name = name_of(*r);
    if (!name) return name.error();
    c.root_path = std::move(*name);
    c.root_foreign = foreign(*r);
    c.root_gen = gen_;
  }
  return c.root_path;
}

Result<std::string> PathContext::cwd_path() {
  auto r = cwd();
  if (!r) return r.error();
  FsCache& c = fs();
  if (c.cwd_gen != gen_) {
    auto name = name_of(*r);
    if (!name) return name.error();
    c.cwd_path = std::move(*name);
    c.cwd_foreign = foreign(*r);
    c.cwd_gen = gen_;
  }
  return c.cwd_path;
}

Result<UniqueFd> PathContext::dirfd(int fd) {
  if (fd == AT_FDCWD) {
    auto c = cwd();
    if (!c) return c.error();
    UniqueFd d(fcntl(*c, F_DUPFD_CLOEXEC, 0));
    if (!d) return Error::from_errno("dup");
    return d;
  }
  if (fd < 0) return err(EBADF, "bad dirfd");
  Privileged priv;
  if (pidfd_ >= 0) {
    // The target's very open file: cheaper than a lookup through /proc.
    UniqueFd d(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd_, fd, 0)));
    if (d) return d;
    if (errno == EBADF) return err(EBADF, "dirfd");
  }
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/fd/%d", tid_, fd);
  UniqueFd d(open(p, O_PATH | O_CLOEXEC));
  if (!d) return err(errno == ENOENT ? EBADF : errno, "dirfd");
  return d;
}

Result<std::pair<UniqueFd, std::string>> PathContext::dirfd_named(int fd) {
  if (fd == AT_FDCWD) {
    auto path = cwd_path();
    if (!path) return path.error();
    auto d = dirfd(fd);
    if (!d) return d.error();
    return std::make_pair(std::move(*d), *path);
  }
  auto d = dirfd(fd);
  if (!d) return d.error();
  struct stat st;
  if (fstat(d->get(), &st)) return Error::from_errno("fstat");
  if (dirfds_) {
    DirfdName& n = (*dirfds_)[fd];
    if (n.gen != gen_ || n.dev != st.st_dev || n.ino != st.st_ino) {
      auto name = name_of(d->get());
      if (!name) return name.error();
      n.path = std::move(*name);
      n.foreign = foreign(d->get());
      n.dev = st.st_dev;
      n.ino = st.st_ino;
      n.gen = gen_;
    }
    return std::make_pair(std::move(*d), n.path);
  }
  auto name = name_of(d->get());
  if (!name) return name.error();
  return std::make_pair(std::move(*d), std::move(*name));
}

Result<std::string> PathContext::name_of(int fd) {
  if (!mounts_) return fd_path(fd);
  return mounts_->host_name(fd, tid_);
}

bool PathContext::base_foreign(int dirfd, int fd) {
  if (!mounts_) return false;
  if (dirfd == -1) return fs().root_foreign;
  if (dirfd == AT_FDCWD) return fs().cwd_foreign;
  if (dirfds_)
    if (auto it = dirfds_->find(dirfd); it != dirfds_->end() && it->second.gen == gen_) return it->second.foreign;
  return foreign(fd);
}

bool PathContext::foreign(int fd) {
  if (!mounts_) return false;
  int id = MountMap::mount_id(fd);
  return id >= 0 && !mounts_->in_session_ns(id);
}

namespace {

// The numbers after `key` ("NStgid:") in a status text, outermost first.
std::vector<pid_t> ns_list(const std::string& status, const char* key) {
  std::vector<pid_t> out;
  size_t at = status.find(key);
  if (at == std::string::npos) return out;
  const char* s = status.c_str() + at + strlen(key);
  while (*s && *s != '\n') {
    while (*s == ' ' || *s == '\t') ++s;
    if (*s < '0' || *s > '9') break;
    out.push_back(static_cast<pid_t>(strtol(s, const_cast<char**>(&s), 10)));
  }
  return out;
}

std::string read_at(int dir, const std::string& name) {
  UniqueFd fd(openat(dir, name.c_str(), O_RDONLY | O_CLOEXEC));
  std::string out;
  char buf[4096];
  ssize_t n;
  while (fd && (n = read(fd.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

}  // namespace

std::pair<pid_t, pid_t> PathContext::ids_in_procfs(int procfs_root) {
  // A procfs shows one pid namespace, not necessarily the innermost one of
  // the target (a sandbox made a pid namespace and has not mounted a proc
  // for it yet): the level whose view of the target's status lists the
  // tail of its ids from there inwards.
  std::string host;
  {
    Privileged priv;
    host = read_at(AT_FDCWD, "/proc/" + std::to_string(tid_) + "/status");
  }
  std::vector<pid_t> tgids = ns_list(host, "\nNStgid:"), tids = ns_list(host, "\nNSpid:");
  if (tgids.empty() || tgids.size() != tids.size()) return ns_ids();
  for (size_t k = tgids.size(); k-- > 0;) {
    std::string seen = read_at(procfs_root, std::to_string(tgids[k]) + "/task/" + std::to_string(tids[k]) + "/status");
    std::vector<pid_t> tail = ns_list(seen, "\nNSpid:");
    if (!tail.empty() && std::equal(tail.begin(), tail.end(), tids.begin() + static_cast<ptrdiff_t>(k), tids.end()))
      return {tgids[k], tids[k]};
  }
  return ns_ids();
}

std::pair<pid_t, pid_t> PathContext::ns_ids() {
  if (!ns_ids_) {
    pid_t tgid = tgid_, tid = tid_;
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/status", tid_);
    Privileged priv;
    UniqueFd fd(open(p, O_RDONLY | O_CLOEXEC));
    char buf[4096];
    ssize_t n = fd ? read(fd.get(), buf, sizeof buf - 1) : -1;
    if (n > 0) {
      buf[n] = 0;
      // The last number of NStgid/NSpid is the id in the innermost namespace.
      auto last_of = [&](const char* key) -> pid_t {
        const char* l = strstr(buf, key);
        if (!l) return -1;
        ++l;  // past the newline that anchors the key
        const char* e = strchr(l, '\n');
        const char* s = e ? e : l + strlen(l);
        while (s > l && (s[-1] == ' ' || s[-1] == '\t')) --s;
        const char* b = s;
        while (b > l && b[-1] >= '0' && b[-1] <= '9') --b;
        return b < s ? static_cast<pid_t>(atoi(b)) : -1;
      };
      if (pid_t v = last_of("\nNStgid:"); v > 0) tgid = v;
      if (pid_t v = last_of("\nNSpid:"); v > 0) tid = v;
    }
    ns_ids_ = std::make_pair(tgid, tid);
  }
  return *ns_ids_;
}

Result<Resolved> resolve_path(PathContext& ctx, int dirfd, std::string_view path, Follow follow) {
  if (path.empty()) return err(ENOENT, "empty path");
  if (path.size() >= PATH_MAX) return err(ENAMETOOLONG, "path too long");

  bool trailing = false;
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
    trailing = true;
  }
  // Fast path: no symlink and no ".." on the way, so the kernel's own
  // downward walk from the target's base is exactly the target's walk, and
  // the name is the base's name joined with the path.
  size_t slash = path.rfind('/');
  std::string_view last = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::string_view dir = slash == std::string_view::npos ? std::string_view()
                         : slash == 0                    ? std::string_view("/")
                                                         : path.substr(0, slash);
  bool absolute = path[0] == '/';
  if (!last.empty() && last != "." && last != ".." && !has_dotdot(dir)) {
    UniqueFd base;
    int base_fd = -1;  // the cached root is borrowed, and copied only to be kept
    std::string base_name;
    if (absolute) {
      auto r = ctx.root();
      if (!r) return r.error();
      auto rp = ctx.root_path();
      if (!rp) return rp.error();
      base_fd = *r;
      base_name = *rp == "/" ? std::string() : *rp;
    } else {
      auto d = ctx.dirfd_named(dirfd);
      if (!d) return d.error();
      base = std::move(d->first);
      base_fd = base.get();
      base_name = d->second;
      if (!base) return Error::from_errno("dup");
    }
    if (!absolute && !base_name.empty() && base_name[0] != '/') {
      // Not a directory with a name (a deleted cwd, an anonymous fd): the
      // walk works it out.
    } else {
      UniqueFd parent;
      std::string rel(absolute ? dir.substr(std::min<size_t>(1, dir.size())) : dir);
      if (rel.empty()) {
        parent = base ? std::move(base) : UniqueFd(fcntl(base_fd, F_DUPFD_CLOEXEC, 0));
        if (!parent) return Error::from_errno("dup");
      } else {
        open_how how{};
        how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        parent.reset(static_cast<int>(syscall(SYS_openat2, base_fd, rel.c_str(), &how, sizeof how)));
        if (!parent && errno != ELOOP && errno != EXDEV) {
          // A missing or unsearchable directory fails the same for the
          // target; anything else takes the walk, which is authoritative.
          if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) return Error::from_errno(rel);
        }
      }
      if (parent) {
        Resolved r;
        r.trailing_slash = trailing;
        r.name = std::string(last);
        if (r.name.size() > NAME_MAX) return err(ENAMETOOLONG, "name too long");
        std::string dirname = join_path(base_name.empty() ? "/" : base_name, rel);
        if (fstatat(parent.get(), r.name.c_str(), &r.st, AT_SYMLINK_NOFOLLOW) == 0) {
          r.exists = true;
          if (S_ISLNK(r.st.st_mode) && (follow == Follow::Final || trailing))
            return walk(ctx, std::move(parent), r.name, follow, trailing);  // a symlink to follow
        } else if (errno != ENOENT) {
          return Error::from_errno(r.name);
        }
        if (ctx.base_foreign(absolute ? -1 : dirfd, base_fd)) {
          // Names below a mount of another namespace are that namespace's:
          // the host's name comes from the directory itself.
          auto name = ctx.name_of(parent.get());
          if (!name) return name.error();
          dirname = std::move(*name);
        }
        r.parent = std::move(parent);
        r.path = join_path(dirname, r.name);
        return r;
      }
    }
    UniqueFd fresh;
    if (absolute) {
      auto rr = ctx.root();
      if (!rr) return rr.error();
      fresh.reset(fcntl(*rr, F_DUPFD_CLOEXEC, 0));
    } else {
      auto d = ctx.dirfd(dirfd);
      if (!d) return d.error();
      fresh = std::move(*d);
    }
    return walk(ctx, std::move(fresh), path, follow, trailing);
  }
  UniqueFd base;
  if (absolute) {
    auto r = ctx.root();
    if (!r) return r.error();
    base.reset(fcntl(*r, F_DUPFD_CLOEXEC, 0));
  } else {
    auto d = ctx.dirfd(dirfd);
    if (!d) return d.error();
    base = std::move(*d);
  }
  return walk(ctx, std::move(base), path, follow, trailing);
}

}  // namespace cb
