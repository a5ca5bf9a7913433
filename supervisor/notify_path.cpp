#include "supervisor/notify_path.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "base/paths.h"
#include "notify/carry.h"
#include "policy/counts.h"
#include "policy/explain.h"
#include "policy/expr.h"
#include "procs/creds.h"
#include "proto/explain_json.h"
#include "record/summary.h"
#include "syscalls/names.h"
#include "syscalls/table.h"
#include "trace/ebpf.h"

namespace cb {
namespace {

int severity(Decision d) {
  switch (d) {
    case Decision::Deny: return 3;
    case Decision::Ask: return 2;
    case Decision::Log: return 1;
    case Decision::Allow: return 0;
  }
  return 0;
}

bool may_write(uint64_t open_flags) {
  return (open_flags & O_ACCMODE) != O_RDONLY || (open_flags & (O_TRUNC | O_CREAT));
}

bool traced(int nr) {
  const Syscall* row = find_syscall(nr);
  return row && row->traced;
}

}  // namespace

NotifyPath::NotifyPath(const SupervisorOptions& opts, pid_t init_pid, Listener& listener, ProcessTable& procs,
                       Recorder& rec, TraceMerge& trace, TaintTracker& taint, SessionOutcome& outcome)
    : opts_(opts),
      init_pid_(init_pid),
      listener_(listener),
      procs_(procs),
      rec_(rec),
      trace_(trace),
      taint_(taint),
      outcome_(outcome),
      req_(listener.alloc_req()),
      host_view_(opts.mount_denials),
      workers_(listener),
      asks_(
          opts.asker, opts.ask_timeout, realtime_ns,
          [this](uint64_t proc_id, uint64_t ancestor) { return procs_.in_tree(proc_id, ancestor); },
          [this](Pending& p, bool allow, const ApprovalRow& a) { resolve_asked(p, allow, a); }),
      keep_(opts.keeper, opts.started_ns),
      mounts_(init_pid, [this] { return procs_.pids(); }) {
  // Finding a unix socket's server reads /proc: done only for a policy
  // that asks who it is.
  for (const auto& r : opts.policy->rules)
    if (r.when)
      for (const auto& f : expr_fields(*r.when))
        if (f == "net.server" && !unix_servers_)
          unix_servers_ = std::make_unique<UnixServers>(init_pid, [this] { return procs_.pids(); });
}

struct Judgement {
  Verdict verdict;
  size_t facet = 0;
};

// What one facet of a notified call is, as the policy and the trail see it.
Event facet_event(const Call& call, const Classified& c, const Facet& f, const ProcessEntry* pe,
                  const net::NameMap* names) {
  Event ev;
  ev.action = f.action;
  ev.path = f.path;
  ev.target = f.target;
  ev.aliases = f.aliases;
  ev.is_dir = f.is_dir;
  ev.breaks_layer = f.breaks_layer;
  ev.target_pid = f.target_pid;
  ev.flags = c.flags;
  ev.pid = pe ? pe->info->pid : call.tid;
  ev.tid = call.tid;
  ev.syscall_nr = call.nr;
  ev.syscall = std::string(syscall_name(call.nr));
  ev.source = Source::Seccomp;
  ev.proc = pe ? pe->info : nullptr;
  // The names this session resolved to the address, known before the
  // answer left the resolver: so before this call could be made.
  net::fill_net_object(ev, names);
  ev.net.servers = f.servers;
  return ev;
}

Event NotifyPath::event_of(const Call& call, const Classified& c, const Facet& f, const ProcessEntry* pe) const {
  Event ev = facet_event(call, c, f, pe, opts_.names);
  if (pe) taint_.fill(ev, pe->info->proc_id);
  return ev;
}

NotifyPath::Judgement NotifyPath::judge(const Classified& c, ProcessEntry* pe, const Call& call) {
  Judgement j;
  int worst = -1;
  for (size_t i = 0; i < c.facets.size(); ++i) {
    const Facet& f = c.facets[i];
    Event ev = event_of(call, c, f, pe);
    bool del = f.action == Action::FileDelete;
    ev.proc_deletes = pe ? pe->deletes + del : 0;
    ev.tree_deletes = pe ? procs_.tree_deletes(pe->info->proc_id) + del : 0;
    ev.session_deletes = procs_.session_deletes() + del;
    Verdict v = decide(*opts_.policy, ev);
    // Counts follow the data (policy/counts.h).
    bool prepared = false, guarded = false;
    if (auto d = prepared_delete(*opts_.policy, ev)) {
      Verdict dv = decide(*opts_.policy, *d);
      if (severity(dv.decision) > severity(v.decision)) {
        dv.message += dv.message.empty() ? "" : " ";
        dv.message += "(a rename out of where deleting is guarded counts as the deletion)";
        v = std::move(dv);
      }
      prepared = true;
    } else if (del && pe) {
      guarded = guarded_delete(*opts_.policy, ev, ev.path, ev.is_dir);
    }
    if (pe && (v.decision == Decision::Allow || v.decision == Decision::Log)) {
      j.tree_counted += del || prepared;
      j.session_counted += guarded || prepared;
    }
    if (v.keep && i < 32) j.keep |= uint32_t{1} << i;
    int s = severity(v.decision);
    if (s > worst) {
      worst = s;
      j.verdict = std::move(v);
      j.facet = i;
    }
  }
  return j;
}

EventRow NotifyPath::make_row(const Call& call, const Classified& c, ProcessEntry* pe, const Judgement& j) {
  EventRow row;
  row.seq = rec_.next_seq();
  row.ev = event_of(call, c, c.facets[0], pe);
  for (size_t i = 1; i < c.facets.size(); ++i) {
    const Facet& f = c.facets[i];
    row.facets.push_back(FacetRow{f.action, f.path, f.target, f.aliases, f.is_dir, f.target_pid});
  }
  row.ev.ts_ns = realtime_ns();
  row.ev.proc_deletes = pe ? pe->deletes : 0;
  row.verdict = j.verdict;
  if (j.facet != 0 && !j.verdict.rule_id.empty()) {
    // Say which part of the syscall the rule was about.
    const Facet& d = c.facets[j.facet];
    std::string why = std::string(action_name(d.action)) + " " + d.path;
    row.verdict.message = row.verdict.message.empty() ? why : row.verdict.message + " (" + why + ")";
  }
  row.enforced = !opts_.observe;
  row.layer = Layer::Notify;
  return row;
}

void NotifyPath::on_notification() {
  if (!listener_.receive(req_)) return;
  ++outcome_.notifications;
  Call call;
  call.id = req_->id;
  call.tid = static_cast<pid_t>(req_->pid);
  call.nr = req_->data.nr;
  memcpy(call.args, req_->data.args, sizeof call.args);
  if (req_->data.arch != AUDIT_ARCH_X86_64) {  // the filter kills foreign arches; belt and braces
    listener_.respond_error(call.id, ENOSYS);
    return;
  }
  if (may_redirect_names(call.nr)) writable_dirs_.forget();
  // The short way needs nothing of a known process but its cwd and root,
  // which no record in the ring changes: it goes first, and the caller
  // does not wait for the records to be applied.
  ProcessEntry* known = procs_.known(call.tid);
  if (known && carried_by_kernel(call, known)) return;
  // The tracer has recorded everything the caller did before this call
  // (an exec is recorded before the new image runs): applied first, the
  // process table names the argv that is asking, not its parent's.
  // Consuming an empty ring costs two loads.
  if (opts_.tracer) (void)opts_.tracer->drain([this](const TraceRecord& r) { trace_.on_record(r); });
  ProcessEntry* pe = procs_.lookup(call.tid);
  if (!known && carried_by_kernel(call, pe)) return;
  PathContext ctx = context_for(call, pe);
  ClassifyEnv env;
  env.devices = &opts_.protected_devices;
  env.links = opts_.links;
  env.self_pid = self_pid_;
  env.target_pidfd = pe ? pe->pidfd.get() : -1;
  env.session_pids = [this] { return procs_.pids(); };
  env.unix_servers = unix_servers_.get();
  // Whatever the arguments said was read above and below: from here on
  // the data is only trusted if the target is still the one that asked.
  Creds creds = procs_.creds(call.tid);
  Classified c;
  {
    // Resolution runs with the target's credentials too: a root supervisor
    // must not search directories the target could not.
    CredScope as_target(creds);
    c = classify(call, ctx, env);
  }
  if (!listener_.id_valid(call.id)) return;  // the target is gone, or its pid was reused

  if (c.creds_changed) {
    procs_.invalidate_creds(pe ? pe->info->pid : call.tid);
    listener_.respond_continue(call.id);
    return;
  }
  if (c.fs_changed || c.shares_fs) {
    // Dropped before the kernel changes it, so no later call can use
    // the old one.
    procs_.invalidate_fs(pe ? pe->info->pid : call.tid);
    if (c.shares_fs) fs_shared_ = true;
    listener_.respond_continue(call.id);
    return;
  }
  if (c.facets.empty()) {
    if (c.op.kind == OpKind::Continue)
      listener_.respond_continue(call.id);
    else if (c.op.kind == OpKind::Reply)
      listener_.respond_value(call.id, c.op.value);
    else if (c.op.kind == OpKind::Send)
      send_unjudged(call, c.op, creds);
    else
      listener_.respond_error(call.id, c.op.err ? c.op.err : EPERM);
    return;
  }
  // A path through another mount of a protected tree is that tree: the
  // rules see its protected name as well.
  for (Facet& f : c.facets)
    for (const auto& [alias, tree] : opts_.mount_aliases)
      if (path_within(f.path, alias)) f.aliases.push_back(tree + f.path.substr(alias.size()));
  Judgement j = judge(c, pe, call);
  c.keep = j.keep;
  for (const Facet& f : c.facets)
    if (f.action == Action::FileDelete && pe) ++pe->deletes;
  if (pe) procs_.count_deletes(pe->info->proc_id, j.tree_counted, j.session_counted);
  EventRow row = make_row(call, c, pe, j);

  Decision d = j.verdict.decision;
  if (d == Decision::Ask && !opts_.observe) {
    if (auto g = asks_.grant_for(pe ? pe->info->proc_id : 0, c.facets[j.facet].action)) {
      d = *g ? Decision::Allow : Decision::Deny;
      row.verdict.message += row.verdict.message.empty() ? "answered earlier for this process tree"
                                                         : " (answered earlier for this process tree)";
    } else {
      park(Pending{call, std::move(c), std::move(row)}, pe);
      return;
    }
  }
  bool allow = opts_.observe || d == Decision::Allow || d == Decision::Log;
  finish(call, c, row, allow, pe, creds);
}

// Resolution facts for the calling thread: its process's caches, unless
// some process shares its fs (then cwd and root are read afresh).
PathContext NotifyPath::context_for(const Call& call, ProcessEntry* pe) {
  PathContext ctx = pe && !fs_shared_ ? PathContext(call.tid, pe->info->pid, &pe->fs[call.tid], &pe->dirfds, name_gen_,
                                                    pe->pidfd.get())
                                      : PathContext(call.tid, pe ? pe->info->pid : call.tid);
  ctx.set_mounts(&mounts_);
  return ctx;
}

// The short way (carry.h): a create outside every read-only tree, or a
// link, where the plan leaves every refusal of them to the mounts.  The
// tracer records it with the kernel's result, or without the tracer this
// writes the row the long way would; nothing here would differ from what
// the long way decides, records or does.
bool NotifyPath::carried_by_kernel(const Call& call, ProcessEntry* pe) {
  if (opts_.observe || !opts_.mount_aliases.empty()) return false;
  CarryShape s = carry_shape(call.nr, call.args);
  if (!short_way_allowed(opts_.kernel_carried, s)) return false;
  if (kernel_fs_mounted_ && s.check_final) return false;  // an open that may write an existing file
  // With the tracer, its record of the call (with the kernel's result) is
  // the row.  Without it the row is written here, from what the look saw,
  // like the long way's rows of calls the kernel carries out: for creates
  // relative to the cwd or the root, whose paths are known here.
  bool recorded = opts_.tracer && traced(call.nr);
  if (!recorded &&
      (opts_.tracer || s.kind != CarryShape::Create || call.nr == __NR_symlink || call.nr == __NR_symlinkat))
    return false;
  std::optional<EventRow> row;
  if (s.kind == CarryShape::Create) {
    if (!pe || fs_shared_) return false;
    auto path = TargetMemory::read_string(call.tid, s.path, PATH_MAX);
    if (!path || path->empty()) return false;
    PathContext ctx = context_for(call, pe);
    mode_t final_mode = 0;
    if (s.dirfd != AT_FDCWD && (*path)[0] != '/') {
      if (!recorded) return false;
      // Relative to a directory the target holds open (cp, find, tar -C):
      // that very directory, looked at here.
      auto dir = ctx.dirfd(s.dirfd);
      if (!dir || !WritableDirs::new_name_outside_read_only_at(dir->get(), *path, s.check_final)) return false;
    } else if (!writable_dirs_.new_name_outside_read_only(ctx, *path, s.check_final, &final_mode)) {
      return false;
    }
    if (!recorded) {
      row = short_way_row(call, pe, ctx, s, *path, final_mode);
      if (!row) return false;
    }
  }
  ++outcome_.kernel_carried;
  listener_.respond_continue(call.id);
  if (row) rec_.emit(std::move(*row));
  return true;
}

// The row of a create the kernel carries out, without the tracer: the
// facet the long way would judge (an existing file opened is written or
// truncated, not made), at the path the look followed, judged and
// written as the long way does.  None when the policy says anything but
// allow or log: then the long way judges it.
std::optional<EventRow> NotifyPath::short_way_row(const Call& call, ProcessEntry* pe, PathContext& ctx,
                                                  const CarryShape& s, const std::string& path, mode_t final_mode) {
  bool absolute = path[0] == '/';
  auto base = absolute ? ctx.root_path() : ctx.cwd_path();
  if (!base || base->empty() || (absolute && *base != "/")) return std::nullopt;
  bool open = call.nr == __NR_open || call.nr == __NR_openat || call.nr == __NR_creat;
  int acc = static_cast<int>(s.flags & O_ACCMODE);
  bool write = acc == O_WRONLY || acc == O_RDWR;
  Facet f;
  if (!open || !final_mode)
    f.action = Action::FileCreate;
  else if (write && (s.flags & O_TRUNC) && S_ISREG(final_mode))
    f.action = Action::FileTruncate;
  else if (write)
    f.action = Action::FileWrite;
  else
    f.action = Action::FileRead;
  f.path = absolute ? join_path("/", path) : join_path(*base, path);
  f.is_dir = !open;
  Classified c;
  c.flags = s.flags;
  c.facets.push_back(std::move(f));
  Judgement j = judge(c, pe, call);
  if (j.verdict.decision != Decision::Allow && j.verdict.decision != Decision::Log) return std::nullopt;
  if (j.keep && keep_.on()) return std::nullopt;  // only the long way keeps
  EventRow row = make_row(call, c, pe, j);
  row.allowed = true;
  row.result_errno = -1;  // the kernel's, after this answer
  return row;
}

// A hard link the session makes is another name of its source from now
// on: a write through it is judged, and kept, under the source's name too
// (a protected file linked into /tmp and truncated there).  Noted before
// the link exists, so that no write through it can come first; a link that
// then fails leaves a name the inode had anyway.
void NotifyPath::note_link(const Classified& c) {
  if (!opts_.links || c.op.kind != OpKind::Link || c.facets.empty() || c.facets[0].target.empty()) return;
  struct stat st {};
  int rc = c.op.obj ? fstat(c.op.obj.get(), &st) : fstatat(c.op.dir.get(), c.op.name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  if (rc != 0 || !S_ISREG(st.st_mode)) return;
  opts_.links->add(inode_key(st.st_dev, st.st_ino), c.facets[0].target);
}

// Carries out or refuses, answers, records.
void NotifyPath::finish(const Call& call, Classified& c, EventRow& row, bool allow, ProcessEntry* pe,
                        const Creds& creds) {
  if (allow && c.kernel_fs_mount && opts_.root) kernel_fs_mounted_ = true;
  if (allow && c.mounts_changed) {
    // Forgotten before the kernel runs it: mount ids may come to mean other
    // mounts, and a pivot_root or a new namespace moves roots and cwds.
    mounts_.forget_foreign();
    procs_.invalidate_all_fs();
  }
  row.allowed =
      opts_.observe ? (row.verdict.decision == Decision::Allow || row.verdict.decision == Decision::Log) : allow;
  if (!allow) {
    ++outcome_.denials;
    row.result_errno = c.deny_errno;
    rec_.refusing(row);
    listener_.respond_error(call.id, c.deny_errno);
    rec_.emit(row);
    return;
  }
  // While the caller waits: what it reads taints what it holds open for
  // writing before it can hand the data on and exit.
  if (taint_.active()) taint_.on_row(row);
  if (c.io_uring)
    rec_.degraded("io_uring allowed by rule " + row.verdict.rule_id +
                  ": its operations do not pass through the supervisor");
  if (c.exec && pe) procs_.mark_exec(pe->info->pid);
  note_link(c);
  if (keep_.on() && c.keep && !opts_.observe) {
    // Before the call goes ahead, on the objects it will act on; what
    // could not be kept is said in the row, never silently.
    std::string why = keep_.before(c, pe ? pe->info->proc_id : 0, row.seq, row.ev.ts_ns, creds);
    if (!why.empty()) {
      ++outcome_.not_kept;
      std::string m = "not kept for undo: " + why;
      row.verdict.message = row.verdict.message.empty() ? m : row.verdict.message + " (" + m + ")";
    }
  }
  if (kernel_carries(call, c)) {
    c.op = Operation{};
    c.op.kind = OpKind::Continue;
  }
  host_view_.redirect(c);
  // What is created here takes the thread's umask as it is now: umask(2)
  // does not reach the supervisor.
  const Creds* use = &creds;
  Creds as_now;
  if (c.op.needs_umask && c.op.kind != OpKind::Continue)
    if (auto m = ProcessTable::umask_of(call.tid)) {
      as_now = creds;
      as_now.umask = *m;
      use = &as_now;
    }
  if (c.op.blocking && c.op.kind != OpKind::Connect) {
    workers_.run(call, std::move(c.op), *use, std::move(row));
    return;
  }
  Outcome out = execute(c.op, call, *use, listener_);
  if (out.would_block) {  // a send that must wait for room, a connect that must wait
    workers_.run(call, std::move(c.op), *use, std::move(row));
    return;
  }
  row.result_errno = out.ret < 0 ? static_cast<int32_t>(-out.ret) : 0;
  if (c.op.kind == OpKind::Continue && opts_.tracer && traced(call.nr)) {
    // The kernel runs it after us: the tracer's record of it brings the
    // result, and this row is written once, with it.
    row.result_errno = -1;
    trace_.await_result(call.tid, call.nr, std::move(row));
    return;
  }
  // A directory moved: every cached name below it may be stale.
  if (c.op.kind == OpKind::Rename && out.ret == 0 &&
      (c.facets[0].is_dir || (c.facets.size() > 1 && c.facets[1].action == Action::FileRename && c.facets[1].is_dir)))
    ++name_gen_;
  if (row.ev.action == Action::SysMount && pe) procs_.invalidate_fs(pe->info->pid);
  if (c.op.kind == OpKind::Continue) row.result_errno = -1;  // the kernel's result, seen by the tracer
  rec_.emit(row);
}

// A send with nothing to judge (every message goes to the socket's
// connected peer) is carried out all the same: the messages as they were
// read, so that no thread can give one a name after the look.  Nothing was
// decided, so nothing is recorded.
void NotifyPath::send_unjudged(const Call& call, Operation& op, const Creds& creds) {
  Outcome out = execute(op, call, creds, listener_);
  if (out.would_block) workers_.run(call, std::move(op), creds, std::nullopt);
}

// The filter kills a process that makes a syscall through another ABI
// (int 0x80, x32): the kernel leaves no other trace of that denial.
void NotifyPath::foreign_abi_denied(const ProcessEntry& e, int64_t ts) {
  EventRow row;
  row.seq = rec_.next_seq();
  row.ev.ts_ns = ts;
  row.ev.pid = e.info->pid;
  row.ev.tid = e.info->pid;
  row.ev.action = Action::SysKernel;
  row.ev.syscall = "foreign ABI";
  row.ev.path = "int 0x80 / x32";
  row.ev.source = Source::Seccomp;
  row.ev.proc = e.info;
  row.verdict = Verdict{Decision::Deny, "cottonbox:native-abi",
                        "a syscall through another ABI (int 0x80, x32) would bypass every rule: the filter "
                        "kills the process",
                        true};
  row.allowed = false;
  row.enforced = true;
  row.layer = Layer::Filter;
  row.result_errno = -1;
  ++outcome_.denials;
  rec_.emit(row);
}

// Whether the kernel may run an allowed call itself: every refusal of its
// actions is the mount layer's (Plan::kernel_carried), so whatever path
// the kernel resolves, nothing protected is reached through this check's
// absence.  Calls that land inside a read-only tree stay here (they are
// carried out through the supervisor's own view), and so does
// open_by_handle_at, which reaches a file past every mount.
bool NotifyPath::kernel_carries(const Call& call, const Classified& c) const {
  if (c.kernel_opens && c.op.kind == OpKind::Open) return true;
  if (!opts_.kernel_carried || call.nr == __NR_open_by_handle_at) return false;
  if (kernel_fs_mounted_ && c.op.kind == OpKind::Open && may_write(c.op.flags)) return false;
  if (c.keep && keep_.on()) return false;  // kept on the objects the supervisor acts on
  switch (c.op.kind) {
    case OpKind::Open:
    case OpKind::Unlink:
    case OpKind::Link:
    case OpKind::Symlink:
    case OpKind::Mkdir:
    case OpKind::Truncate:
    case OpKind::Chmod:
    case OpKind::Chown:
    case OpKind::Utimens:
    case OpKind::SetXattr:
    case OpKind::RemoveXattr:
    case OpKind::IoctlFlags:
    case OpKind::FdTruncate:
    case OpKind::FdFallocate: break;
    default: return false;
  }
  for (const Facet& f : c.facets) {
    if (!(opts_.kernel_carried & bit(f.action)) || !f.aliases.empty() || host_view_.names_mounted(f)) return false;
  }
  return true;
}

std::vector<ChainLink> NotifyPath::chain_of(ProcessEntry* pe) {
  std::vector<ChainLink> chain;
  pid_t pid = pe ? pe->info->pid : 0;
  for (int depth = 0; pid > 0 && pid != init_pid_ && depth < 32; ++depth) {
    ProcessEntry* e = procs_.by_tgid(pid);
    if (!e) break;
    chain.push_back({e->info->pid, e->info->comm, e->info->argv});
    pid = e->info->ppid;
  }
  return chain;
}

void NotifyPath::park(Pending p, ProcessEntry* pe) {
  AskRequest r;
  r.session = opts_.session;
  r.session_name = opts_.session_name;
  r.chain = chain_of(pe);
  r.summary = summarize(event_of(p.call, p.cls, p.cls.facets[0], pe), 1);
  explain_ask(p, pe, r);
  asks_.park(std::move(p), pe ? pe->info->proc_id : 0, std::move(r));
}

// The explanation of the part of the call that asked (asks are rare: the
// explained decision's cost is no concern here).
void NotifyPath::explain_ask(const Pending& p, ProcessEntry* pe, AskRequest& r) {
  // Each part saw the count before the call's deletions, plus its own
  // (judge()); the row keeps the count after them.
  uint32_t deletions = 0;
  for (const Facet& f : p.cls.facets) deletions += f.action == Action::FileDelete;
  uint32_t before = p.row.ev.proc_deletes >= deletions ? p.row.ev.proc_deletes - deletions : 0;
  for (const Facet& f : p.cls.facets) {
    Event ev = event_of(p.call, p.cls, f, pe);
    ev.proc_deletes = pe ? before + (f.action == Action::FileDelete ? 1 : 0) : 0;
    ev.tree_deletes = pe ? procs_.tree_deletes(pe->info->proc_id) + (f.action == Action::FileDelete) : 0;
    ev.session_deletes = procs_.session_deletes() + (f.action == Action::FileDelete);
    if (auto d = prepared_delete(*opts_.policy, ev)) ev = std::move(*d);
    Explanation x = explain(*opts_.policy, ev);
    if (x.verdict.decision != p.row.verdict.decision || x.verdict.rule_id != p.row.verdict.rule_id) continue;
    std::string layer = x.verdict.builtin ? "builtin" : "notify";
    proto::Sources sources = proto::sources_of(*opts_.policy);
    r.why = proto::explanation_json(x, sources, layer);
    r.why_text = proto::explanation_text(x, sources, layer);
    return;
  }
}

void NotifyPath::resolve_asked(Pending& p, bool allow, const ApprovalRow& a) {
  ProcessEntry* pe = procs_.lookup(p.call.tid);
  if (!listener_.id_valid(p.call.id)) {
    // The asker gave up (killed, interrupted): record, nothing to answer.
    p.row.allowed = false;
    p.row.result_errno = EINTR;
    rec_.emit(p.row);
  } else {
    Creds creds = procs_.creds(p.call.tid);
    finish(p.call, p.cls, p.row, allow, pe, creds);
  }
  rec_.approval(a);
}

void NotifyPath::drain_done() {
  for (auto& r : workers_.take_done()) rec_.emit(std::move(r));
}

void NotifyPath::end() {
  workers_.stop();
  drain_done();
  // Asks still open belong to processes that are gone.
  asks_.abandon([this](Pending& p) {
    p.row.allowed = false;
    p.row.result_errno = ESRCH;
    rec_.emit(p.row);
  });
}

}  // namespace cb
