#include "keep/types.h"

#include <sys/stat.h>

#include <array>
#include <utility>

namespace cb::keep {
namespace {

template <typename E, size_t N>
std::optional<E> lookup(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [e, name] : table)
    if (name == s) return e;
  return std::nullopt;
}
template <typename E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [k, name] : table)
    if (k == e) return name;
  return "?";
}

constexpr std::array<std::pair<FileType, std::string_view>, 8> kTypes{{
    {FileType::Absent, "absent"},
    {FileType::Regular, "file"},
    {FileType::Directory, "dir"},
    {FileType::Symlink, "symlink"},
    {FileType::Fifo, "fifo"},
    {FileType::Socket, "socket"},
    {FileType::CharDev, "chardev"},
    {FileType::BlockDev, "blockdev"},
}};

constexpr std::array<std::pair<Op, std::string_view>, 14> kOps{{
    {Op::Create, "create"},
    {Op::Unlink, "unlink"},
    {Op::Rmdir, "rmdir"},
    {Op::RenameOver, "rename-over"},
    {Op::LinkOver, "link-over"},
    {Op::Truncate, "truncate"},
    {Op::OpenTrunc, "open-trunc"},
    {Op::WriteOpen, "write-open"},
    {Op::Fallocate, "fallocate"},
    {Op::Chmod, "chmod"},
    {Op::Chown, "chown"},
    {Op::Utimes, "utimes"},
    {Op::Xattr, "xattr"},
    {Op::Entries, "entries"},
}};

constexpr std::array<std::pair<Kept, std::string_view>, 5> kKept{{
    {Kept::Linked, "linked"},
    {Kept::Reflinked, "reflinked"},
    {Kept::Copied, "copied"},
    {Kept::Metadata, "metadata"},
    {Kept::NotKept, "not-kept"},
}};

}  // namespace

std::string_view file_type_name(FileType t) { return name_of(kTypes, t); }
std::optional<FileType> file_type_from(std::string_view s) { return lookup(kTypes, s); }
std::string_view op_name(Op o) { return name_of(kOps, o); }
std::optional<Op> op_from(std::string_view s) { return lookup(kOps, s); }
std::string_view kept_name(Kept k) { return name_of(kKept, k); }
std::optional<Kept> kept_from(std::string_view s) { return lookup(kKept, s); }

FileType file_type_of_mode(uint32_t m) {
  switch (m & S_IFMT) {
    case S_IFREG: return FileType::Regular;
    case S_IFDIR: return FileType::Directory;
    case S_IFLNK: return FileType::Symlink;
    case S_IFIFO: return FileType::Fifo;
    case S_IFSOCK: return FileType::Socket;
    case S_IFCHR: return FileType::CharDev;
    case S_IFBLK: return FileType::BlockDev;
    default: return FileType::Absent;
  }
}

bool op_detaches(Op o) { return o == Op::Unlink || o == Op::Rmdir || o == Op::RenameOver || o == Op::LinkOver; }

bool op_metadata_only(Op o) {
  return o == Op::Chmod || o == Op::Chown || o == Op::Utimes || o == Op::Xattr || o == Op::Entries;
}

bool undoable(const Snapshot& s) { return s.kept != Kept::NotKept; }

Fingerprint fingerprint_of(const Snapshot& s) {
  Fingerprint f;
  f.known = true;
  f.type = s.type;
  f.mode = s.mode;
  f.uid = s.uid;
  f.gid = s.gid;
  f.size = s.size;
  f.mtime = s.mtime;
  f.dev = s.dev;
  f.ino = s.ino;
  f.sha256 = s.sha256;
  f.target = s.target;
  return f;
}

}  // namespace cb::keep
