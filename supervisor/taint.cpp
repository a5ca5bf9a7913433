#include "supervisor/taint.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/paths.h"
#include "procs/procs.h"

namespace cb {
namespace {

constexpr size_t kReadsKept = 4;
constexpr int kMaxDepth = 64;  // ancestors walked; sessions are shallower

// The open flags of `pid`'s descriptor `fd`, or -1.
long fd_flags(int32_t pid, const char* fd) { return fdinfo_field(pid, atoi(fd), "flags", 8).value_or(-1); }

bool succeeded(const EventRow& row) {
  // -1: the kernel ran it and the result is not known here: counted.
  return row.allowed && (row.result_errno == 0 || row.result_errno == -1);
}

// Calls f(fd number as text, what /proc names it) for each open descriptor
// of `pid`.
template <class F>
void for_each_fd(int32_t pid, F&& f) {
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[4096];
    ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target);
    if (n > 0) f(e->d_name, std::string(target, static_cast<size_t>(n)));
  }
  closedir(d);
}

}  // namespace

void TaintTracker::Taint::add(uint64_t b, const std::vector<TaintRead>& r) {
  bits |= b;
  for (const auto& t : r) {
    if (reads.size() >= kReadsKept) break;
    bool seen = std::any_of(reads.begin(), reads.end(), [&](const TaintRead& x) { return x.path == t.path; });
    if (!seen) reads.push_back(t);
  }
}

TaintTracker::TaintTracker(const Policy* policy, const ProcessTable& procs)
    : policy_(policy), procs_(procs), active_(policy && !policy->taints.empty()) {}

TaintTracker::Taint TaintTracker::of(uint64_t proc_id) const {
  Taint t;
  for (int depth = 0; proc_id != 0 && depth < kMaxDepth; ++depth) {
    if (auto it = by_proc_.find(proc_id); it != by_proc_.end()) t.add(it->second.bits, it->second.reads);
    proc_id = procs_.parent_of(proc_id);
  }
  return t;
}

void TaintTracker::mark_outputs(int32_t pid, const Taint& t) {
  for_each_fd(pid, [&](const char* fd, const std::string& target) {
    // Written through: its flags say so (O_WRONLY, O_RDWR).
    long flags = fd_flags(pid, fd);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) return;
    struct stat st;
    if (target.starts_with("/")) {
      // Files only: /dev/null and terminals carry nothing to a reader.
      std::string link = "/proc/" + std::to_string(pid) + "/fd/" + fd;
      if (stat(link.c_str(), &st) == 0 && S_ISREG(st.st_mode)) by_file_[target].add(t.bits, t.reads);
    } else if (target.starts_with("pipe:") || target.starts_with("socket:")) {
      by_channel_[target].add(t.bits, t.reads);
    }
  });
}

void TaintTracker::on_row(const EventRow& row) {
  if (!active_ || !succeeded(row) || !row.ev.proc) return;
  uint64_t proc_id = row.ev.proc->proc_id;
  if (proc_id == 0) return;
  const Event& ev = row.ev;
  switch (ev.action) {
    case Action::FileRead: {
      uint64_t bits = taint_bits(*policy_, ev.path);
      Taint got;
      if (bits) {
        for (size_t i = 0; i < policy_->taints.size(); ++i)
          if (bits & (uint64_t{1} << i)) {
            got.add(uint64_t{1} << i, {TaintRead{static_cast<uint8_t>(i), ev.path, ev.proc->comm, ev.pid}});
            break;
          }
      }
      if (auto it = by_file_.find(ev.path); it != by_file_.end()) got.add(it->second.bits, it->second.reads);
      if (got.bits) {
        by_proc_[proc_id].add(got.bits, got.reads);
        mark_outputs(ev.pid, of(proc_id));
      }
      break;
    }
    case Action::FileWrite:
    case Action::FileCreate:
    case Action::FileTruncate: {
      Taint t = of(proc_id);
      if (t.bits) by_file_[ev.path].add(t.bits, t.reads);
      break;
    }
    case Action::FileRename: {
      // The data moves with the name.
      if (auto it = by_file_.find(ev.path); it != by_file_.end() && !ev.target.empty())
        by_file_[ev.target].add(it->second.bits, it->second.reads);
      break;
    }
    default: break;
  }
}

void TaintTracker::fill(Event& ev, uint64_t proc_id) const {
  if (!active_) return;
  Taint t = of(proc_id);
  if (!by_channel_.empty() && ev.pid > 0) {
    // A pipe or socket a tainted process wrote into, held by this one.
    for_each_fd(ev.pid, [&](const char* fd, const std::string& target) {
      auto it = by_channel_.find(target);
      if (it == by_channel_.end()) return;
      // Only an end it can read from: a write end shared with the
      // tainted process (a terminal's pipe, stderr) brings nothing in.
      long flags = fd_flags(ev.pid, fd);
      if (flags >= 0 && (flags & O_ACCMODE) != O_WRONLY) t.add(it->second.bits, it->second.reads);
    });
  }
  if (lost_) {
    t.bits = policy_->taints.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << policy_->taints.size()) - 1;
    if (t.reads.empty()) t.reads.push_back(TaintRead{0, "(calls the tracer lost)", "", 0});
  }
  ev.read_taint = t.bits;
  ev.taint_reads = std::move(t.reads);
}

}  // namespace cb
