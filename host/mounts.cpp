#include "host/mounts.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/paths.h"
#include "host/mountinfo.h"

namespace cb {
namespace {

bool is_under(const std::string& path, const std::string& root) { return root == "/" || path_within(path, root); }

std::string read_small(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

dev_t parse_dev(const std::string& s) {
  unsigned ma = 0, mi = 0;
  if (sscanf(s.c_str(), "%u:%u", &ma, &mi) != 2) return 0;
  return makedev(ma, mi);
}

// Every device whose writes reach `d`: itself, a partition's whole disk, and
// the members of a device-mapper or md device, recursively.
void collect_devices(dev_t d, std::set<dev_t>& out, int depth = 0) {
  if (!d || depth > 8 || !out.insert(d).second) return;
  char base[96];
  snprintf(base, sizeof base, "/sys/dev/block/%u:%u", major(d), minor(d));
  char real[PATH_MAX];
  if (!realpath(base, real)) return;
  std::string sys(real);
  if (access((sys + "/partition").c_str(), F_OK) == 0) {
    std::string parent = sys.substr(0, sys.rfind('/'));
    collect_devices(parse_dev(read_small(parent + "/dev")), out, depth + 1);
  }
  if (DIR* dir = opendir((sys + "/slaves").c_str())) {
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      collect_devices(parse_dev(read_small(sys + "/slaves/" + e->d_name + "/dev")), out, depth + 1);
    }
    closedir(dir);
  }
}

void scan_dev_nodes(const std::string& dir, const std::set<dev_t>& want,
                    std::vector<std::pair<dev_t, std::string>>& out) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    // devtmpfs says what each entry is: only block nodes need a stat.
    if (e->d_type != DT_BLK && e->d_type != DT_UNKNOWN) continue;
    std::string p = dir + "/" + e->d_name;
    struct stat st;
    if (lstat(p.c_str(), &st)) continue;
    if (S_ISBLK(st.st_mode) && want.count(st.st_rdev)) out.emplace_back(st.st_rdev, p);
  }
  closedir(d);
}

// The existing directories that deny/ask rules on `actions` name as the
// literal start of their paths (~/.ssh for "~/.ssh/**"), each once.

}  // namespace

std::vector<std::pair<std::string, std::string>> mount_aliases(const std::vector<std::string>& dirs) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<MountEntry> mounts = parse_mountinfo(text.str());
  for (const std::string& dir : dirs) {
    struct stat want;
    if (stat(dir.c_str(), &want) != 0 || !S_ISDIR(want.st_mode)) continue;
    // Where `dir` lies in its file system: below the root of the mount that
    // holds it (the longest mount point above it; of mounts stacked there,
    // the last, which is the one that shows).
    const MountEntry* holder = nullptr;
    for (const auto& e : mounts)
      if (e.dev == want.st_dev && is_under(dir, e.point) && (!holder || e.point.size() >= holder->point.size()))
        holder = &e;
    if (!holder) continue;
    std::string rest = holder->point == "/" ? dir : dir.substr(holder->point.size());
    std::string in_fs = holder->root == "/" ? (rest.empty() ? "/" : rest) : holder->root + rest;
    for (const auto& e : mounts) {
      if (&e == holder || e.dev != want.st_dev || !is_under(in_fs, e.root)) continue;
      std::string tail = e.root == "/" ? in_fs : in_fs.substr(e.root.size());
      std::string alias = e.point == "/" ? (tail.empty() ? "/" : tail) : e.point + tail;
      if (alias == dir || is_under(alias, dir) || is_under(dir, alias)) continue;
      // Only a name that is this very directory: a later mount may hide it.
      struct stat st;
      std::pair<std::string, std::string> found{alias, dir};
      if (stat(alias.c_str(), &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino &&
          std::find(out.begin(), out.end(), found) == out.end())
        out.push_back(std::move(found));
    }
  }
  return out;
}

std::vector<std::vector<std::pair<dev_t, std::string>>> block_devices_of(const std::vector<std::string>& paths) {
  std::vector<std::set<dev_t>> wanted(paths.size());
  std::set<dev_t> all;
  // Most roots share one file system; sysfs is walked once per device.
  std::map<dev_t, std::set<dev_t>> by_fs;
  for (size_t i = 0; i < paths.size(); ++i) {
    struct stat st;
    if (stat(paths[i].c_str(), &st)) continue;
    auto [it, fresh] = by_fs.try_emplace(st.st_dev);
    if (fresh) collect_devices(st.st_dev, it->second);
    wanted[i] = it->second;
    all.insert(wanted[i].begin(), wanted[i].end());
  }
  std::vector<std::vector<std::pair<dev_t, std::string>>> out(paths.size());
  if (all.empty()) return out;
  std::vector<std::pair<dev_t, std::string>> nodes;
  scan_dev_nodes("/dev", all, nodes);
  scan_dev_nodes("/dev/mapper", all, nodes);
  for (size_t i = 0; i < paths.size(); ++i)
    for (auto& n : nodes)
      if (wanted[i].count(n.first)) out[i].push_back(n);
  return out;
}

}  // namespace cb
