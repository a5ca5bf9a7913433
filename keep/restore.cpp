#include "keep/restore.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "keep/copy.h"
#include "keep/fsutil.h"
#include "keep/meta.h"

namespace cb::keep {
namespace {

// The same file in the same state, judged without hashing again.  A
// directory's size and mtime move with its entries, which the undo itself
// changes (a created file removed before its created directory).
bool same_quick(const Fingerprint& a, const Fingerprint& b) {
  if (a.type == FileType::Directory && b.type == FileType::Directory)
    return a.ino == b.ino && a.dev == b.dev && a.mode == b.mode && a.uid == b.uid && a.gid == b.gid;
  return a.type == b.type && a.ino == b.ino && a.dev == b.dev && a.size == b.size && a.mtime == b.mtime &&
         a.mode == b.mode && a.uid == b.uid && a.gid == b.gid && a.target == b.target;
}

std::string temp_name(const std::string& leaf) {
  static unsigned counter = 0;
  // Room for the suffix within NAME_MAX.
  return "." + leaf.substr(0, 200) + ".cb-undo." + std::to_string(getpid()) + "." + std::to_string(++counter);
}

std::string err(const std::string& what, int e = errno) { return what + ": " + std::strerror(e); }

// Owner, xattrs, mode, then times: chown clears setuid bits and file
// capabilities, so it goes first; times go last as every other change moves
// ctime only, but writing xattrs on some filesystems touches mtime.
void set_metadata(int dirfd, const char* name, const Snapshot& p, bool times, std::vector<std::string>& notes) {
  struct stat st;
  bool have = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  if ((!have || st.st_uid != p.uid || st.st_gid != p.gid) &&
      fchownat(dirfd, name, p.uid, p.gid, AT_SYMLINK_NOFOLLOW) != 0)
    notes.push_back(err("owner " + std::to_string(p.uid) + ":" + std::to_string(p.gid) + " not restored"));
  for (std::string& n : write_xattrs_at(dirfd, name, p.xattrs)) notes.push_back(std::move(n));
  if (p.type != FileType::Symlink) {
    int rc = fchmodat(dirfd, name, p.mode, AT_SYMLINK_NOFOLLOW);
    if (rc != 0 && errno == EOPNOTSUPP) rc = fchmodat(dirfd, name, p.mode, 0);
    if (rc != 0) notes.push_back(err("mode not restored"));
  }
  if (times) {
    struct timespec ts[2] = {{p.atime.sec, p.atime.nsec}, {p.mtime.sec, p.mtime.nsec}};
    if (utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) != 0) notes.push_back(err("times not restored"));
  }
}

struct DirTimes {
  std::string path;
  Timespec atime, mtime;
};

class Applier {
 public:
  explicit Applier(const Store* store) : store_(store) {}

  void restore(const Step& step, Outcome& o);
  void remove(const Step& step, Outcome& o);
  void move_back(const Step& step, Outcome& o);
  // A directory that gained or lost an entry in this undo gets its recorded
  // times back at the end, when the plan has them (restored now, or already
  // as before and so not restored).
  void entry_changed(const std::string& path, const std::map<std::string, const Snapshot*>& dirs);
  void finish(ApplyReport& report);

 private:
  bool unchanged(int dirfd, const std::string& leaf, const Step& step, Outcome& o);
  bool place(int dirfd, const std::string& tmp, const std::string& leaf, const Fingerprint& now, Outcome& o);

  const Store* store_;  // null: no store (nothing kept to read)
  std::vector<DirTimes> dirs_;
};

bool Applier::unchanged(int dirfd, const std::string& leaf, const Step& step, Outcome& o) {
  auto now = fingerprint_at(dirfd, leaf.c_str(), 0);
  if (!now) {
    o.error = "cannot read its state: " + now.error().message;
    return false;
  }
  if (step.after_earlier) {
    // An earlier step of this undo put it there (or took it away): what
    // the plan saw is gone, its type is what is left to check.
    if (now->type != step.current.type) {
      o.error = "conflict: it is not what the earlier steps of this undo left (" +
                std::string(file_type_name(now->type)) + ")";
      return false;
    }
    return true;
  }
  if (!same_quick(*now, step.current)) {
    o.error = "conflict: it changed while undoing";
    return false;
  }
  return true;
}

bool Applier::place(int dirfd, const std::string& tmp, const std::string& leaf, const Fingerprint& now, Outcome& o) {
  int rc;
  if (now.type == FileType::Absent) {
    rc = renameat2(dirfd, tmp.c_str(), dirfd, leaf.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && errno == EEXIST) {
      unlinkat(dirfd, tmp.c_str(), 0);
      o.error = "conflict: something appeared there while undoing";
      return false;
    }
  } else {
    rc = renameat(dirfd, tmp.c_str(), dirfd, leaf.c_str());
  }
  if (rc != 0) {
    o.error = err(now.type == FileType::Directory ? "a directory is there now" : "rename into place");
    unlinkat(dirfd, tmp.c_str(), 0);
    return false;
  }
  return true;
}

void Applier::restore(const Step& step, Outcome& o) {
  const Snapshot& p = step.candidate.previous;
  auto parent = open_parent(o.path, true);
  if (!parent) {
    o.error = parent.error().message;
    return;
  }
  for (const std::string& d : parent->created)
    o.notes.push_back("made the missing directory " + d + " (mode 0755: its metadata was not recorded)");
  int dfd = parent->fd.get();
  const std::string& leaf = parent->leaf;
  if (!unchanged(dfd, leaf, step, o)) return;
  const Fingerprint& now = step.current;

  if (step.candidate.metadata_only) {
    set_metadata(dfd, leaf.c_str(), p, p.type != FileType::Directory, o.notes);
    if (p.type == FileType::Directory) dirs_.push_back({o.path, p.atime, p.mtime});
    o.done = true;
    return;
  }

  switch (p.type) {
    case FileType::Directory: {
      if (now.type != FileType::Absent && now.type != FileType::Directory) {
        // Only with --force: what the session (or the user) put there goes.
        if (unlinkat(dfd, leaf.c_str(), 0) != 0) {
          o.error = err("cannot remove the " + std::string(file_type_name(now.type)) + " there now");
          return;
        }
      }
      if (now.type != FileType::Directory && mkdirat(dfd, leaf.c_str(), 0700) != 0) {
        o.error = err("mkdir");
        return;
      }
      set_metadata(dfd, leaf.c_str(), p, false, o.notes);
      dirs_.push_back({o.path, p.atime, p.mtime});
      o.done = true;
      return;
    }
    case FileType::Symlink: {
      std::string tmp = temp_name(leaf);
      if (symlinkat(p.target.c_str(), dfd, tmp.c_str()) != 0) {
        o.error = err("symlink");
        return;
      }
      set_metadata(dfd, tmp.c_str(), p, true, o.notes);
      o.done = place(dfd, tmp, leaf, now, o);
      return;
    }
    case FileType::Regular: {
      auto obj = store_ ? store_->open_object(p.object) : Result<UniqueFd>(Error{ENOENT, "no keep store"});
      if (!obj) {
        o.error = obj.error().message;
        return;
      }
      std::string tmp = temp_name(leaf);
      UniqueFd fd(openat(dfd, tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (!fd) {
        o.error = err("create " + tmp);
        return;
      }
      auto fail = [&](std::string why) {
        unlinkat(dfd, tmp.c_str(), 0);
        o.error = std::move(why);
      };
      auto how = copy_contents(obj->get(), fd.get());
      if (!how) return fail("copy from the store: " + how.error().message);
      struct stat st;
      if (fstat(fd.get(), &st) != 0) return fail(err("fstat"));
      if (static_cast<uint64_t>(st.st_size) != p.size)
        return fail("the kept object has " + std::to_string(st.st_size) + " bytes, the file had " +
                    std::to_string(p.size) + ": not restored");
      if (!p.sha256.empty() && p.size <= kHashLimit) {
        auto sha = sha256_of_fd(fd.get());
        if (!sha) return fail("read back: " + sha.error().message);
        if (*sha != p.sha256) return fail("the kept object is damaged (its hash differs): not restored");
      }
      fd.reset();
      set_metadata(dfd, tmp.c_str(), p, true, o.notes);
      o.done = place(dfd, tmp, leaf, now, o);
      return;
    }
    default: o.error = "a " + std::string(file_type_name(p.type)) + " cannot be restored"; return;
  }
}

void Applier::remove(const Step& step, Outcome& o) {
  auto parent = open_parent(o.path, false);
  if (!parent) {
    if (parent.error().err == ENOENT) {
      o.done = true;  // gone with its directory
      return;
    }
    o.error = parent.error().message;
    return;
  }
  if (!unchanged(parent->fd.get(), parent->leaf, step, o)) return;
  bool dir = step.current.type == FileType::Directory;
  if (unlinkat(parent->fd.get(), parent->leaf.c_str(), dir ? AT_REMOVEDIR : 0) != 0) {
    o.error = errno == ENOTEMPTY ? "not removed: it holds files the undo does not remove" : err("remove");
    return;
  }
  o.done = true;
}

void Applier::move_back(const Step& step, Outcome& o) {
  const Candidate& c = step.candidate;
  auto from = open_parent(c.path, false);
  if (!from) {
    o.error = from.error().message;
    return;
  }
  if (!unchanged(from->fd.get(), from->leaf, step, o)) return;
  auto to = open_parent(c.move_to, true);
  if (!to) {
    o.error = to.error().message;
    return;
  }
  for (const std::string& d : to->created)
    o.notes.push_back("made the missing directory " + d + " (mode 0755: its metadata was not recorded)");
  unsigned flags = c.exchange                                                  ? RENAME_EXCHANGE
                   : step.forced && step.current_dest.type != FileType::Absent ? 0u
                                                                               : RENAME_NOREPLACE;
  if (renameat2(from->fd.get(), from->leaf.c_str(), to->fd.get(), to->leaf.c_str(), flags) != 0) {
    o.error = errno == EEXIST ? "conflict: something appeared at " + c.move_to + " while undoing"
                              : err("rename back to " + c.move_to);
    return;
  }
  o.done = true;
}

void Applier::entry_changed(const std::string& path, const std::map<std::string, const Snapshot*>& dirs) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return;
  auto it = dirs.find(path.substr(0, slash));
  if (it == dirs.end()) return;
  for (const DirTimes& d : dirs_)
    if (d.path == it->first) return;
  dirs_.push_back({it->first, it->second->atime, it->second->mtime});
}

void Applier::finish(ApplyReport& report) {
  // Deepest first: setting a directory's times is no change to its parent.
  std::sort(dirs_.begin(), dirs_.end(), [](const DirTimes& a, const DirTimes& b) {
    return std::count(a.path.begin(), a.path.end(), '/') > std::count(b.path.begin(), b.path.end(), '/');
  });
  for (const DirTimes& d : dirs_) {
    auto parent = open_parent(d.path);
    struct timespec ts[2] = {{d.atime.sec, d.atime.nsec}, {d.mtime.sec, d.mtime.nsec}};
    if (!parent || utimensat(parent->fd.get(), parent->leaf.c_str(), ts, AT_SYMLINK_NOFOLLOW) != 0) {
      for (Outcome& o : report.outcomes)
        if (o.path == d.path) o.notes.push_back(err("times not restored"));
    }
  }
}

}  // namespace

namespace {

// The state of `path` now; an error when it cannot be read.
Result<Fingerprint> state_now(const std::string& path) {
  Fingerprint now;
  auto parent = open_parent(path);
  if (parent) return fingerprint_at(parent->fd.get(), parent->leaf.c_str());
  if (parent.error().err != ENOENT) return parent.error();
  now.known = true;  // its directory is gone: so is it
  return now;
}

}  // namespace

Result<std::vector<Step>> prepare(const Store* store, const std::vector<Candidate>& candidates,
                                  const PlanOptions& options) {
  Result<UniqueFd> lock = store ? store->lock(false) : Result<UniqueFd>(UniqueFd());
  if (!lock) return lock.error();
  std::vector<Candidate> readable;
  std::vector<Fingerprint> current, current_dest;
  std::vector<Step> unreadable;
  for (const Candidate& c : candidates) {
    auto now = state_now(c.path);
    if (!now) {
      unreadable.push_back(
          Step{c, {}, {}, Action::Conflict, false, "cannot read its state now: " + now.error().message});
      continue;
    }
    Fingerprint dest;
    if (c.move_back) {
      auto d = state_now(c.move_to);
      if (!d) {
        unreadable.push_back(
            Step{c, {}, {}, Action::Conflict, false, "cannot read " + c.move_to + " now: " + d.error().message});
        continue;
      }
      dest = std::move(*d);
    }
    Candidate cc = c;
    Snapshot& p = cc.previous;
    if (p.type == FileType::Regular && p.sha256.empty() && !p.object.empty() && now->type == FileType::Regular &&
        now->size == p.size && p.size <= kHashLimit) {
      // Not settled yet: its hash tells whether the file is already back.
      if (auto obj = store ? store->open_object(p.object) : Result<UniqueFd>(Error{ENOENT, ""}))
        if (auto sha = sha256_of_fd(obj->get())) p.sha256 = std::move(*sha);
    }
    readable.push_back(std::move(cc));
    current.push_back(std::move(*now));
    current_dest.push_back(std::move(dest));
  }
  std::vector<Step> steps = plan(readable, current, options, current_dest);
  for (Step& s : unreadable) steps.push_back(std::move(s));
  return steps;
}

Result<std::vector<Step>> prepare(const Store& store, const std::vector<Candidate>& candidates,
                                  const PlanOptions& options) {
  return prepare(&store, candidates, options);
}

ApplyReport apply(const Store* store, const std::vector<Step>& steps) {
  ApplyReport report;
  Result<UniqueFd> lock = store ? store->lock(false) : Result<UniqueFd>(UniqueFd());
  Applier a(store);
  std::map<std::string, const Snapshot*> dirs;
  for (const Step& s : steps) {
    const Snapshot& p = s.candidate.previous;
    if (p.type == FileType::Directory && !s.candidate.move_back &&
        (s.action == Action::Restore || s.action == Action::Nothing))
      dirs.emplace(s.candidate.path, &p);
  }
  for (const Step& s : steps) {
    Outcome o;
    o.path = s.candidate.path;
    o.action = s.action;
    if (!lock) {
      o.error = lock.error().message;
    } else if (s.action == Action::Restore) {
      a.restore(s, o);
    } else if (s.action == Action::Remove) {
      a.remove(s, o);
    } else if (s.action == Action::MoveBack) {
      o.target = s.candidate.move_to;
      a.move_back(s, o);
    }
    if (o.done) a.entry_changed(o.path, dirs);
    if (o.done && !o.target.empty()) a.entry_changed(o.target, dirs);
    switch (s.action) {
      case Action::Restore:
      case Action::Remove:
      case Action::MoveBack:
        if (!o.done)
          ++report.failed;
        else if (s.action == Action::MoveBack)
          ++report.moved_back;
        else
          ++(s.action == Action::Restore ? report.restored : report.removed);
        break;
      case Action::Nothing: ++report.nothing; break;
      case Action::Conflict: ++report.conflicts; break;
      case Action::Cannot: ++report.cannot; break;
      case Action::SkipCreated: ++report.skipped; break;
    }
    report.outcomes.push_back(std::move(o));
  }
  a.finish(report);
  return report;
}

ApplyReport apply(const Store& store, const std::vector<Step>& steps) { return apply(&store, steps); }

Result<UndoReport> undo(const Store* store, const History& history, const UndoOptions& options) {
  UndoReport r;
  r.damaged_records = history.damaged_records;
  auto cands = select_changes(history, options.selection);
  auto steps = prepare(store, cands, options.plan);
  if (!steps) return steps.error();
  r.steps = std::move(*steps);
  if (!options.dry_run) r.applied = keep::apply(store, r.steps);
  return r;
}

Result<UndoReport> undo(const Store& store, const History& history, const UndoOptions& options) {
  return undo(&store, history, options);
}

Result<UndoReport> undo(const Store& store, std::string_view session, const UndoOptions& options) {
  auto parsed = store.read_session(session);
  if (!parsed) return parsed.error();
  return undo(store, build_history(*parsed, {}, CommandTable{}), options);
}

}  // namespace cb::keep
