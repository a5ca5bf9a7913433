// The keeper: called at the decision point, after the policy allowed a call
// that destroys content and before the call goes ahead, for the very object
// the kernel will act on.  The caller holds an O_PATH (or O_DIRECTORY) fd of
// the parent directory and the final name, or an fd of the file itself
// (ftruncate, fallocate, fchmod...), and has assumed the calling process's
// credentials.  Each call returns the Snapshot it journaled: the previous
// state, how it was kept, or why not (`kept == NotKept`, `reason`), which the
// caller reports as an event.  Thread-safe.  See store.h for the design.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "keep/budget.h"
#include "keep/store.h"
#include "keep/types.h"

namespace cb::keep {

// What the supervisor passes per keep; enough to tie the record to the
// audit trail (history.h).  The session is the keeper's (opened with the
// session's uuid).
struct Context {
  Op op = Op::Unlink;
  std::string path;      // absolute, as `changes` and `undo` will show and use it
  uint64_t command = 0;  // 0: derived by `changes` and `undo` from the processes table
  uint64_t proc = 0;     // the acting process's proc_id
  uint64_t event = 0;    // the event's seq (EventRow::seq)
  int64_t ts_ns = 0;     // the event's time; 0: now
};

struct KeeperStats {
  uint64_t linked = 0, reflinked = 0, copied = 0, metadata = 0, not_kept = 0, repeated = 0;
  uint64_t bytes = 0;  // counted against the session's budget
};

class Keeper {
 public:
  // Opens (creating) the store at `store_dir` and the session's journal,
  // which it holds locked until destroyed.  `session` is the audit
  // session's uuid (SessionStart::uuid).  Reopening the journal of a
  // session whose keeper died continues it.
  static Result<std::unique_ptr<Keeper>> open(const std::string& store_dir, const std::string& session,
                                              const Limits& limits = {});
  ~Keeper();

  // The name stops naming the inode: unlink, rmdir (a directory's metadata
  // is recorded so that undo can make it again), rename or link over an
  // existing name.  A regular file with one link and no writer is kept by a
  // hard link (O(1)); otherwise by a reflink or a copy.
  Snapshot keep_before_unlink(int dirfd, const char* name, const Context& ctx);

  // The inode's content changes in place: open with O_TRUNC, truncate, the
  // first write-open of an existing file, fallocate punch/collapse/zero.
  // A reflink or a copy, once per inode and command (a second change by the
  // same command returns the first record: the state before the command is
  // what undo needs); once per inode and process when ctx.command is 0.
  Snapshot keep_before_overwrite(int dirfd, const char* name, const Context& ctx);
  Snapshot keep_before_overwrite_fd(int fd, const Context& ctx);

  // Mode, owner, times or xattrs change: the metadata is recorded, once per
  // inode and command.
  Snapshot keep_metadata(int dirfd, const char* name, const Context& ctx);
  Snapshot keep_metadata_fd(int fd, const Context& ctx);

  // What `kept` holds, recorded again for another name of the same inode (a
  // hard link): undo gives the content back under that name too.  Nothing
  // when `kept` holds nothing new (not kept, or a repeat within a command).
  void also_as(const Snapshot& kept, const std::string& path);

  // The call creates `ctx.path`, which did not exist: nothing is kept, the
  // record lets undo --created remove it.  `dirfd` is its parent (-1: not
  // known), whose metadata is recorded as keep_before_entries_change does.
  Snapshot note_created(int dirfd, const Context& ctx);

  // The directory `dirfd` is about to gain or lose an entry (`ctx.path` is
  // the entry's path): its metadata (times) is recorded once per directory
  // and command.  keep_before_unlink and note_created call it themselves;
  // the caller calls it for the source directory of a rename.
  void keep_before_entries_change(int dirfd, const Context& ctx);

  // At the session's end: records the state the session left at every path
  // it journaled, settles the staged objects (hash, deduplicate, move into
  // objects/), and makes the journal and the store durable.
  Result<Ok> finish();

  const std::string& session() const { return session_; }
  const Store& store() const { return store_; }
  KeeperStats stats() const;

  Keeper(const Keeper&) = delete;
  Keeper& operator=(const Keeper&) = delete;

 private:
  Keeper(Store store, std::string session, Limits limits);

  Snapshot base(const Context& ctx) const;
  Snapshot keep_content_fd(int fd, Snapshot s, const std::string& why_not_link);
  Snapshot keep_metadata_of(Snapshot s, const struct stat& st, const std::function<Result<std::string>()>& link,
                            const std::function<Result<std::vector<Xattr>>()>& xattrs);
  Snapshot record(Snapshot s);  // assigns seq, appends, counts
  std::string stage_name();
  std::string reserve(uint64_t size, bool allocates);  // reason when over budget
  void release(uint64_t size);
  // A (dev, ino, command, kind) already kept: its record's seq, else 0.
  uint64_t seen(const Snapshot& s, char kind);
  void mark_seen(const Snapshot& s, char kind);

  Store store_;
  std::string session_;
  Limits limits_;
  UniqueFd journal_;

  mutable std::mutex mu_;
  uint64_t seq_ = 0;
  uint64_t staged_ = 0;
  Usage used_;
  KeeperStats stats_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t, char>, uint64_t> seen_;
  std::set<std::string> paths_;
};

}  // namespace cb::keep
