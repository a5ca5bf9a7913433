#include "keep/keeper.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "keep/copy.h"
#include "keep/fsutil.h"
#include "keep/meta.h"
#include "keep/settle.h"

namespace cb::keep {
namespace {

constexpr int kReadFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

// Opens for reading without moving the file's atime where the kernel lets
// us (O_NOATIME needs ownership or CAP_FOWNER).
int open_read_at(int dirfd, const char* name, bool nofollow = true) {
  int flags = nofollow ? kReadFlags : kReadFlags & ~O_NOFOLLOW;
  int fd = openat(dirfd, name, flags | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = openat(dirfd, name, flags);
  return fd;
}

enum class Writers { None, Some, Unknown };

// Whether the inode is open for writing anywhere: the kernel refuses a read
// lease (EAGAIN) while it is, shared writable mappings included.  `fd` is
// open read-only.  Unknown: `why` says why (not the owner and no
// CAP_LEASE, a filesystem without leases).
Writers probe_writers(int fd, std::string& why) {
  if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
    fcntl(fd, F_SETLEASE, F_UNLCK);
    return Writers::None;
  }
  if (errno == EAGAIN) return Writers::Some;
  why = std::string("not checked for writers (lease: ") + std::strerror(errno) + ")";
  return Writers::Unknown;
}

std::optional<FreeSpace> free_space(int fd) {
  struct statvfs v;
  if (fstatvfs(fd, &v) != 0) return std::nullopt;
  return FreeSpace{uint64_t{v.f_bavail} * v.f_frsize, uint64_t{v.f_blocks} * v.f_frsize};
}

std::string special_reason(FileType t) {
  return "a " + std::string(file_type_name(t)) + " is a special file: not kept";
}

// Once per inode and command; per process when the caller leaves the
// command to the reader (history.h): a process belongs to one command.
uint64_t group_of(const Snapshot& s) { return s.command ? s.command : s.proc; }

}  // namespace

Keeper::Keeper(Store store, std::string session, Limits limits)
    : store_(std::move(store)), session_(std::move(session)), limits_(limits) {}

Keeper::~Keeper() = default;

Result<std::unique_ptr<Keeper>> Keeper::open(const std::string& store_dir, const std::string& session,
                                             const Limits& limits) {
  if (!Store::valid_session(session)) return Error{EINVAL, "not a session name for the keep store: " + session};
  auto store = Store::open(store_dir, true);
  if (!store) return store.error();
  std::unique_ptr<Keeper> k(new Keeper(std::move(*store), session, limits));
  std::string name = session + ".log";
  k->journal_.reset(
      openat(k->store_.journal_dir_fd(), name.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!k->journal_) return Error::from_errno("keep journal " + store_dir + "/journal/" + name);
  if (flock(k->journal_.get(), LOCK_EX | LOCK_NB) != 0)
    return Error::from_errno("keep journal of session " + session + " (held by another keeper?)");

  auto parsed = Store::read_journal_fd(k->journal_.get());
  if (!parsed) return parsed.error();
  struct stat st;
  if (fstat(k->journal_.get(), &st) != 0) return Error::from_errno("fstat keep journal");
  if (st.st_size == 0) {
    std::string h = encode_header(session);
    if (write(k->journal_.get(), h.data(), h.size()) != static_cast<ssize_t>(h.size()))
      return Error::from_errno("write keep journal");
  } else if (parsed->torn_tail) {
    // End the torn line so that the next record starts on a line of its own.
    if (write(k->journal_.get(), "\n", 1) != 1) return Error::from_errno("write keep journal");
  }
  for (const Snapshot& s : parsed->snapshots) {
    k->seq_ = std::max(k->seq_, s.seq);
    k->paths_.insert(s.path);
    if (s.kept == Kept::Linked || s.kept == Kept::Copied || s.kept == Kept::Reflinked) k->used_.session += s.size;
  }
  // Continue after every staged name this session used before (a dead
  // keeper's, or a settled one's): a name used twice would resolve a new
  // record to the old object through the old H record.
  std::string prefix = session + ".";
  auto note = [&](std::string_view n) {
    if (n.substr(0, prefix.size()) == prefix)
      k->staged_ =
          std::max<uint64_t>(k->staged_, std::strtoull(std::string(n.substr(prefix.size())).c_str(), nullptr, 10));
  };
  if (auto staged = list_dir(k->store_.staging_fd()))
    for (const std::string& n : *staged) note(n);
  for (const auto& [n, sha] : parsed->settled) note(n);
  for (const Snapshot& s : parsed->snapshots)
    if (s.object.compare(0, 2, "s:") == 0) note(std::string_view(s.object).substr(2));
  k->used_.total = k->store_.recorded_usage() + k->used_.session;
  return k;
}

KeeperStats Keeper::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

Snapshot Keeper::base(const Context& ctx) const {
  Snapshot s;
  s.ts_ns = ctx.ts_ns ? ctx.ts_ns : now_ns();
  s.command = ctx.command;
  s.proc = ctx.proc;
  s.event = ctx.event;
  s.op = ctx.op;
  s.path = ctx.path;
  return s;
}

std::string Keeper::stage_name() {
  std::lock_guard<std::mutex> g(mu_);
  return session_ + "." + std::to_string(++staged_);
}

std::string Keeper::reserve(uint64_t size, bool allocates) {
  std::optional<FreeSpace> free;
  if (allocates) free = free_space(store_.staging_fd());
  std::lock_guard<std::mutex> g(mu_);
  std::string why = over_budget(size, used_, limits_, free);
  if (why.empty()) {
    used_.session += size;
    used_.total += size;
  }
  return why;
}

void Keeper::release(uint64_t size) {
  std::lock_guard<std::mutex> g(mu_);
  used_.session -= std::min(used_.session, size);
  used_.total -= std::min(used_.total, size);
}

uint64_t Keeper::seen(const Snapshot& s, char kind) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = seen_.find({s.dev, s.ino, group_of(s), kind});
  return it == seen_.end() ? 0 : it->second;
}

void Keeper::mark_seen(const Snapshot& s, char kind) {
  std::lock_guard<std::mutex> g(mu_);
  seen_.emplace(std::tuple{s.dev, s.ino, group_of(s), kind}, s.seq);
}

Snapshot Keeper::record(Snapshot s) {
  std::lock_guard<std::mutex> g(mu_);
  s.seq = ++seq_;
  std::string line = encode_snapshot(s);
  // One write on an O_APPEND fd: complete in the page cache before the call
  // goes ahead, or cut short and then skipped by readers (CRC).
  ssize_t n = write(journal_.get(), line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    int e = n < 0 ? errno : EIO;
    if (n > 0) (void)!write(journal_.get(), "\n", 1);
    if (!s.object.empty() && s.object.compare(0, 2, "s:") == 0) unlinkat(store_.staging_fd(), s.object.c_str() + 2, 0);
    if (s.kept == Kept::Linked || s.kept == Kept::Copied || s.kept == Kept::Reflinked) {
      used_.session -= std::min(used_.session, s.size);
      used_.total -= std::min(used_.total, s.size);
    }
    s.kept = Kept::NotKept;
    s.object.clear();
    s.reason = std::string("the keep journal could not be written: ") + std::strerror(e);
    ++stats_.not_kept;
    return s;
  }
  paths_.insert(s.path);
  switch (s.kept) {
    case Kept::Linked: ++stats_.linked; break;
    case Kept::Reflinked: ++stats_.reflinked; break;
    case Kept::Copied: ++stats_.copied; break;
    case Kept::Metadata: ++stats_.metadata; break;
    case Kept::NotKept: ++stats_.not_kept; break;
  }
  if (s.kept == Kept::Linked || s.kept == Kept::Copied || s.kept == Kept::Reflinked) stats_.bytes += s.size;
  return s;
}

Snapshot Keeper::keep_before_unlink(int dirfd, const char* name, const Context& ctx) {
  keep_before_entries_change(dirfd, ctx);
  Snapshot s = base(ctx);
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    s.reason = std::string("not kept: cannot stat it: ") + std::strerror(errno);
    return record(std::move(s));
  }
  fill_from_stat(s, st);
  switch (s.type) {
    case FileType::Directory:
    case FileType::Symlink: {
      if (s.type == FileType::Symlink) {
        auto t = read_link_at(dirfd, name);
        if (!t) {
          s.reason = "not kept: " + t.error().message;
          return record(std::move(s));
        }
        s.target = std::move(*t);
      }
      auto x = read_xattrs_at(dirfd, name);
      if (x)
        s.xattrs = std::move(*x);
      else
        s.reason = "xattrs not kept: " + x.error().message;
      s.kept = Kept::Metadata;
      return record(std::move(s));
    }
    case FileType::Regular: break;
    default: s.reason = special_reason(s.type); return record(std::move(s));
  }

  // One read-only open serves the writer probe, the xattrs, the check after
  // the link and, when a link will not do, the copy.
  UniqueFd fd(open_read_at(dirfd, name));
  int open_errno = fd ? 0 : errno;
  if (fd) {
    struct stat fst;
    if (fstat(fd.get(), &fst) == 0 && (fst.st_ino != st.st_ino || fst.st_dev != st.st_dev)) {
      // Replaced between the stat and the open: the inode now there is the
      // one the call will act on.
      if (!S_ISREG(fst.st_mode)) fd.reset();
      st = fst;
      fill_from_stat(s, st);
    }
  }
  std::string why_not_link;
  if (st.st_nlink > 1) {
    why_not_link = "it has " + std::to_string(st.st_nlink) + " links";
  } else if (!fd) {
    s.reason = std::string("not checked for writers (open: ") + std::strerror(open_errno) + ")";
  } else if (Writers w = probe_writers(fd.get(), s.reason); w == Writers::Some) {
    why_not_link = "it is open for writing";
  }
  if (why_not_link.empty()) {
    std::string over = reserve(s.size, false);
    if (!over.empty()) {
      s.reason = over;
      return record(std::move(s));
    }
    std::string staged = stage_name();
    if (linkat(dirfd, name, store_.staging_fd(), staged.c_str(), 0) == 0) {
      // Two links now, the name's and ours: the inode linked is the one
      // probed (or, unopened, the one staged), and no other name has it.
      struct stat st2;
      bool ours =
          fd ? fstat(fd.get(), &st2) == 0 && st2.st_nlink == 2
             : fstatat(store_.staging_fd(), staged.c_str(), &st2, AT_SYMLINK_NOFOLLOW) == 0 && st2.st_nlink == 2;
      if (ours) {
        if (st2.st_size != st.st_size) {
          release(s.size);
          reserve(static_cast<uint64_t>(st2.st_size), false);
        }
        fill_from_stat(s, st2);
        s.nlink = 1;
        auto x = fd ? read_xattrs_fd(fd.get()) : read_xattrs_at(store_.staging_fd(), staged.c_str());
        if (x) {
          s.xattrs = std::move(*x);
        } else {
          s.reason += (s.reason.empty() ? "" : "; ") + ("xattrs not kept: " + x.error().message);
        }
        s.kept = Kept::Linked;
        s.object = "s:" + staged;
        return record(std::move(s));
      }
      // Another name appeared for it meanwhile, or the name now holds
      // another inode: a copy of what was opened is exact, the link is not.
      unlinkat(store_.staging_fd(), staged.c_str(), 0);
      why_not_link = "it changed name or links meanwhile";
    } else {
      why_not_link = std::string("a link into the store failed: ") + std::strerror(errno);
    }
    release(s.size);
  }

  if (!fd) {
    s.reason = "not kept (" + why_not_link + "): cannot open it: " + std::strerror(open_errno);
    return record(std::move(s));
  }
  return keep_content_fd(fd.get(), std::move(s), why_not_link);
}

Snapshot Keeper::keep_content_fd(int fd, Snapshot s, const std::string& why_not_link) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    s.reason = std::string("not kept: fstat: ") + std::strerror(errno);
    return record(std::move(s));
  }
  std::string carried = s.reason;
  fill_from_stat(s, st);
  if (s.type != FileType::Regular) {
    s.reason = special_reason(s.type);
    return record(std::move(s));
  }
  if (!op_detaches(s.op)) {
    if (uint64_t earlier = seen(s, 'c')) {
      s.seq = earlier;
      s.kept = Kept::Metadata;
      s.reason = "kept before this command changed it (record " + std::to_string(earlier) + ")";
      s.repeat = true;
      std::lock_guard<std::mutex> g(mu_);
      ++stats_.repeated;
      return s;
    }
  }
  std::string over = reserve(s.size, true);
  if (!over.empty()) {
    s.reason = over;
    return record(std::move(s));
  }
  std::string staged = stage_name();
  UniqueFd dst(openat(store_.staging_fd(), staged.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!dst) {
    release(s.size);
    s.reason = std::string("not kept: cannot create the copy in the store: ") + std::strerror(errno);
    return record(std::move(s));
  }
  auto how = copy_contents(fd, dst.get());
  struct stat dst_st;
  if (how && fstat(dst.get(), &dst_st) != 0) how = Error::from_errno("fstat");
  if (how && dst_st.st_size != st.st_size) {
    // It changed size while we copied (a writer): what we hold is no state it had.
    how = Error{EAGAIN, "it changed while being copied (" + std::to_string(st.st_size) + " bytes, then " +
                            std::to_string(dst_st.st_size) + ")"};
  }
  if (!how) {
    unlinkat(store_.staging_fd(), staged.c_str(), 0);
    release(s.size);
    s.reason = "not kept: " + how.error().message;
    return record(std::move(s));
  }
  auto x = read_xattrs_fd(fd);
  if (x) {
    s.xattrs = std::move(*x);
  } else {
    carried += (carried.empty() ? "" : "; ") + ("xattrs not kept: " + x.error().message);
  }
  s.kept = *how == CopyMethod::Reflink ? Kept::Reflinked : Kept::Copied;
  s.object = "s:" + staged;
  if (!why_not_link.empty()) carried = "copied because " + why_not_link + (carried.empty() ? "" : "; " + carried);
  s.reason = carried;
  Snapshot out = record(std::move(s));
  if (!op_detaches(out.op) && out.kept != Kept::NotKept) mark_seen(out, 'c');
  return out;
}

Snapshot Keeper::keep_before_overwrite(int dirfd, const char* name, const Context& ctx) {
  Snapshot s = base(ctx);
  UniqueFd fd(open_read_at(dirfd, name));
  if (!fd) {
    s.reason = std::string("not kept: cannot open it for reading: ") + std::strerror(errno);
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) fill_from_stat(s, st);
    return record(std::move(s));
  }
  return keep_content_fd(fd.get(), std::move(s), "");
}

Snapshot Keeper::keep_before_overwrite_fd(int fd, const Context& ctx) {
  Snapshot s = base(ctx);
  // The caller's fd may be write-only or O_PATH: a reading one through
  // /proc reaches the same inode.
  UniqueFd rd(open_read_at(AT_FDCWD, proc_fd_path(fd).c_str(), false));
  if (!rd) {
    s.reason = std::string("not kept: cannot open it for reading: ") + std::strerror(errno);
    struct stat st;
    if (fstat(fd, &st) == 0) fill_from_stat(s, st);
    return record(std::move(s));
  }
  return keep_content_fd(rd.get(), std::move(s), "");
}

void Keeper::also_as(const Snapshot& kept, const std::string& path) {
  if (kept.kept == Kept::NotKept || kept.repeat || kept.path == path) return;
  Snapshot s = kept;
  s.path = path;
  record(std::move(s));
}

Snapshot Keeper::keep_metadata(int dirfd, const char* name, const Context& ctx) {
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    Snapshot s = base(ctx);
    s.reason = std::string("not kept: cannot stat it: ") + std::strerror(errno);
    return record(std::move(s));
  }
  return keep_metadata_of(
      base(ctx), st, [&] { return read_link_at(dirfd, name); }, [&] { return read_xattrs_at(dirfd, name); });
}

Snapshot Keeper::keep_metadata_fd(int fd, const Context& ctx) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    Snapshot s = base(ctx);
    s.reason = std::string("not kept: cannot stat it: ") + std::strerror(errno);
    return record(std::move(s));
  }
  // An O_PATH fd of a symlink reads its target with an empty name.
  return keep_metadata_of(
      base(ctx), st, [&] { return read_link_at(fd, ""); }, [&] { return read_xattrs_fd(fd); });
}

Snapshot Keeper::keep_metadata_of(Snapshot s, const struct stat& st, const std::function<Result<std::string>()>& link,
                                  const std::function<Result<std::vector<Xattr>>()>& xattrs) {
  fill_from_stat(s, st);
  if (uint64_t earlier = seen(s, 'm')) {
    s.seq = earlier;
    s.kept = Kept::Metadata;
    s.reason = "kept before this command changed it (record " + std::to_string(earlier) + ")";
    s.repeat = true;
    std::lock_guard<std::mutex> g(mu_);
    ++stats_.repeated;
    return s;
  }
  if (s.type == FileType::Symlink) {
    auto t = link();
    if (t) s.target = std::move(*t);
  }
  auto x = xattrs();
  if (x) {
    s.xattrs = std::move(*x);
    s.kept = Kept::Metadata;
  } else {
    s.reason = "not kept: " + x.error().message;
  }
  Snapshot out = record(std::move(s));
  if (out.kept != Kept::NotKept) mark_seen(out, 'm');
  return out;
}

void Keeper::keep_before_entries_change(int dirfd, const Context& ctx) {
  struct stat st;
  size_t slash = ctx.path.rfind('/');
  if (dirfd < 0 || slash == std::string::npos || slash == 0 || fstat(dirfd, &st) != 0 || !S_ISDIR(st.st_mode)) return;
  Snapshot s = base(ctx);
  s.op = Op::Entries;
  s.path = ctx.path.substr(0, slash);
  fill_from_stat(s, st);
  if (seen(s, 'd')) return;
  auto x = read_xattrs_fd(dirfd);
  if (x) s.xattrs = std::move(*x);
  s.kept = x ? Kept::Metadata : Kept::NotKept;
  if (!x) s.reason = "not kept: " + x.error().message;
  Snapshot out = record(std::move(s));
  mark_seen(out, 'd');
}

Snapshot Keeper::note_created(int dirfd, const Context& ctx) {
  keep_before_entries_change(dirfd, ctx);
  Snapshot s = base(ctx);
  s.type = FileType::Absent;
  s.kept = Kept::Metadata;
  return record(std::move(s));
}

Result<Ok> Keeper::finish() {
  std::set<std::string> paths;
  {
    std::lock_guard<std::mutex> g(mu_);
    paths = paths_;
  }
  // The paths are sorted: those of one directory come together, and the
  // directory is walked to once for all of them (an rm -rf of thousands of
  // files would otherwise walk every path from the root again).
  std::string last_dir;
  std::optional<Result<Parent>> last;
  for (const std::string& p : paths) {
    Left l{p, {}};
    size_t slash = p.rfind('/');
    std::string dir = slash == std::string::npos ? "" : p.substr(0, slash);
    if (!last || dir != last_dir) {
      last = open_parent(p);
      last_dir = dir;
    }
    const Result<Parent>& parent = *last;
    if (parent) {
      std::string leaf = p.substr(slash + 1);
      auto fp = fingerprint_at(parent->fd.get(), leaf.c_str());
      if (fp) l.fp = std::move(*fp);
    } else if (parent.error().err == ENOENT) {
      l.fp.known = true;  // a directory on the way is gone: so is the file
    }
    if (!l.fp.known) continue;  // unreadable now: undo will say it was not recorded
    std::string line = encode_left(l);
    std::lock_guard<std::mutex> g(mu_);
    if (write(journal_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return Error::from_errno("write keep journal");
  }
  auto lock = store_.lock(true);
  if (!lock) return lock.error();
  auto settled = settle(store_, journal_.get());
  if (!settled) return settled.error();
  if (auto bytes = store_.measure()) (void)store_.write_usage(*bytes);
  if (fsync(journal_.get()) != 0) return Error::from_errno("fsync keep journal");
  if (syncfs(store_.dir_fd()) != 0) return Error::from_errno("syncfs keep store");
  return Ok{};
}

}  // namespace cb::keep
