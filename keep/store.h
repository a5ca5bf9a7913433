// The keep store: what allowed calls of a session were about to destroy,
// kept so that `cottonbox undo` can give it back byte for byte.
//
// Layout (beside the audit database: <dir of audit.db>/keep/, mode 0700)
//   VERSION             "cottonbox keep store 1"
//   lock                flock: exclusive for settle and gc, shared for undo,
//                       so that gc never removes an object an undo is reading
//   usage               bytes held, as measured by the last settle or gc
//   journal/S.log       one append-only journal per session S (journal.h):
//                       a Snapshot per kept change, then at the session's end
//                       the state it left per path and the staged objects'
//                       hashes.  The keeper holds an flock on it while the
//                       session runs: gc leaves a locked journal alone.
//   staging/S.N         objects not hashed yet: a hard link to the very inode
//                       (unlink, rename over) or a copy (in-place changes)
//   objects/ab/cdef...  content-addressed by SHA-256, one file per content;
//                       staged objects move here when settled (at the
//                       session's end or by gc), identical contents once
//
// The hot path.  At the decision point the keeper does no more than a
// stat, an open for reading (nothing is read) with a lease probe (see
// below), one linkat into staging/, an fstat and an flistxattr on that fd,
// and one O_APPEND write of the journal record: O(1), 25-40 us per file on
// this project's test host (tests/keep/keep_cost).  The first change in a
// directory per command adds a record of the directory's times, so that
// undo gives a directory its mtime back.  Hashing, deduplication and the
// move into objects/ happen later (settle).
// In-place changes (O_TRUNC, truncate, the first write-open, fallocate)
// need the bytes themselves: a reflink where the filesystem has one
// (FICLONE), a copy otherwise (copy_file_range, in the kernel).
//
// Why the hard link is exact.  After unlink or rename over, the inode lives
// on through the store's link with its content, mode, owner, times and
// xattrs untouched (only ctime moves, which nothing can restore anyway); no
// other name reaches it, so nothing can change it.  It is not exact, and the
// keeper copies instead, when
//   - st_nlink > 1: another name can change the content in place later;
//   - the file is open for writing (a writable fd or shared mapping anywhere
//     on the host): probed with a read lease, which the kernel refuses while
//     the inode is open for write; where the probe itself fails (not the
//     owner and no CAP_LEASE, a filesystem without leases) the link is made
//     and the record says it was not checked;
//   - the store is on another filesystem or mount (EXDEV): a copy.
// What stays inexact: a process that held the file open read-only may
// reopen it for writing through /proc/PID/fd after the unlink; a writer may
// open it between the probe and the unlink.  Settling copies a staged link
// whose inode has another name again (the unlink did not happen).  Two
// names of one inode, both deleted, come back as two files; ctime and the
// inode number never come back.
//
// Crash safety.  A keep is complete before it returns: the link or the
// copy exists, then the journal record is written with one write(2) on an
// O_APPEND descriptor.  Both are in the kernel's page cache by then, so a
// SIGKILL of the supervisor at any point loses nothing that was
// acknowledged: a copy cut short or a link without its record is an orphan
// in staging/ that gc removes once the session is no longer live; a record
// cut short is a torn line that readers skip (CRC).  Durability against a
// power cut comes at the session's end (finish(): fsync of the journal and
// syncfs of the store); before that it is the kernel's writeback, as for the
// files the session itself wrote.
//
// Budgets: per session 2 GiB, in total 10 GiB, and a copy keeps 5 % (at
// least 1 GiB) of the store's filesystem free; see budget.h.  What goes over
// is recorded as not kept with the reason, for the caller to report.
//
// Credentials.  The keeper acts with the credentials of the thread that
// calls it (the caller assumes the session's before calling); the store must
// be writable with them.  Keeping the session itself away from the store
// (read or write) is the mount layer's job, as for the audit database.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "keep/journal.h"

namespace cb::keep {

constexpr std::string_view kStoreVersion = "cottonbox keep store 1";

class Store {
 public:
  // Opens the store at `dir`, creating it (mode 0700) when `create`.
  static Result<Store> open(const std::string& dir, bool create = true);
  // <dir of the audit database>/keep
  static std::string dir_beside(const std::string& audit_db_path);
  // Session names become file names: letters, digits, '-', '_' and '.' (not leading).
  static bool valid_session(std::string_view s);

  const std::string& dir() const { return dir_; }
  int dir_fd() const { return root_.get(); }
  int objects_fd() const { return objects_.get(); }
  int staging_fd() const { return staging_.get(); }
  int journal_dir_fd() const { return journal_.get(); }

  // The sessions that have a journal here.
  Result<std::vector<std::string>> sessions() const;
  // A session's journal, parsed (an absent journal is an error).
  Result<Parsed> read_session(std::string_view session) const;
  static Result<Parsed> read_journal_fd(int fd);

  // An fd to read the object `ref` ("s:NAME" in staging/, "o:SHA" in objects/).
  Result<UniqueFd> open_object(std::string_view ref) const;
  static std::string object_path(std::string_view sha256);  // "ab/cdef..."

  // The store-wide lock (see the layout above).  `wait` false fails with
  // EWOULDBLOCK instead of waiting.
  Result<UniqueFd> lock(bool exclusive, bool wait = true) const;

  // The bytes held per the `usage` file (0 when none was written).
  uint64_t recorded_usage() const;
  Result<Ok> write_usage(uint64_t bytes) const;
  // Sums the sizes of everything in objects/ and staging/.
  Result<uint64_t> measure() const;

 private:
  std::string dir_;
  UniqueFd root_, objects_, staging_, journal_;
};

}  // namespace cb::keep
