#include "host/links.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <algorithm>

namespace cb {

bool collect_multilinked(const std::vector<std::string>& roots, InodeAliases& out, size_t limit,
                         const std::atomic<bool>* stop) {
  size_t visited = 0;
  std::vector<std::string> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    if (stop && stop->load(std::memory_order_relaxed)) return true;
    std::string dir = std::move(stack.back());
    stack.pop_back();
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
      if (++visited > limit) {
        closedir(d);
        return false;
      }
      std::string p = dir == "/" ? "/" + std::string(e->d_name) : dir + "/" + e->d_name;
      struct stat st;
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)) continue;
      if (S_ISDIR(st.st_mode)) {
        stack.push_back(std::move(p));
      } else if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
        out[inode_key(st.st_dev, st.st_ino)].push_back(std::move(p));
      }
    }
    closedir(d);
  }
  return true;
}

LinkIndex::LinkIndex(std::vector<std::string> trees, size_t limit, std::function<void(bool)> done) {
  thread_ = std::thread([this, trees = std::move(trees), limit, done = std::move(done)] {
    pthread_setname_np(pthread_self(), "cb-links");
    InodeAliases m;
    bool complete = collect_multilinked(trees, m, limit, &stop_);
    {
      std::lock_guard lk(mu_);
      map_ = std::move(m);
      ready_ = true;
    }
    cv_.notify_all();
    if (done && !stop_.load()) done(complete);
  });
}

LinkIndex::LinkIndex(InodeAliases ready) : ready_(true), map_(std::move(ready)) {}

LinkIndex::~LinkIndex() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> LinkIndex::names_of(uint64_t key) const {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [this] { return ready_; });
  std::vector<std::string> out;
  if (auto it = map_.find(key); it != map_.end()) out = it->second;
  if (auto it = added_.find(key); it != added_.end())
    for (const auto& p : it->second)
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  return out;
}

void LinkIndex::add(uint64_t key, std::string path) {
  std::lock_guard lk(mu_);
  auto& names = added_[key];
  if (std::find(names.begin(), names.end(), path) == names.end()) names.push_back(std::move(path));
}

}  // namespace cb
