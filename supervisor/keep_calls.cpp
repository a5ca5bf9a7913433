#include "supervisor/keep_calls.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keep/keeper.h"
#include "procs/creds.h"

namespace cb {
namespace {

struct Look {
  bool ok = false;
  mode_t mode = 0;
  bool born = false;  // after the session started
};

Look look_at(int dirfd, const char* name, int flags, int64_t started_ns) {
  Look l;
  struct statx stx {};
  if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_BTIME, &stx) != 0)
    return l;
  l.ok = true;
  l.mode = stx.stx_mode;
  // Without a birth time (some filesystems) it may have existed: kept.
  if (stx.stx_mask & STATX_BTIME) {
    int64_t born = int64_t{stx.stx_btime.tv_sec} * 1000000000 + stx.stx_btime.tv_nsec;
    l.born = born >= started_ns;
  }
  return l;
}

std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The directory as the supervisor's own mount namespace shows it.  The
// resolved `dirfd` came through the target's root or cwd, in the session's
// mount namespace, and the kernel links only within one mount: a hard link
// into the store (O(1), exact) needs the same directory reached from here.
// It is that directory only when it is the same inode; otherwise the
// keeper copies.
UniqueFd host_view_of(int dirfd, const std::string& path) {
  std::string dir = parent_of(path);
  if (dir.empty()) return {};
  UniqueFd d(open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat a, b;
  if (!d || fstat(d.get(), &a) != 0 || fstat(dirfd, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) return {};
  return d;
}

}  // namespace

std::string KeepCalls::before(const Classified& c, uint64_t proc_id, uint64_t event_seq, int64_t ts_ns,
                              const Creds& creds) {
  if (!keeper_ || !c.keep || c.facets.empty()) return "";
  const Operation& op = c.op;
  keep::Context ctx;
  ctx.proc = proc_id;
  ctx.event = event_seq;
  ctx.ts_ns = ts_ns;
  std::string why;
  auto note = [&](const keep::Snapshot& s) {
    if (s.kept != keep::Kept::NotKept) return;
    why += (why.empty() ? "" : "; ") + s.path + ": " + s.reason;
  };
  auto kept = [&](size_t facet) { return facet < 32 && (c.keep & (uint32_t{1} << facet)) && facet < c.facets.size(); };
  CredScope as_target(creds);

  // A name that stops naming what it named: unlink, rmdir, rename over.
  auto unlink_like = [&](int dirfd, const std::string& name, const std::string& path, keep::Op o) {
    if (dirfd < 0 || name.empty()) return;
    Look l = look_at(dirfd, name.c_str(), 0, started_ns_);
    if (!l.ok || l.born) return;
    ctx.op = S_ISDIR(l.mode) && o == keep::Op::Unlink ? keep::Op::Rmdir : o;
    ctx.path = path;
    UniqueFd host = host_view_of(dirfd, path);
    note(keeper_->keep_before_unlink(host ? host.get() : dirfd, name.c_str(), ctx));
  };
  // What is kept under the facet's name is kept under the file's other
  // names (hard links) too: truncating a kept file through a link made
  // elsewhere is undone where the file was.
  auto all_names = [&](const keep::Snapshot& s, const Facet& f) {
    note(s);
    for (const auto& alias : f.aliases)
      if (!alias.empty() && alias[0] == '/') keeper_->also_as(s, alias);
  };
  // Content changed in place: through the name (opens) or the open file.
  auto overwrite = [&](keep::Op o, const Facet& f) {
    Look l = op.obj ? look_at(op.obj.get(), "", AT_EMPTY_PATH, started_ns_)
                    : look_at(op.dir.get(), op.name.c_str(), 0, started_ns_);
    if (!l.ok || l.born || !S_ISREG(l.mode)) return;  // a device, a FIFO: nothing stored to lose
    ctx.op = o;
    ctx.path = f.path;
    all_names(op.obj ? keeper_->keep_before_overwrite_fd(op.obj.get(), ctx)
                     : keeper_->keep_before_overwrite(op.dir.get(), op.name.c_str(), ctx),
              f);
  };
  auto metadata = [&](keep::Op o, const Facet& f) {
    if (!op.obj) return;
    Look l = look_at(op.obj.get(), "", AT_EMPTY_PATH, started_ns_);
    if (!l.ok || l.born) return;
    ctx.op = o;
    ctx.path = f.path;
    all_names(keeper_->keep_metadata_fd(op.obj.get(), ctx), f);
  };

  const Facet& f0 = c.facets[0];
  switch (op.kind) {
    case OpKind::Unlink:
      if (kept(0)) unlink_like(op.dir.get(), op.name, f0.path, keep::Op::Unlink);
      break;
    case OpKind::Rename: {
      bool exchange = c.facets.size() > 1 && c.facets[1].action == Action::FileRename;
      if (kept(0)) {
        // The source's directory loses an entry: its times come back with undo.
        ctx.path = f0.path;
        keeper_->keep_before_entries_change(op.dir.get(), ctx);
      }
      if (kept(1) && c.facets[1].action == Action::FileDelete) {
        unlink_like(op.dir2.get(), op.name2, c.facets[1].path, keep::Op::RenameOver);
      } else if (kept(0) && c.facets.size() > 1 && c.facets[1].action == Action::FileCreate) {
        // The name is new: noted as made by the session (with its directory's
        // times), so that undo --created can remove it.  The audit row says
        // only where it went, not whether something was there before.
        ctx.op = keep::Op::Create;
        ctx.path = c.facets[1].path;
        keeper_->note_created(op.dir2.get(), ctx);
      } else if ((kept(0) || kept(1)) && (exchange || c.facets.size() > 1)) {
        ctx.path = c.facets.size() > 1 ? c.facets[1].path : f0.target;
        keeper_->keep_before_entries_change(op.dir2.get(), ctx);
      }
      break;
    }
    case OpKind::Open:
      if (!kept(0)) break;
      if (f0.action == Action::FileTruncate)
        overwrite(keep::Op::OpenTrunc, f0);
      else if (f0.action == Action::FileWrite)
        overwrite(keep::Op::WriteOpen, f0);
      break;
    case OpKind::Truncate:
    case OpKind::FdTruncate:
      if (kept(0)) overwrite(keep::Op::Truncate, f0);
      break;
    case OpKind::FdFallocate:
      // Plain allocation destroys nothing; these move or zero bytes.
      if (kept(0) && (op.flags & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_ZERO_RANGE |
                                  FALLOC_FL_INSERT_RANGE)))
        overwrite(keep::Op::Fallocate, f0);
      break;
    case OpKind::Chmod:
      if (kept(0)) metadata(keep::Op::Chmod, f0);
      break;
    case OpKind::Chown:
      if (kept(0)) metadata(keep::Op::Chown, f0);
      break;
    case OpKind::Utimens:
      if (kept(0)) metadata(keep::Op::Utimes, f0);
      break;
    case OpKind::SetXattr:
    case OpKind::RemoveXattr:
      if (kept(0)) metadata(keep::Op::Xattr, f0);
      break;
    default: break;
  }
  return why;
}

}  // namespace cb
