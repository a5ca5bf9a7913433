#include "supervisor/trace_merge.h"

#include <sys/syscall.h>

#include <climits>
#include <cstdlib>

#include "base/paths.h"
#include "net/name_map.h"
#include "trace/trace_events.h"

namespace cb {
namespace {

// A recorded path resolved now, for attribution: /proc/self made the
// process's own, everything but the last component through symlinks and
// magic links (the session's mounts are copies of ours: same names).
std::string canonical_path(const TraceRecord& r, const std::string& path, const std::string& cwd) {
  std::string p = path;
  auto swap_prefix = [&](const std::string& from, const std::string& to) {
    if (p.rfind(from, 0) == 0) p = to + p.substr(from.size());
  };
  // The process may be gone by now: its cwd as the tracer followed it.
  if (!cwd.empty()) {
    swap_prefix("/proc/self/cwd/", cwd + "/");
    swap_prefix("/proc/thread-self/cwd/", cwd + "/");
    swap_prefix("/proc/" + std::to_string(r.pid) + "/cwd/", cwd + "/");
  }
  swap_prefix("/proc/self/", "/proc/" + std::to_string(r.pid) + "/");
  swap_prefix("/proc/thread-self/", "/proc/" + std::to_string(r.pid) + "/task/" + std::to_string(r.tid) + "/");
  size_t slash = p.rfind('/');
  if (slash == std::string::npos || slash == 0) return p;
  char buf[PATH_MAX];
  if (!realpath(p.substr(0, slash).c_str(), buf)) return p;
  std::string dir(buf);
  return (dir == "/" ? "" : dir) + p.substr(slash);
}

}  // namespace

const StaticDenial* mounted_for(const std::vector<StaticDenial>& mounts, const std::string& path) {
  for (const auto& m : mounts)
    if (path_within(path, m.root)) return &m;
  return nullptr;
}

TraceMerge::TraceMerge(const SupervisorOptions& opts, ProcessTable& procs, Recorder& rec, const TaintTracker& taint)
    : opts_(opts), procs_(procs), rec_(rec), taint_(taint) {}

void TraceMerge::await_result(pid_t tid, int nr, EventRow row) { pending_[{tid, nr}] = std::move(row); }

void TraceMerge::flush_awaited() {
  for (auto& [key, row] : pending_) rec_.emit(std::move(row));
  pending_.clear();
}

void TraceMerge::on_record(const TraceRecord& r) {
  switch (r.kind) {
    case TraceKind::Fork: procs_.fork_record(r.pid, r.child_pid, r.ts_ns); return;
    case TraceKind::Exit: procs_.exit_record(r.pid, r.exit_code, r.exit_signal, r.ts_ns); return;
    case TraceKind::Exec:
      procs_.exec_record(r.pid, r.path, r.argv, r.comm, r.ts_ns);
      if (opts_.execs_notified) return;  // the supervisor recorded it as it happened
      break;
    case TraceKind::Syscall:
    case TraceKind::IoUring: break;
  }
  if (r.kind == TraceKind::Syscall && (r.syscall_nr == SYS_chdir || r.syscall_nr == SYS_fchdir)) {
    if (r.ret == 0) procs_.cwd_record(r.pid, r.path);
    return;
  }
  if (r.kind == TraceKind::Syscall) {
    // A syscall the supervisor let continue: its row gets the result.
    auto it = pending_.find({r.tid, r.syscall_nr});
    if (it != pending_.end()) {
      it->second.result_errno = r.ret < 0 ? static_cast<int32_t>(-r.ret) : 0;
      rec_.emit(std::move(it->second));
      pending_.erase(it);
      return;
    }
  }
  auto ev = event_of(r);
  if (!ev) return;
  ProcessEntry* pe = procs_.known(r.pid);
  if (pe) {
    ev->proc = pe->info;
    taint_.fill(*ev, pe->info->proc_id);
    if (ev->action == Action::FileDelete && r.ret == 0) ev->proc_deletes = ++pe->deletes;
  } else {
    auto info = std::make_shared<ProcessInfo>();
    info->pid = r.pid;
    info->comm = r.comm;
    info->uid = r.uid;
    ev->proc = std::move(info);
  }
  net::fill_net_object(*ev, opts_.names);
  EventRow row;
  row.seq = rec_.next_seq();
  row.ev = std::move(*ev);
  row.verdict = decide(*opts_.policy, row.ev);
  row.enforced = !opts_.observe;
  int err = r.ret < 0 ? static_cast<int>(-r.ret) : 0;
  row.result_errno = err;
  const StaticDenial* m = mounted_for(opts_.mount_denials, row.ev.path);
  if (!m && !row.ev.target.empty()) m = mounted_for(opts_.mount_denials, row.ev.target);
  if (err && !m && refused_by_read_only_mount(row.ev.action, err) && row.verdict.decision != Decision::Deny) {
    // The tracer keeps paths as they were passed: one through a symlink
    // or /proc/self names the protected file only once resolved.
    std::string c = canonical_path(r, row.ev.path, row.ev.proc ? row.ev.proc->cwd : std::string());
    if (c != row.ev.path) {
      row.ev.aliases.push_back(row.ev.path);
      row.ev.path = c;
      row.verdict = decide(*opts_.policy, row.ev);
      m = mounted_for(opts_.mount_denials, c);
    }
  }
  if (err && refused_by_read_only_mount(row.ev.action, err) && (m || row.verdict.decision == Decision::Deny)) {
    // Refused by a read-only mount: a denial by the rule behind it.
    row.layer = Layer::Mount;
    row.allowed = false;
    if (m && row.verdict.decision != Decision::Deny)
      row.verdict = Verdict{Decision::Deny, m->rule_id, m->message, false};
    ++denials_;
  } else {
    row.layer = Layer::None;
    bool would_allow = row.verdict.decision == Decision::Allow || row.verdict.decision == Decision::Log;
    row.allowed = opts_.observe ? would_allow : true;
    if (!opts_.observe && !would_allow && err == 0 && !gap_reported_) {
      // Something a rule refuses happened without being intercepted.
      gap_reported_ = true;
      rec_.degraded("rule " + row.verdict.rule_id + " refuses " + std::string(action_name(row.ev.action)) + " " +
                    row.ev.path + ", which happened without reaching the supervisor");
    }
  }
  rec_.emit(std::move(row));
}

}  // namespace cb
