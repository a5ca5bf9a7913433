#include "keep/settle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "keep/copy.h"
#include "keep/meta.h"

namespace cb::keep {
namespace {

// A copy of `fd` as a new object; returns its hash.
Result<std::string> copy_into_objects(const Store& store, int fd) {
  static unsigned counter = 0;
  std::string tmp = ".tmp." + std::to_string(getpid()) + "." + std::to_string(++counter);
  UniqueFd dst(openat(store.objects_fd(), tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400));
  if (!dst) return Error::from_errno("create object");
  auto how = copy_contents(fd, dst.get());
  auto sha = how ? sha256_of_fd(dst.get()) : Result<std::string>(how.error());
  if (!sha) {
    unlinkat(store.objects_fd(), tmp.c_str(), 0);
    return sha.error();
  }
  std::string p = Store::object_path(*sha);
  struct stat st;
  if (fstatat(store.objects_fd(), p.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    unlinkat(store.objects_fd(), tmp.c_str(), 0);  // the same content is there
  } else if (renameat(store.objects_fd(), tmp.c_str(), store.objects_fd(), p.c_str()) != 0) {
    int e = errno;
    unlinkat(store.objects_fd(), tmp.c_str(), 0);
    return Error::from_errno("object " + p, e);
  }
  return *sha;
}

}  // namespace

Result<SettleStats> settle(const Store& store, int journal_fd) {
  auto parsed = Store::read_journal_fd(journal_fd);
  if (!parsed) return parsed.error();
  SettleStats stats;
  std::set<std::string> done;
  for (const Snapshot& s : parsed->snapshots) {
    if (s.object.size() <= 2 || s.object.compare(0, 2, "s:") != 0) continue;
    std::string name = s.object.substr(2);
    if (!done.insert(name).second) continue;
    UniqueFd fd(openat(store.staging_fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
      ++stats.missing;
      continue;
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return Error::from_errno("fstat staged " + name);
    auto sha = sha256_of_fd(fd.get());
    if (!sha) return Error{sha.error().err, "staged " + name + ": " + sha.error().message};
    stats.bytes += static_cast<uint64_t>(st.st_size);

    std::string fan = sha->substr(0, 2);
    if (mkdirat(store.objects_fd(), fan.c_str(), 0700) != 0 && errno != EEXIST)
      return Error::from_errno("mkdir objects/" + fan);
    std::string p = Store::object_path(*sha);
    struct stat ost;
    bool have = fstatat(store.objects_fd(), p.c_str(), &ost, AT_SYMLINK_NOFOLLOW) == 0;
    bool same_inode = have && ost.st_ino == st.st_ino && ost.st_dev == st.st_dev;  // a settle cut short
    nlink_t others = st.st_nlink - 1 - (same_inode ? 1 : 0);
    if (others > 0) {
      // The inode has a name outside the store: it can still change, so
      // the object must be a copy of its own.
      if (same_inode) unlinkat(store.objects_fd(), p.c_str(), 0);
      auto copied = copy_into_objects(store, fd.get());
      if (!copied) return Error{copied.error().err, "staged " + name + ": " + copied.error().message};
      *sha = *copied;
      ++stats.copied;
    } else if (!have) {
      if (linkat(store.staging_fd(), name.c_str(), store.objects_fd(), p.c_str(), 0) != 0)
        return Error::from_errno("link objects/" + p);
      // Nobody else reaches the inode now; read-only against accidents.
      fchmodat(store.objects_fd(), p.c_str(), 0400, 0);
      ++stats.moved;
    } else if (!same_inode) {
      ++stats.deduplicated;
    }
    // The record first, then the staged name: a crash in between leaves a
    // staged name gc knows is settled.
    std::string line = encode_settled(name, *sha);
    if (write(journal_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return Error::from_errno("write keep journal");
    unlinkat(store.staging_fd(), name.c_str(), 0);
  }
  return stats;
}

}  // namespace cb::keep
