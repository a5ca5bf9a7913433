// Hard links: other names of files under protected trees, made before the
// session or by it.  Writing any name of a file writes the protected one, so
// writes through them are judged by inode.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cb {

// Other names of protected files that existed before the session:
// (dev, ino) -> the protected paths a write through any name amounts to.
using InodeAliases = std::unordered_map<uint64_t, std::vector<std::string>>;
inline uint64_t inode_key(dev_t dev, ino_t ino) { return (uint64_t(dev) << 40) ^ uint64_t(ino); }

// The InodeAliases of the protected trees, found by a walk on its own thread
// that starts with the session.  A repository's .git can hold a hundred
// thousand entries: launch must not wait for them, and only a lookup that
// needs the answer (a file with several links, which is rare) waits for
// the walk to end.
class LinkIndex {
 public:
  // `done(complete)` runs on the walk's thread when it ends; complete is
  // false when `limit` entries cut it short.
  LinkIndex(std::vector<std::string> trees, size_t limit, std::function<void(bool complete)> done = {});
  explicit LinkIndex(InodeAliases ready);  // a walk that ended already
  ~LinkIndex();                            // stops the walk and joins it
  LinkIndex(const LinkIndex&) = delete;
  LinkIndex& operator=(const LinkIndex&) = delete;

  // The known names of inode `key` (waiting for the walk to end).
  std::vector<std::string> names_of(uint64_t key) const;
  // A name `path` the inode `key` had when the session linked it elsewhere:
  // from then on, a write through the new name is a write to `path` too.
  void add(uint64_t key, std::string path);

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool ready_ = false;
  std::atomic<bool> stop_{false};
  InodeAliases map_;    // the walk's, complete once ready_
  InodeAliases added_;  // the session's own links, from the start
  std::thread thread_;
};

// Regular files with more than one name below `roots` (at most `limit`
// entries visited): writing any other name of them writes the protected one.
// Returns false when the limit cut the walk short.
bool collect_multilinked(const std::vector<std::string>& roots, InodeAliases& out, size_t limit,
                         const std::atomic<bool>* stop = nullptr);

}  // namespace cb
