#include "procs/mount_map.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <climits>
#include <cstdio>

#include "base/paths.h"
#include "procs/creds.h"
#include "procs/procs.h"

namespace cb {
namespace {

std::vector<MountEntry> mounts_of(pid_t pid) {
  Privileged priv;
  return parse_mountinfo(read_proc_file(pid, "mountinfo", 1 << 22));
}

bool same_place(const MountEntry& a, const MountEntry& b) { return a.dev == b.dev && a.root == b.root; }

}  // namespace

MountMap::MountMap(pid_t init_pid, Pids others) : init_pid_(init_pid), others_(std::move(others)) {}

int MountMap::mount_id(int fd) {
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) != 0) return -1;
  if (!(stx.stx_mask & STATX_MNT_ID)) return -1;
  return static_cast<int>(stx.stx_mnt_id);
}

void MountMap::load_session() {
  std::vector<MountEntry> mounts = mounts_of(init_pid_);
  if (mounts.empty()) return;  // the first process is gone: keep what was read
  session_ = std::move(mounts);
  session_ids_.clear();
  for (size_t i = 0; i < session_.size(); ++i) session_ids_[session_[i].id] = i;
  // What the supervisor's own namespace does not have was made for the
  // session: the mount layer.
  std::vector<MountEntry> own = parse_mountinfo(read_proc_file(getpid(), "mountinfo", 1 << 22));
  host_.clear();
  for (auto& o : own) host_.emplace(o.id, o);
  layers_.clear();
  for (const auto& m : session_) {
    bool host = false;
    for (const auto& o : own)
      if (same_place(m, o) && o.point == m.point && o.read_only == m.read_only) host = true;
    if (!host) layers_.push_back(m);
  }
  loaded_ = true;
}

bool MountMap::in_session_ns(int mnt_id) {
  if (!loaded_) load_session();
  if (session_ids_.count(mnt_id)) return true;
  // A mount the host added since (propagated into the session): read again.
  // Not for mounts known to be elsewhere (the supervisor's own, for a
  // directory inherited from outside): each would read mountinfo again.
  if (foreign_.count(mnt_id) || host_.count(mnt_id)) return false;
  load_session();
  return session_ids_.count(mnt_id) > 0;
}

const MountEntry* MountMap::find_foreign(int id, pid_t tid) {
  if (auto it = foreign_.find(id); it != foreign_.end()) return &it->second;
  auto take = [&](pid_t pid) -> const MountEntry* {
    const MountEntry* hit = nullptr;
    for (auto& m : mounts_of(pid)) {
      if (session_ids_.count(m.id)) continue;
      int mid = m.id;
      auto [it, fresh] = foreign_.try_emplace(mid, std::move(m));
      if (!fresh) continue;
      if (mid == id) hit = &it->second;
    }
    if (!hit)
      if (auto it = foreign_.find(id); it != foreign_.end()) hit = &it->second;
    return hit;
  };
  if (const MountEntry* m = take(tid)) return m;
  if (others_)
    for (pid_t p : others_())
      if (p != tid)
        if (const MountEntry* m = take(p)) return m;
  return nullptr;
}

Result<MountEntry> MountMap::mount_of(int fd, pid_t tid) {
  int id = mount_id(fd);
  if (id < 0) return Error::from_errno("statx");
  if (in_session_ns(id)) return session_[session_ids_[id]];
  if (auto it = host_.find(id); it != host_.end()) return it->second;
  if (const MountEntry* m = find_foreign(id, tid)) return *m;
  return Error{EPERM, "a mount no process of the session shows"};
}

Result<std::string> MountMap::host_name(int fd, pid_t tid) {
  int id = mount_id(fd);
  std::string inside = fd_path(fd);
  // Not a name in any tree (a namespace, a pipe, an anonymous inode): as the
  // kernel names it.
  if (inside.empty() || inside[0] != '/') return inside;
  if (id < 0 || in_session_ns(id)) return inside;
  // The supervisor's own namespace (a directory the command inherited from
  // outside the session): names there are the host's.
  if (host_.count(id)) return inside;
  const MountEntry* m = find_foreign(id, tid);
  if (!m) return Error{EPERM, "a mount no process of the session shows"};
  auto in_fs = fs_path_of(*m, inside);
  if (!in_fs) {
    // Named outside its own mount point: the reader's and the namespace's
    // roots differ (a chroot inside it).  Nothing to name it by.
    return Error{EPERM, "an object whose mount its namespace does not show at its name"};
  }
  if (auto host = host_name_of(session_, m->dev, *in_fs)) return *host;
  // A file system only this namespace has.  Its proc and sys stand for the
  // host's, whose rules (a process's memory, kernel knobs) apply to them.
  std::string_view rest = std::string_view(inside).substr(m->point == "/" ? 0 : m->point.size());
  if (m->fstype == "proc") return "/proc" + std::string(rest);
  if (m->fstype == "sysfs") return "/sys" + std::string(rest);
  return "ns:" + inside;
}

bool MountMap::is_layer(const MountEntry& m) {
  if (!loaded_) load_session();
  for (const auto& l : layers_)
    if (same_place(l, m)) return true;
  return false;
}

bool MountMap::layer_below(dev_t dev, std::string_view fs_path) {
  if (!loaded_) load_session();
  for (const auto& l : layers_)
    if (l.dev == dev && l.root != fs_path && fs_within(l.root, fs_path)) return true;
  return false;
}

}  // namespace cb
