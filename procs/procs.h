// The session's processes as the supervisor knows them.
//
// Built lazily from /proc when a process first asks for a decision (and, with
// the eBPF tracer, from its fork/exec/exit records), cached until it execs or
// exits: ancestry and executable cannot change under a live process image,
// so the hot path reads nothing from /proc for a known process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/fd.h"
#include "policy/event.h"
#include "policy/identity.h"
#include "procs/fs_cache.h"

namespace cb {

struct Creds {
  uid_t fsuid = 0;
  gid_t fsgid = 0;
  std::vector<gid_t> groups;
  // As read with the rest; umask(2) is not notified (nearly every program
  // calls it), so a create carried out here reads it afresh (umask_of).
  mode_t umask = 022;
  bool valid = false;
};

// One process image: its executable and where exec put its stack (random
// per exec).  A process keeps its identity only while its image is the one
// identified: a forked child of git that execs something else must not
// act as git before the exec is seen.
struct ImageKey {
  FileId exe;
  uint64_t stack = 0;
  bool operator==(const ImageKey&) const = default;
};
ImageKey read_image_key(pid_t pid);
// Whether the process's leader has exited or is exiting (a zombie, being
// reaped, or in do_exit): its image can no longer be read, which is no sign
// of an exec.
bool leader_exited(pid_t pid);
// The same, from the text of /proc/PID/stat.
bool stat_says_exited(const std::string& stat_text);

struct ProcessEntry {
  std::shared_ptr<const ProcessInfo> info;
  ImageKey image;             // of the image info->names were given to
  UniqueFd pidfd;             // readable when the process exits
  bool exec_pending = false;  // an exec was let through: refresh on next use
  uint32_t deletes = 0;       // file.delete events so far (rules can test proc.deletes)
  uint64_t parent_proc_id = 0;
  int64_t started_ns = 0;
  std::vector<pid_t> threads;                 // other tids seen, for cleanup at exit
  std::unordered_map<pid_t, Creds> creds;     // by tid
  std::unordered_map<pid_t, FsCache> fs;      // by tid: root and cwd
  std::unordered_map<int, DirfdName> dirfds;  // by fd number
};

class ProcessTable {
 public:
  // `root_pid`: the session's init; its ancestry is where chains stop.
  explicit ProcessTable(pid_t root_pid) : root_pid_(root_pid) {}

  // Called for every new process entry (to record it) and for every exit.
  std::function<void(const ProcessEntry&)> on_new;
  std::function<void(const ProcessEntry&, int status, int signal)> on_exit;
  std::function<void(const ProcessEntry&)> on_exec;
  // The policy's trusted executables: each process image's identity
  // (ProcessInfo::names) is looked up here.  Null: no process has one.
  const Identities* identities = nullptr;
  // An identity holds only while the process's code is files that were
  // there, unchanged, before this time (procs/code.h); 0: not checked.
  int64_t code_before_ns = 0;
  bool check_code = true;

  // Registers pidfds for exit notification (the supervisor's epoll).
  std::function<void(int pidfd, pid_t tgid)> watch;
  std::function<void(int pidfd)> unwatch;

  // The process behind thread `tid`; null when it is already gone.
  ProcessEntry* lookup(pid_t tid);
  ProcessEntry* by_tgid(pid_t tgid);
  pid_t tgid_of(pid_t tid);

  void mark_exec(pid_t tgid);

  // From the eBPF tracer: the whole tree, including processes that never
  // asked for a decision.  Pids are in the supervisor's namespace.
  void fork_record(pid_t parent, pid_t child, int64_t ts_ns);
  void exec_record(pid_t pid, const std::string& exe, const std::vector<std::string>& argv, const std::string& comm,
                   int64_t ts_ns);
  void exit_record(pid_t pid, int status, int signal, int64_t ts_ns);
  void cwd_record(pid_t pid, const std::string& cwd);
  // An existing entry only (never reads /proc: the process may be gone).
  ProcessEntry* known(pid_t tgid);
  // With the tracer reporting exits, pidfds are not watched for them.
  bool exits_from_tracer = false;
  // The pidfd of `tgid` became readable.
  void exited(pid_t tgid);
  // Exit statuses become readable through a pidfd only once the process is
  // reaped: exits seen earlier are retried here.  `force` reports the rest
  // as unknown.  Returns true while some are still waiting.
  bool poll_exits(bool force);

  // Credentials of a thread for carrying out its operations (cached).
  const Creds& creds(pid_t tid);
  // The thread's umask now (/proc/<tid>/status), if it can be read.
  static std::optional<mode_t> umask_of(pid_t tid);
  void invalidate_creds(pid_t tgid);
  // A thread of `tgid` changed directory or root: every thread sharing its
  // fs may have too.
  void invalidate_fs(pid_t tgid);

  // Deletions per command tree (a child of the session's first process with
  // everything below it; the first process is a tree of its own): all of
  // them, like proc.deletes; and in the whole session, those the policy
  // guards (policy/counts.h).
  uint64_t tree_of(uint64_t proc_id) const;
  uint32_t tree_deletes(uint64_t proc_id) const;
  uint32_t session_deletes() const { return session_deletes_; }
  void count_deletes(uint64_t proc_id, uint32_t tree, uint32_t session);

  // True when `proc_id` is `ancestor` or descends from it.
  bool in_tree(uint64_t proc_id, uint64_t ancestor) const;
  // The parent's proc_id (kept after exits); 0 for the first process or
  // one not known.
  uint64_t parent_of(uint64_t proc_id) const {
    auto it = parent_of_.find(proc_id);
    return it == parent_of_.end() ? 0 : it->second;
  }

  size_t size() const { return procs_.size(); }
  std::vector<pid_t> pids() const;
  // A pivot_root moved the root and cwd of every process of a namespace.
  void invalidate_all_fs();
  uint64_t next_proc_id() const { return next_id_; }

 private:
  ProcessEntry* create(pid_t tgid);
  void refresh(ProcessEntry& e, pid_t tgid);
  std::shared_ptr<ProcessInfo> read_info(pid_t tgid, ImageKey* key);
  ImageKey identify(ProcessInfo& info, pid_t tgid);

  pid_t root_pid_;
  uint64_t next_id_ = 1;
  std::unordered_map<pid_t, ProcessEntry> procs_;  // by tgid
  std::unordered_map<pid_t, pid_t> tgid_of_;       // tid -> tgid, for threads
  Creds unknown_creds_;
  std::unordered_map<uint64_t, uint64_t> parent_of_;     // proc_id -> parent proc_id, kept after exit
  std::unordered_map<uint64_t, uint32_t> tree_deletes_;  // by tree_of()
  uint32_t session_deletes_ = 0;
  struct Zombie {
    ProcessEntry entry;
    int64_t since_ns;
  };
  std::vector<Zombie> zombies_;
  bool exit_info(ProcessEntry& e, int* status, int* sig);
};

// /proc readers shared with the eBPF side.
std::string read_proc_file(pid_t pid, const char* name, size_t max = 65536);
std::vector<std::string> split_nul(const std::string& s);
// What identify() needs of a process image, read from /proc: the file the
// kernel runs (stat of /proc/PID/exe, which follows the kernel's own
// reference, not a path) and the environment it was started with.
ExeFacts read_exe_facts(pid_t pid);
// The identity an ancestor list records for `p`: its first name, or "".
std::string identity_of(const ProcessInfo& p);

}  // namespace cb
