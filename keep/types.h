// The records of the keep store: what a file was before the session changed
// it (Snapshot) and what a file is at a given moment (Fingerprint).  Plain
// structs, so that the journal, the planner and the tests share them without
// touching the filesystem.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb::keep {

enum class FileType : uint8_t { Absent, Regular, Directory, Symlink, Fifo, Socket, CharDev, BlockDev };
std::string_view file_type_name(FileType t);
std::optional<FileType> file_type_from(std::string_view s);
FileType file_type_of_mode(uint32_t st_mode);

// The system call the keep was made for; recorded so that `cottonbox changes`
// can say what happened to the file.
enum class Op : uint8_t {
  Create,      // the file did not exist before (nothing kept; undo removes it with --created)
  Unlink,      // unlink, unlinkat
  Rmdir,       // rmdir, unlinkat(AT_REMOVEDIR), rename over an empty directory
  RenameOver,  // rename*, the destination existed
  LinkOver,    // a name replaced by a link or symlink (`ln -f`)
  Truncate,    // truncate, ftruncate
  OpenTrunc,   // open with O_TRUNC
  WriteOpen,   // the first write-open of an existing file
  Fallocate,   // fallocate punch-hole, collapse-range, zero-range
  Chmod,
  Chown,
  Utimes,
  Xattr,    // setxattr, removexattr
  Entries,  // a directory's entries are about to change (its mtime moves): recorded once
            // per directory and command, so that undo can give a directory its times back
};
std::string_view op_name(Op o);
std::optional<Op> op_from(std::string_view s);
// Ops after which the name no longer names the kept inode.
bool op_detaches(Op o);
// Ops that change the inode's metadata only.
bool op_metadata_only(Op o);

// How the previous content was kept.
enum class Kept : uint8_t {
  Linked,     // a hard link to the very inode, in staging/ until settled
  Reflinked,  // a clone (FICLONE) sharing the extents
  Copied,     // the bytes copied
  Metadata,   // nothing more than the recorded metadata is needed (a directory, a
              // symlink's target, a chmod/chown/utime/xattr change, a create)
  NotKept,    // `reason` says why: undo cannot bring the content back
};
std::string_view kept_name(Kept k);
std::optional<Kept> kept_from(std::string_view s);

struct Xattr {
  std::string name;
  std::string value;  // bytes
  bool operator==(const Xattr&) const = default;
};

struct Timespec {
  int64_t sec = 0;
  int64_t nsec = 0;
  bool operator==(const Timespec&) const = default;
};

// The previous state of one path, as one journal record.
struct Snapshot {
  // Who and what (from the caller at the decision point).
  uint64_t seq = 0;  // order within the session, from 1
  int64_t ts_ns = 0;
  uint64_t command = 0;  // the process the agent started directly (0: unknown)
  uint64_t proc = 0;     // the process that made the call
  uint64_t event = 0;    // the audit database's event, when the caller has it
  Op op = Op::Unlink;
  std::string path;  // absolute

  // The previous state.
  FileType type = FileType::Absent;
  uint32_t mode = 0;  // permission bits with setuid/setgid/sticky (07777)
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  Timespec atime;
  Timespec mtime;
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t nlink = 0;
  std::vector<Xattr> xattrs;
  std::string target;  // a symlink's target

  Kept kept = Kept::NotKept;
  std::string object;  // "s:<name>" (staging) or "o:<sha256>" (settled); empty when no content
  std::string sha256;  // the content's hash once known
  std::string reason;  // why not kept, or what is not exact about the keep
  // Not written: an earlier record of the same command holds the state
  // (never in the journal; the keeper's answer only).
  bool repeat = false;
};

// Whether `changes` may say "can be undone" for this record.
bool undoable(const Snapshot& s);

// A file's state at one moment, cheap to take and to compare: what the
// session left, and what is there now.
struct Fingerprint {
  bool known = false;  // false: nobody recorded it (a crashed session)
  FileType type = FileType::Absent;
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  Timespec mtime;
  uint64_t dev = 0;
  uint64_t ino = 0;
  std::string sha256;  // regular files up to the hashing limit; empty otherwise
  std::string target;  // symlinks
};

// The fingerprint a snapshot's previous state would have.
Fingerprint fingerprint_of(const Snapshot& s);

// The session-end record: the state the session left at `path`.
struct Left {
  std::string path;
  Fingerprint fp;
};

}  // namespace cb::keep
