#include "procs/procs.h"

#include "base/paths.h"
#include "procs/code.h"

#include <fcntl.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <ctime>

namespace cb {
namespace {

std::string read_link(pid_t pid, const char* name) {
  char p[64], buf[PATH_MAX];
  snprintf(p, sizeof p, "/proc/%d/%s", pid, name);
  ssize_t n = readlink(p, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The value after "Key:" in a /proc status text.
std::string status_field(const std::string& st, const char* key) {
  std::string k = std::string("\n") + key + ":";
  size_t i = st.find(k);
  if (i == std::string::npos) return {};
  i += k.size();
  size_t e = st.find('\n', i);
  std::string v = st.substr(i, e == std::string::npos ? std::string::npos : e - i);
  size_t b = v.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : v.substr(b);
}

// The Umask field of a /proc status text.
std::optional<mode_t> umask_in(const std::string& status) {
  std::string m = status_field(status, "Umask");
  if (m.empty()) return std::nullopt;
  return static_cast<mode_t>(strtoul(m.c_str(), nullptr, 8));
}

// PIDFD_GET_INFO (6.13+) reports a process's exit status to anyone holding a
// pidfd, not just its parent.
#ifndef PIDFD_GET_INFO
struct pidfd_info {
  __u64 mask;
  __u64 cgroupid;
  __u32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
  __s32 exit_code;
  __u32 coredump_mask;
  __u32 spare1;
};
#define PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info)
#define PIDFD_INFO_EXIT (1UL << 3)
#endif

}  // namespace

std::string read_proc_file(pid_t pid, const char* name, size_t max) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/%s", pid, name);
  UniqueFd fd(open(p, O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  std::string out;
  char buf[4096];
  while (out.size() < max) {
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::vector<std::string> split_nul(const std::string& s) {
  std::vector<std::string> v;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find('\0', i);
    if (j == std::string::npos) j = s.size();
    v.emplace_back(s, i, j - i);
    i = j + 1;
  }
  return v;
}

ExeFacts read_exe_facts(pid_t pid) {
  ExeFacts f;
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/exe", pid);
  struct stat st;
  if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) return f;
  f.id = FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                static_cast<int64_t>(st.st_ctim.tv_sec), static_cast<int64_t>(st.st_ctim.tv_nsec)};
  f.exe = read_link(pid, "exe");
  f.environ = read_proc_file(pid, "environ", 1 << 20);
  f.known = !f.exe.empty();
  return f;
}

std::string identity_of(const ProcessInfo& p) { return p.names.empty() ? std::string() : p.names.front(); }

ImageKey read_image_key(pid_t pid) {
  ImageKey k;
  char p[64];
  snprintf(p, sizeof p, "/proc/%d/exe", pid);
  struct stat st;
  if (stat(p, &st) == 0)
    k.exe = FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                   static_cast<int64_t>(st.st_ctim.tv_sec), static_cast<int64_t>(st.st_ctim.tv_nsec)};
  // startstack is the 28th field; the 2nd (comm) may hold spaces.
  std::string stat_text = read_proc_file(pid, "stat", 1024);
  size_t r = stat_text.rfind(')');
  if (r == std::string::npos) return k;
  const char* c = stat_text.c_str() + r + 2;  // field 3
  for (int field = 3; field < 28 && *c; ++field) {
    c = strchr(c, ' ');
    if (!c) return k;
    ++c;
  }
  k.stack = strtoull(c, nullptr, 10);
  return k;
}

bool leader_exited(pid_t pid) { return stat_says_exited(read_proc_file(pid, "stat", 1024)); }

bool stat_says_exited(const std::string& stat_text) {
  size_t r = stat_text.rfind(')');
  if (r == std::string::npos || r + 2 >= stat_text.size()) return true;  // gone
  char state = stat_text[r + 2];
  if (state == 'Z' || state == 'X') return true;
  // A leader in do_exit gives up its memory (and with it the image) well
  // before it turns zombie: PF_EXITING, set first, covers that stretch.
  constexpr unsigned long kPfExiting = 0x4;
  const char* c = stat_text.c_str() + r + 2;  // field 3, the state
  for (int field = 3; field < 9 && *c; ++field) {
    c = strchr(c, ' ');
    if (!c) return false;
    ++c;
  }
  return (strtoul(c, nullptr, 10) & kPfExiting) != 0;
}

ImageKey ProcessTable::identify(ProcessInfo& info, pid_t tgid) {
  info.names.clear();
  info.identity = {};
  if (!identities) {
    info.identity = {IdentityCheck::NotChecked, {}, "no policy was loaded"};
    return {};
  }
  // Looked at even when the policy trusts no file: the trail keeps what was
  // found, so that a replay under a policy that does can judge the image.
  ImageKey key = read_image_key(tgid);
  info.names = cb::identify(*identities, read_exe_facts(tgid), &info.identity);
  auto disqualify = [&](std::string why) {
    info.names.clear();
    info.identity.check = IdentityCheck::Disqualified;
    info.identity.why = std::move(why);
  };
  if (!info.names.empty() && check_code)
    if (std::string why = foreign_code_of(tgid, code_before_ns); !why.empty()) disqualify(std::move(why));
  // The image may have changed between the two reads: then trust nothing.
  if (!info.names.empty() && read_image_key(tgid) != key)
    disqualify("it started another program while it was being identified");
  return key;
}

std::shared_ptr<ProcessInfo> ProcessTable::read_info(pid_t tgid, ImageKey* key) {
  auto info = std::make_shared<ProcessInfo>();
  info->pid = tgid;
  std::string stat = read_proc_file(tgid, "stat", 1024);
  // comm is in parentheses and may itself contain ')' or spaces.
  size_t l = stat.find('('), r = stat.rfind(')');
  if (l == std::string::npos || r == std::string::npos) return nullptr;
  info->comm = stat.substr(l + 1, r - l - 1);
  int ppid = 0;
  sscanf(stat.c_str() + r + 1, " %*c %d", &ppid);
  info->ppid = ppid;
  info->exe = read_link(tgid, "exe");
  info->argv = split_nul(read_proc_file(tgid, "cmdline"));
  info->cwd = read_link(tgid, "cwd");
  std::string status = read_proc_file(tgid, "status", 8192);
  info->uid = static_cast<uint32_t>(strtoul(status_field(status, "Uid").c_str(), nullptr, 10));
  ImageKey k = identify(*info, tgid);
  if (key) *key = k;
  return info;
}

ProcessEntry* ProcessTable::create(pid_t tgid) {
  ImageKey key;
  auto info = read_info(tgid, &key);
  if (!info) return nullptr;
  ProcessEntry e;
  e.image = key;
  e.started_ns = realtime_ns();
  e.pidfd.reset(static_cast<int>(syscall(SYS_pidfd_open, tgid, 0)));
  if (!e.pidfd) return nullptr;  // gone already
  info->proc_id = next_id_++;
  // Ancestry: the parent's entry (created on demand) up to the session's init.
  if (info->ppid > 0 && info->ppid != root_pid_ && info->ppid != tgid) {
    if (ProcessEntry* parent = by_tgid(info->ppid)) {
      e.parent_proc_id = parent->info->proc_id;
      info->ancestors.reserve(parent->info->ancestors.size() + 1);
      info->ancestors.push_back(identity_of(*parent->info));
      info->ancestors.insert(info->ancestors.end(), parent->info->ancestors.begin(), parent->info->ancestors.end());
    }
  }
  parent_of_[info->proc_id] = e.parent_proc_id;
  e.info = std::move(info);
  int pfd = e.pidfd.get();
  auto [it, inserted] = procs_.emplace(tgid, std::move(e));
  if (watch && !exits_from_tracer) watch(pfd, tgid);
  if (on_new) on_new(it->second);
  return &it->second;
}

void ProcessTable::refresh(ProcessEntry& e, pid_t tgid) {
  if (leader_exited(tgid)) {
    // Nothing of it runs any more: what is read now would be recorded as
    // an exec of nothing, over the image it had.
    e.exec_pending = false;
    return;
  }
  ImageKey key;
  auto info = read_info(tgid, &key);
  if (!info) return;
  // It may have begun to exit after the first look.
  if (info->exe.empty() && leader_exited(tgid)) {
    e.exec_pending = false;
    return;
  }
  e.image = key;
  info->proc_id = e.info->proc_id;
  info->ancestors = e.info->ancestors;  // exec keeps the parent
  e.info = std::move(info);
  e.exec_pending = false;
  if (on_exec) on_exec(e);
}

ProcessEntry* ProcessTable::by_tgid(pid_t tgid) {
  auto it = procs_.find(tgid);
  if (it != procs_.end()) {
    ProcessEntry& e = it->second;
    // An identity holds for the image it was given to only: an exec not
    // yet reported (the tracer's record may still be on its way) ends it.
    if (e.exec_pending || (!e.info->names.empty() && read_image_key(tgid) != e.image)) refresh(e, tgid);
    return &e;
  }
  return create(tgid);
}

pid_t ProcessTable::tgid_of(pid_t tid) {
  if (procs_.count(tid)) return tid;
  if (auto it = tgid_of_.find(tid); it != tgid_of_.end()) return it->second;
  std::string status = read_proc_file(tid, "status", 8192);
  pid_t tgid = static_cast<pid_t>(atoi(status_field(status, "Tgid").c_str()));
  if (tgid <= 0) return -1;
  if (tgid != tid) tgid_of_[tid] = tgid;
  return tgid;
}

ProcessEntry* ProcessTable::lookup(pid_t tid) {
  pid_t tgid = tgid_of(tid);
  if (tgid <= 0) return nullptr;
  ProcessEntry* e = by_tgid(tgid);
  if (e && tgid != tid && tgid_of_.count(tid) &&
      std::find(e->threads.begin(), e->threads.end(), tid) == e->threads.end())
    e->threads.push_back(tid);
  return e;
}

void ProcessTable::mark_exec(pid_t tgid) {
  if (auto it = procs_.find(tgid); it != procs_.end()) {
    it->second.exec_pending = true;
    it->second.creds.clear();
    it->second.fs.clear();
    it->second.dirfds.clear();  // close-on-exec may have closed them
    // exec leaves a single thread whose tid is the tgid.
    for (pid_t t : it->second.threads) tgid_of_.erase(t);
    it->second.threads.clear();
  }
}

bool ProcessTable::exit_info(ProcessEntry& e, int* status, int* sig) {
  pidfd_info pi{};
  pi.mask = PIDFD_INFO_EXIT;
  if (ioctl(e.pidfd.get(), PIDFD_GET_INFO, &pi) != 0 || !(pi.mask & PIDFD_INFO_EXIT)) return false;
  if (WIFEXITED(pi.exit_code))
    *status = WEXITSTATUS(pi.exit_code);
  else if (WIFSIGNALED(pi.exit_code))
    *sig = WTERMSIG(pi.exit_code);
  return true;
}

void ProcessTable::exited(pid_t tgid) {
  auto it = procs_.find(tgid);
  if (it == procs_.end()) return;
  if (unwatch) unwatch(it->second.pidfd.get());
  for (pid_t t : it->second.threads) tgid_of_.erase(t);
  int status = -1, sig = 0;
  if (exit_info(it->second, &status, &sig)) {
    if (on_exit) on_exit(it->second, status, sig);
  } else {
    zombies_.push_back({std::move(it->second), realtime_ns()});
  }
  // A new process may get this pid now: it gets a new entry.
  procs_.erase(it);
}

bool ProcessTable::poll_exits(bool force) {
  int64_t t = realtime_ns();
  for (auto it = zombies_.begin(); it != zombies_.end();) {
    int status = -1, sig = 0;
    bool got = exit_info(it->entry, &status, &sig);
    if (got || force || t - it->since_ns > 2000000000) {
      if (on_exit) on_exit(it->entry, status, sig);
      it = zombies_.erase(it);
    } else {
      ++it;
    }
  }
  return !zombies_.empty();
}

const Creds& ProcessTable::creds(pid_t tid) {
  ProcessEntry* e = lookup(tid);
  if (!e) return unknown_creds_;
  Creds& c = e->creds[tid];
  if (c.valid) return c;
  std::string st = read_proc_file(tid, "status", 8192);
  unsigned r, eff, s, fs;
  if (sscanf(status_field(st, "Uid").c_str(), "%u %u %u %u", &r, &eff, &s, &fs) == 4) c.fsuid = fs;
  if (sscanf(status_field(st, "Gid").c_str(), "%u %u %u %u", &r, &eff, &s, &fs) == 4) c.fsgid = fs;
  c.groups.clear();
  std::string g = status_field(st, "Groups");
  for (char* p = g.data(); *p;) {
    char* end;
    unsigned long v = strtoul(p, &end, 10);
    if (end == p) break;
    c.groups.push_back(static_cast<gid_t>(v));
    p = end;
  }
  c.umask = umask_in(st).value_or(0);
  c.valid = !st.empty();
  return c;
}

std::optional<mode_t> ProcessTable::umask_of(pid_t tid) { return umask_in(read_proc_file(tid, "status", 8192)); }

void ProcessTable::invalidate_creds(pid_t tgid) {
  if (auto it = procs_.find(tgid); it != procs_.end()) it->second.creds.clear();
}

ProcessEntry* ProcessTable::known(pid_t tgid) {
  auto it = procs_.find(tgid);
  return it == procs_.end() ? nullptr : &it->second;
}

void ProcessTable::fork_record(pid_t parent, pid_t child, int64_t ts_ns) {
  if (child <= 0) return;
  ProcessEntry* pe = parent > 0 && parent != root_pid_ ? known(parent) : nullptr;
  if (ProcessEntry* ce = known(child)) {
    // Seen first through a notification: only the parent link was missing.
    if (!ce->parent_proc_id && pe) {
      ce->parent_proc_id = pe->info->proc_id;
      parent_of_[ce->info->proc_id] = ce->parent_proc_id;
    }
    return;
  }
  // A fork copies the parent's image: no need to read /proc (the child may
  // already have exec'd or exited by now).
  auto info = std::make_shared<ProcessInfo>();
  ImageKey key;
  if (pe) {
    *info = *pe->info;
    info->ancestors.insert(info->ancestors.begin(), identity_of(*pe->info));
    key = pe->image;
  } else if (auto fresh = read_info(child, &key)) {
    info = fresh;
  }
  info->pid = child;
  info->ppid = parent;
  info->proc_id = next_id_++;
  ProcessEntry e;
  e.image = key;
  e.started_ns = ts_ns;
  e.parent_proc_id = pe ? pe->info->proc_id : 0;
  e.pidfd.reset(static_cast<int>(syscall(SYS_pidfd_open, child, 0)));
  parent_of_[info->proc_id] = e.parent_proc_id;
  e.info = std::move(info);
  auto [it, inserted] = procs_.emplace(child, std::move(e));
  if (on_new) on_new(it->second);
}

void ProcessTable::exec_record(pid_t pid, const std::string& exe, const std::vector<std::string>& argv,
                               const std::string& comm, int64_t ts_ns) {
  ProcessEntry* e = known(pid);
  if (!e) {
    e = create(pid);
    if (!e) return;
  }
  auto info = std::make_shared<ProcessInfo>(*e->info);
  info->exe = exe;
  info->argv = argv;
  if (!comm.empty()) {
    info->comm = comm;
  } else {
    std::string base = exe.substr(exe.rfind('/') + 1);
    info->comm = base.substr(0, 15);
  }
  e->image = identify(*info, pid);
  e->info = std::move(info);
  e->exec_pending = false;
  e->creds.clear();
  e->fs.clear();
  e->dirfds.clear();
  for (pid_t t : e->threads) tgid_of_.erase(t);
  e->threads.clear();
  (void)ts_ns;
  if (on_exec) on_exec(*e);
}

void ProcessTable::exit_record(pid_t pid, int status, int signal, int64_t ts_ns) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) return;
  (void)ts_ns;
  for (pid_t t : it->second.threads) tgid_of_.erase(t);
  if (on_exit) on_exit(it->second, status, signal);
  procs_.erase(it);
}

void ProcessTable::cwd_record(pid_t pid, const std::string& cwd) {
  ProcessEntry* e = known(pid);
  if (!e || cwd.empty()) return;
  auto info = std::make_shared<ProcessInfo>(*e->info);
  info->cwd = cwd;
  e->info = std::move(info);
}

std::vector<pid_t> ProcessTable::pids() const {
  std::vector<pid_t> out;
  out.reserve(procs_.size());
  for (const auto& [tgid, e] : procs_) out.push_back(tgid);
  return out;
}

void ProcessTable::invalidate_all_fs() {
  for (auto& [tgid, e] : procs_) e.fs.clear();
}

void ProcessTable::invalidate_fs(pid_t tgid) {
  if (auto it = procs_.find(tgid); it != procs_.end()) it->second.fs.clear();
}

uint64_t ProcessTable::tree_of(uint64_t proc_id) const {
  for (int depth = 0; proc_id && depth < 4096; ++depth) {
    auto it = parent_of_.find(proc_id);
    if (it == parent_of_.end() || it->second == 0) return proc_id;  // the first process
    auto up = parent_of_.find(it->second);
    if (up == parent_of_.end() || up->second == 0) return proc_id;  // a child of it
    proc_id = it->second;
  }
  return proc_id;
}

uint32_t ProcessTable::tree_deletes(uint64_t proc_id) const {
  auto it = tree_deletes_.find(tree_of(proc_id));
  return it == tree_deletes_.end() ? 0 : it->second;
}

void ProcessTable::count_deletes(uint64_t proc_id, uint32_t tree, uint32_t session) {
  session_deletes_ += session;
  if (tree) tree_deletes_[tree_of(proc_id)] += tree;
}

bool ProcessTable::in_tree(uint64_t proc_id, uint64_t ancestor) const {
  for (int depth = 0; proc_id && depth < 4096; ++depth) {
    if (proc_id == ancestor) return true;
    auto it = parent_of_.find(proc_id);
    if (it == parent_of_.end()) return false;
    proc_id = it->second;
  }
  return false;
}

}  // namespace cb
