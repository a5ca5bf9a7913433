#include "keep/gc.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include "keep/fsutil.h"
#include "keep/settle.h"

namespace cb::keep {
namespace {

struct Journal {
  std::string session;
  UniqueFd fd;
  bool live = false;
  bool removed = false;
  int64_t last_ns = 0;
  std::set<std::string> refs;  // "o:SHA" and "s:NAME"
};

// The size of a referenced object, 0 when it is gone.
uint64_t object_size(const Store& store, const std::string& ref) {
  struct stat st;
  int rc = -1;
  if (ref.compare(0, 2, "s:") == 0)
    rc = fstatat(store.staging_fd(), ref.c_str() + 2, &st, AT_SYMLINK_NOFOLLOW);
  else if (ref.compare(0, 2, "o:") == 0)
    rc = fstatat(store.objects_fd(), Store::object_path(ref.substr(2)).c_str(), &st, AT_SYMLINK_NOFOLLOW);
  return rc == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

Result<GcReport> gc(const Store& store, const GcOptions& opt) {
  auto lock = store.lock(true);
  if (!lock) return lock.error();
  GcReport report;
  if (auto b = store.measure()) report.bytes_before = *b;
  int64_t now = opt.now_ns ? opt.now_ns : now_ns();

  auto names = store.sessions();
  if (!names) return names.error();
  std::vector<Journal> journals;
  for (const std::string& s : *names) {
    Journal j;
    j.session = s;
    std::string file = s + ".log";
    j.fd.reset(openat(store.journal_dir_fd(), file.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC));
    if (!j.fd) return Error::from_errno("keep journal " + file);
    if (flock(j.fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) return Error::from_errno("lock keep journal " + file);
      j.live = true;
      report.live.push_back(s);
    } else {
      auto st = settle(store, j.fd.get());
      if (!st) return Error{st.error().err, "session " + s + ": " + st.error().message};
      report.settled += st->moved + st->deduplicated + st->copied;
    }
    auto parsed = Store::read_journal_fd(j.fd.get());
    if (!parsed) return parsed.error();
    report.damaged_records += parsed->damaged;
    for (const Snapshot& snap : parsed->snapshots) {
      j.last_ns = std::max(j.last_ns, snap.ts_ns);
      if (!snap.object.empty()) j.refs.insert(snap.object);
    }
    if (j.last_ns == 0) {
      struct stat st;
      if (fstat(j.fd.get(), &st) == 0) j.last_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    }
    journals.push_back(std::move(j));
  }
  std::sort(journals.begin(), journals.end(), [](const Journal& a, const Journal& b) { return a.last_ns < b.last_ns; });

  auto remove = [&](Journal& j) -> Result<Ok> {
    std::string file = j.session + ".log";
    if (unlinkat(store.journal_dir_fd(), file.c_str(), 0) != 0 && errno != ENOENT)
      return Error::from_errno("remove keep journal " + file);
    j.removed = true;
    report.removed.push_back(j.session);
    return Ok{};
  };

  if (opt.max_age_ns > 0) {
    for (Journal& j : journals)
      if (!j.live && now - j.last_ns > opt.max_age_ns)
        if (auto r = remove(j); !r) return r.error();
  }

  if (opt.max_bytes > 0) {
    std::map<std::string, size_t> count;  // ref -> journals referring to it
    std::map<std::string, uint64_t> size;
    uint64_t total = 0;
    for (const Journal& j : journals) {
      if (j.removed) continue;
      for (const std::string& r : j.refs) {
        if (count[r]++ == 0) total += size[r] = object_size(store, r);
      }
    }
    for (Journal& j : journals) {
      if (total <= opt.max_bytes) break;
      if (j.removed || j.live) continue;
      if (auto r = remove(j); !r) return r.error();
      for (const std::string& r : j.refs)
        if (--count[r] == 0) total -= size[r];
    }
  }

  // Sweep what no remaining journal refers to.
  std::set<std::string> refs;
  std::set<std::string> live;
  for (const Journal& j : journals) {
    if (j.live) live.insert(j.session);
    if (!j.removed) refs.insert(j.refs.begin(), j.refs.end());
  }
  auto fans = list_dir(store.objects_fd());
  if (!fans) return fans.error();
  for (const std::string& f : *fans) {
    if (f.compare(0, 5, ".tmp.") == 0) {
      // A copy of a settle that was cut short: settles hold the lock we hold.
      if (unlinkat(store.objects_fd(), f.c_str(), 0) == 0) ++report.objects_removed;
      continue;
    }
    UniqueFd d(openat(store.objects_fd(), f.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!d) continue;
    auto objs = list_dir(d.get());
    if (!objs) return objs.error();
    size_t left = objs->size();
    for (const std::string& n : *objs) {
      if (refs.count("o:" + f + n)) continue;
      if (unlinkat(d.get(), n.c_str(), 0) == 0) {
        ++report.objects_removed;
        --left;
      }
    }
    if (left == 0) unlinkat(store.objects_fd(), f.c_str(), AT_REMOVEDIR);
  }
  auto staged = list_dir(store.staging_fd());
  if (!staged) return staged.error();
  for (const std::string& n : *staged) {
    size_t dot = n.rfind('.');
    if (dot != std::string::npos && live.count(n.substr(0, dot))) continue;  // a keep may be in flight
    if (refs.count("s:" + n)) continue;
    if (unlinkat(store.staging_fd(), n.c_str(), 0) == 0) ++report.objects_removed;
  }

  if (auto b = store.measure()) {
    report.bytes_after = *b;
    (void)store.write_usage(*b);
  }
  return report;
}

}  // namespace cb::keep
