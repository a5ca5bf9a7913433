#include "tracer/supervisor.h"
#include "tracer/paths.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "audit/explain_json.h"
#include "policy/explain.h"
#include "tracer/carry.h"
#include "tracer/creds.h"
#include "tracer/ebpf.h"
#include "tracer/notify.h"
#include "tracer/ops.h"
#include "tracer/procs.h"
#include "tracer/syscalls.h"
#include "tracer/trace_events.h"

namespace cb {
namespace {

// epoll tags: the low bits say what kind of fd woke us.
enum Tag : uint64_t { kSignal = 1, kCtl, kInit, kAnswers, kTimer, kDone, kTrace, kProcBase = 1ull << 32 };

// Records reach the reader in batches: draining at least this often keeps
// the trail and the process table close behind the session.
constexpr int kTraceDrainMs = 50;
// Records applied per turn of the loop, so that a notification arriving
// meanwhile waits for a few of them, not for the whole ring.
constexpr size_t kTraceBatch = 32;

int severity(Decision d) {
  switch (d) {
    case Decision::Deny: return 3;
    case Decision::Ask: return 2;
    case Decision::Log: return 1;
    case Decision::Allow: return 0;
  }
  return 0;
}

std::string dirname_of(const std::string& p) {
  size_t i = p.rfind('/');
  if (i == std::string::npos) return ".";
  return i == 0 ? "/" : p.substr(0, i);
}

// "delete 1 file", "rename directory src/ to /tmp/x"
std::string summarize(const Facet& f, uint32_t count) {
  auto n = [&](const char* one, const char* many) {
    return count > 1 ? std::to_string(count) + " " + many : std::string("1 ") + one;
  };
  switch (f.action) {
    case Action::FileDelete:
      return "delete " + n(f.is_dir ? "directory" : "file", "files") +
             (count > 1 ? " under " + dirname_of(f.path) : "");
    case Action::FileRename:
      return std::string("rename ") + (f.is_dir ? "directory " : "") + f.path + (f.is_dir ? "/" : "") + " to " +
             f.target;
    case Action::FileTruncate: return "truncate " + n("file", "files");
    case Action::FileWrite: return "write " + n("file", "files");
    case Action::FileCreate: return "create " + n(f.is_dir ? "directory" : "file", "files");
    case Action::FileLink: return "link " + f.path + " to " + f.target;
    case Action::FileAttr: return "change attributes of " + n("file", "files");
    case Action::FileRead: return "read " + n("file", "files");
    case Action::ProcExec: return "run " + f.path;
    case Action::ProcSignal: return "signal process " + std::to_string(f.target_pid);
    case Action::ProcTrace: return "trace process " + std::to_string(f.target_pid);
    case Action::NetConnect: return "connect to " + f.path;
    case Action::NetBind: return "listen on " + f.path;
    case Action::SysMount: return "mount " + f.path;
    case Action::SysNamespace: return "create namespaces (" + f.path + ")";
    case Action::SysIoUring: return "use io_uring";
    case Action::SysKernel: return "use " + f.path;
    case Action::Count: break;
  }
  return std::string(action_name(f.action));
}

struct Pending {
  Call call;
  Classified cls;
  db::EventRow row;
};

// One ask on screen, and every similar request folded into it.
struct Parked {
  uint64_t ask_id = 0;
  std::vector<Pending> requests;
  std::string fold_key;
  int64_t deadline_ns = 0;
  uint64_t proc_id = 0;
  ActionMask action = 0;
  int64_t asked_ns = 0;
};

struct Grant {
  uint64_t tree_root = 0;  // proc_id
  ActionMask actions = 0;
  bool allow = false;
};

}  // namespace

struct Supervisor::Impl {
  SupervisorOptions opts;
  Launched launched;
  Listener listener;
  ProcessTable procs;
  std::vector<Sink*> sinks;
  std::vector<std::string> degraded;

  UniqueFd ep, sigfd, answers_fd, timer_fd;
  uint64_t name_gen = 0;       // bumped whenever a directory is renamed
  WritableDirs writable_dirs;  // for creates the kernel may carry out (carry.h)
  bool fs_shared = false;      // some process shares its fs_struct: no root/cwd caching
  seccomp_notif* req = nullptr;
  uint64_t seq = 0;
  SessionOutcome outcome;
  bool init_done = false;
  bool command_exited = false;
  int exec_errno = 0;
  pid_t self_pid = getpid();
  int interrupts = 0;

  // Asks.
  uint64_t next_ask = 1;
  std::map<uint64_t, Parked> parked;
  std::vector<Grant> grants;
  std::mutex answers_mu;
  std::deque<std::tuple<uint64_t, AskAnswer, std::string, std::string>> answers;

  Impl(SupervisorOptions o, Launched l, std::vector<Sink*> s)
      : opts(std::move(o)),
        launched(std::move(l)),
        listener(std::move(launched.listener)),
        procs(launched.init_pid),
        sinks(std::move(s)) {}

  void add_degraded(const std::string& why) {
    if (std::find(degraded.begin(), degraded.end(), why) != degraded.end()) return;
    degraded.push_back(why);
    for (auto* s : sinks) s->degraded(why);
  }

  void watch(int fd, uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev);
  }

  // ---------------------------------------------------------------- setup --

  bool setup() {
    ep.reset(epoll_create1(EPOLL_CLOEXEC));
    // This thread's umask and cwd become its own, so emulated creations can
    // take the target's umask without touching other threads.
    unshare(CLONE_FS);
    req = listener.alloc_req();
    if (!listener.set_sync_wakeup()) add_degraded("no SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: slower notifications");
    if (!launched.killable_recv)
      add_degraded("no SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: a signal can interrupt a decided syscall");
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    sigfd.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    answers_fd.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    timer_fd.reset(timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK));
    // The listener is not in the epoll set: see run().
    watch(sigfd.get(), kSignal);
    watch(launched.ctl.get(), kCtl);
    watch(launched.init_pidfd.get(), kInit);
    watch(answers_fd.get(), kAnswers);
    watch(timer_fd.get(), kTimer);
    watch(done_fd.get(), kDone);
    if (opts.tracer) {
      watch(opts.tracer->poll_fd(), kTrace);
      procs.exits_from_tracer = true;
    }

    procs.watch = [this](int fd, pid_t tgid) { watch(fd, kProcBase | static_cast<uint32_t>(tgid)); };
    procs.unwatch = [this](int fd) { epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd, nullptr); };
    procs.on_new = [this](const ProcessEntry& e) {
      db::ProcessRow r;
      r.proc_id = e.info->proc_id;
      r.parent_proc_id = e.parent_proc_id;
      r.pid = e.info->pid;
      r.ppid = e.info->ppid;
      r.uid = e.info->uid;
      r.comm = e.info->comm;
      r.exe = e.info->exe;
      r.argv = e.info->argv;
      r.cwd = e.info->cwd;
      r.started_ns = e.started_ns;
      for (auto* s : sinks) s->process(r);
    };
    procs.on_exec = [this](const ProcessEntry& e) {
      db::ProcessExec x{e.info->proc_id, realtime_ns(), e.info->comm, e.info->exe, e.info->argv};
      for (auto* s : sinks) s->process_exec(x);
    };
    procs.on_exit = [this](const ProcessEntry& e, int status, int sig) {
      db::ProcessExit x{e.info->proc_id, realtime_ns(), status, sig};
      for (auto* s : sinks) s->process_exit(x);
      if (sig == SIGSYS) foreign_abi_denied(e, x.ended_ns);
    };
    if (opts.asker) {
      opts.asker->answer = [this](uint64_t id, AskAnswer a, const std::string& by, const std::string& rule) {
        {
          std::lock_guard<std::mutex> g(answers_mu);
          answers.emplace_back(id, a, by, rule);
        }
        uint64_t one = 1;
        (void)!write(answers_fd.get(), &one, sizeof one);
      };
    }
    return true;
  }

  // ------------------------------------------------------------ decisions --

  struct Judgement {
    Verdict verdict;
    size_t facet = 0;
  };

  // What one facet of a notified call is, as the policy and the trail see it.
  static Event facet_event(const Call& call, const Classified& c, const Facet& f, const ProcessEntry* pe) {
    Event ev;
    ev.action = f.action;
    ev.path = f.path;
    ev.target = f.target;
    ev.aliases = f.aliases;
    ev.is_dir = f.is_dir;
    ev.target_pid = f.target_pid;
    ev.flags = c.flags;
    ev.pid = pe ? pe->info->pid : call.tid;
    ev.tid = call.tid;
    ev.syscall_nr = call.nr;
    ev.syscall = std::string(syscall_name(call.nr));
    ev.source = Source::Seccomp;
    ev.proc = pe ? pe->info : nullptr;
    return ev;
  }

  Judgement judge(const Classified& c, ProcessEntry* pe, const Call& call) {
    Judgement j;
    int worst = -1;
    for (size_t i = 0; i < c.facets.size(); ++i) {
      const Facet& f = c.facets[i];
      Event ev = facet_event(call, c, f, pe);
      ev.proc_deletes = pe ? pe->deletes + (f.action == Action::FileDelete ? 1 : 0) : 0;
      Verdict v = decide(*opts.policy, ev);
      int s = severity(v.decision);
      if (s > worst) {
        worst = s;
        j.verdict = std::move(v);
        j.facet = i;
      }
    }
    return j;
  }

  db::EventRow make_row(const Call& call, const Classified& c, ProcessEntry* pe, const Judgement& j) {
    db::EventRow row;
    row.seq = ++seq;
    row.ev = facet_event(call, c, c.facets[0], pe);
    for (size_t i = 1; i < c.facets.size(); ++i) {
      const Facet& f = c.facets[i];
      row.facets.push_back(db::FacetRow{f.action, f.path, f.target, f.aliases, f.is_dir, f.target_pid});
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
    row.enforced = !opts.observe;
    row.layer = Layer::Notify;
    return row;
  }

  void emit(const db::EventRow& row) {
    for (auto* s : sinks) s->event(row);
  }
  // The first sink (the store) takes the row itself, after the others.
  void emit(db::EventRow&& row) {
    if (sinks.empty()) return;
    for (size_t i = 1; i < sinks.size(); ++i) sinks[i]->event(static_cast<const db::EventRow&>(row));
    sinks[0]->event(std::move(row));
  }

  // ------------------------------------------------------- notifications --

  void on_notification() {
    if (!listener.receive(req)) return;
    ++outcome.notifications;
    Call call;
    call.id = req->id;
    call.tid = static_cast<pid_t>(req->pid);
    call.nr = req->data.nr;
    memcpy(call.args, req->data.args, sizeof call.args);
    if (req->data.arch != AUDIT_ARCH_X86_64) {  // the filter kills foreign arches; belt and braces
      listener.respond_error(call.id, ENOSYS);
      return;
    }
    if (may_redirect_names(call.nr)) writable_dirs.forget();
    // The short way needs nothing of a known process but its cwd and root,
    // which no record in the ring changes: it goes first, and the caller
    // does not wait for the records to be applied.
    ProcessEntry* known = procs.known(call.tid);
    if (known && carried_by_kernel(call, known)) return;
    // The tracer has recorded everything the caller did before this call
    // (an exec is recorded before the new image runs): applied first, the
    // process table names the argv that is asking, not its parent's.
    // Consuming an empty ring costs two loads.
    if (opts.tracer) (void)opts.tracer->drain([this](const TraceRecord& r) { on_trace(r); });
    ProcessEntry* pe = procs.lookup(call.tid);
    if (!known && carried_by_kernel(call, pe)) return;
    PathContext ctx = context_for(call, pe);
    ClassifyEnv env;
    env.devices = &opts.protected_devices;
    env.links = opts.links;
    env.self_pid = self_pid;
    env.target_pidfd = pe ? pe->pidfd.get() : -1;
    // Whatever the arguments said was read above and below: from here on
    // the data is only trusted if the target is still the one that asked.
    Creds creds = procs.creds(call.tid);
    Classified c;
    {
      // Resolution runs with the target's credentials too: a root supervisor
      // must not search directories the target could not.
      CredScope as_target(creds);
      c = classify(call, ctx, env);
    }
    if (!listener.id_valid(call.id)) return;  // the target is gone, or its pid was reused

    if (c.creds_changed) {
      procs.invalidate_creds(pe ? pe->info->pid : call.tid);
      listener.respond_continue(call.id);
      return;
    }
    if (c.fs_changed || c.shares_fs) {
      // Dropped before the kernel changes it, so no later call can use
      // the old one.
      procs.invalidate_fs(pe ? pe->info->pid : call.tid);
      if (c.shares_fs) fs_shared = true;
      listener.respond_continue(call.id);
      return;
    }
    if (c.facets.empty()) {
      if (c.op.kind == OpKind::Continue)
        listener.respond_continue(call.id);
      else if (c.op.kind == OpKind::Reply)
        listener.respond_value(call.id, c.op.value);
      else
        listener.respond_error(call.id, c.op.err ? c.op.err : EPERM);
      return;
    }
    // A path through another mount of a protected tree is that tree: the
    // rules see its protected name as well.
    for (Facet& f : c.facets)
      for (const auto& [alias, tree] : opts.mount_aliases)
        if (path_within(f.path, alias)) f.aliases.push_back(tree + f.path.substr(alias.size()));
    Judgement j = judge(c, pe, call);
    for (const Facet& f : c.facets)
      if (f.action == Action::FileDelete && pe) ++pe->deletes;
    db::EventRow row = make_row(call, c, pe, j);

    Decision d = j.verdict.decision;
    if (d == Decision::Ask && !opts.observe) {
      if (auto g = grant_for(pe, c.facets[j.facet].action)) {
        d = *g ? Decision::Allow : Decision::Deny;
        row.verdict.message += row.verdict.message.empty() ? "answered earlier for this process tree"
                                                           : " (answered earlier for this process tree)";
      } else {
        park(Pending{call, std::move(c), std::move(row)}, pe);
        return;
      }
    }
    bool allow = opts.observe || d == Decision::Allow || d == Decision::Log;
    finish(call, c, row, allow, pe, creds);
  }

  // Resolution facts for the calling thread: its process's caches, unless
  // some process shares its fs (then cwd and root are read afresh).
  PathContext context_for(const Call& call, ProcessEntry* pe) {
    if (pe && !fs_shared)
      return PathContext(call.tid, pe->info->pid, &pe->fs[call.tid], &pe->dirfds, name_gen, pe->pidfd.get());
    return PathContext(call.tid, pe ? pe->info->pid : call.tid);
  }

  // The short way (carry.h): a create outside every read-only tree, or a
  // link, where the plan leaves every refusal of them to the mounts.  The
  // tracer records it with the kernel's result, or without the tracer this
  // writes the row the long way would; nothing here would differ from what
  // the long way decides, records or does.
  bool carried_by_kernel(const Call& call, ProcessEntry* pe) {
    if (opts.observe || !opts.mount_aliases.empty()) return false;
    CarryShape s = carry_shape(call.nr, call.args);
    if (!short_way_allowed(opts.kernel_carried, s)) return false;
    // With the tracer, its record of the call (with the kernel's result) is
    // the row.  Without it the row is written here, from what the look saw,
    // like the long way's rows of calls the kernel carries out: for creates
    // relative to the cwd or the root, whose paths are known here.
    bool recorded = opts.tracer && traced(call.nr);
    if (!recorded &&
        (opts.tracer || s.kind != CarryShape::Create || call.nr == __NR_symlink || call.nr == __NR_symlinkat))
      return false;
    std::optional<db::EventRow> row;
    if (s.kind == CarryShape::Create) {
      if (!pe || fs_shared) return false;
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
      } else if (!writable_dirs.new_name_outside_read_only(ctx, *path, s.check_final, &final_mode)) {
        return false;
      }
      if (!recorded) {
        row = short_way_row(call, pe, ctx, s, *path, final_mode);
        if (!row) return false;
      }
    }
    ++outcome.kernel_carried;
    listener.respond_continue(call.id);
    if (row) emit(std::move(*row));
    return true;
  }

  // The row of a create the kernel carries out, without the tracer: the
  // facet the long way would judge (an existing file opened is written or
  // truncated, not made), at the path the look followed, judged and
  // written as the long way does.  None when the policy says anything but
  // allow or log: then the long way judges it.
  std::optional<db::EventRow> short_way_row(const Call& call, ProcessEntry* pe, PathContext& ctx, const CarryShape& s,
                                            const std::string& path, mode_t final_mode) {
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
    db::EventRow row = make_row(call, c, pe, j);
    row.allowed = true;
    row.result_errno = -1;  // the kernel's, after this answer
    return row;
  }

  // Carries out or refuses, answers, records.
  void finish(const Call& call, Classified& c, db::EventRow& row, bool allow, ProcessEntry* pe, const Creds& creds) {
    row.allowed =
        opts.observe ? (row.verdict.decision == Decision::Allow || row.verdict.decision == Decision::Log) : allow;
    if (!allow) {
      ++outcome.denials;
      listener.respond_error(call.id, c.deny_errno);
      row.result_errno = c.deny_errno;
      emit(row);
      return;
    }
    if (c.io_uring)
      add_degraded("io_uring allowed by rule " + row.verdict.rule_id +
                   ": its operations do not pass through the supervisor");
    if (c.exec && pe) procs.mark_exec(pe->info->pid);
    if (kernel_carries(call, c)) {
      c.op = Operation{};
      c.op.kind = OpKind::Continue;
    }
    redirect_to_host_view(c);
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
    if (c.op.blocking) {
      run_in_worker(call, std::move(c.op), *use, std::move(row));
      return;
    }
    Outcome out = execute(c.op, call, *use, listener);
    row.result_errno = out.ret < 0 ? static_cast<int32_t>(-out.ret) : 0;
    if (c.op.kind == OpKind::Continue && opts.tracer && traced(call.nr)) {
      // The kernel runs it after us: the tracer's record of it brings the
      // result, and this row is written once, with it.
      row.result_errno = -1;
      pending_continue[{call.tid, call.nr}] = std::move(row);
      return;
    }
    // A directory moved: every cached name below it may be stale.
    if (c.op.kind == OpKind::Rename && out.ret == 0 &&
        (c.facets[0].is_dir || (c.facets.size() > 1 && c.facets[1].action == Action::FileRename && c.facets[1].is_dir)))
      ++name_gen;
    if (row.ev.action == Action::SysMount && pe) procs.invalidate_fs(pe->info->pid);
    if (c.op.kind == OpKind::Continue) row.result_errno = -1;  // the kernel's result, seen by the tracer
    emit(row);
  }

  // The filter kills a process that makes a syscall through another ABI
  // (int 0x80, x32): the kernel leaves no other trace of that denial.
  void foreign_abi_denied(const ProcessEntry& e, int64_t ts) {
    db::EventRow row;
    row.seq = ++seq;
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
    ++outcome.denials;
    emit(row);
  }

  // ------------------------------------------------------------ tracer --

  struct PairHash {
    size_t operator()(const std::pair<pid_t, int>& p) const {
      return std::hash<uint64_t>()((uint64_t(p.first) << 16) ^ p.second);
    }
  };
  std::unordered_map<std::pair<pid_t, int>, db::EventRow, PairHash> pending_continue;
  int64_t last_drain_ns = 0;
  bool trace_backlog = false;  // the last drain stopped at its budget
  uint64_t reported_lost = 0;
  bool gap_reported = false;

  static bool traced(int nr) { return find_traced_syscall(nr) != nullptr; }

  const StaticDenial* mounted_for(const std::string& path) const {
    for (const auto& m : opts.mount_denials)
      if (path_within(path, m.root)) return &m;
    return nullptr;
  }

  // A recorded path resolved now, for attribution: /proc/self made the
  // process's own, everything but the last component through symlinks and
  // magic links (the session's mounts are copies of ours: same names).
  static std::string canonical_path(const TraceRecord& r, const std::string& path, const std::string& cwd) {
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

  void drain_trace(bool ready, size_t budget = kTraceBatch) {
    int64_t t = realtime_ns();
    if (!ready && !trace_backlog && t - last_drain_ns < int64_t(kTraceDrainMs) * 1000000) return;
    last_drain_ns = t;
    auto n = opts.tracer->drain([this](const TraceRecord& r) { on_trace(r); }, budget);
    // A full slice: more may wait, and the tracer wakes the reader only
    // every few thousand records, so the loop goes on draining (between
    // notifications) instead of waiting for the next timeout.
    trace_backlog = n.ok() && *n >= budget;
    uint64_t lost = opts.tracer->lost();
    if (lost != reported_lost) {
      reported_lost = lost;
      for (auto* s : sinks) s->events_lost(lost);
    }
  }

  void on_trace(const TraceRecord& r) {
    switch (r.kind) {
      case TraceKind::Fork: procs.fork_record(r.pid, r.child_pid, r.ts_ns); return;
      case TraceKind::Exit: procs.exit_record(r.pid, r.exit_code, r.exit_signal, r.ts_ns); return;
      case TraceKind::Exec:
        procs.exec_record(r.pid, r.path, r.argv, r.comm, r.ts_ns);
        if (opts.execs_notified) return;  // the supervisor recorded it as it happened
        break;
      case TraceKind::Syscall:
      case TraceKind::IoUring: break;
    }
    if (r.kind == TraceKind::Syscall && (r.syscall_nr == SYS_chdir || r.syscall_nr == SYS_fchdir)) {
      if (r.ret == 0) procs.cwd_record(r.pid, r.path);
      return;
    }
    if (r.kind == TraceKind::Syscall) {
      // A syscall the supervisor let continue: its row gets the result.
      auto it = pending_continue.find({r.tid, r.syscall_nr});
      if (it != pending_continue.end()) {
        it->second.result_errno = r.ret < 0 ? static_cast<int32_t>(-r.ret) : 0;
        emit(std::move(it->second));
        pending_continue.erase(it);
        return;
      }
    }
    auto ev = event_of(r);
    if (!ev) return;
    ProcessEntry* pe = procs.known(r.pid);
    if (pe) {
      ev->proc = pe->info;
      if (ev->action == Action::FileDelete && r.ret == 0) ev->proc_deletes = ++pe->deletes;
    } else {
      auto info = std::make_shared<ProcessInfo>();
      info->pid = r.pid;
      info->comm = r.comm;
      info->uid = r.uid;
      ev->proc = std::move(info);
    }
    db::EventRow row;
    row.seq = ++seq;
    row.ev = std::move(*ev);
    row.verdict = decide(*opts.policy, row.ev);
    row.enforced = !opts.observe;
    int err = r.ret < 0 ? static_cast<int>(-r.ret) : 0;
    row.result_errno = err;
    const StaticDenial* m = mounted_for(row.ev.path);
    if (!m && !row.ev.target.empty()) m = mounted_for(row.ev.target);
    if (err && !m && refused_by_read_only_mount(row.ev.action, err) && row.verdict.decision != Decision::Deny) {
      // The tracer keeps paths as they were passed: one through a symlink
      // or /proc/self names the protected file only once resolved.
      std::string c = canonical_path(r, row.ev.path, row.ev.proc ? row.ev.proc->cwd : std::string());
      if (c != row.ev.path) {
        row.ev.aliases.push_back(row.ev.path);
        row.ev.path = c;
        row.verdict = decide(*opts.policy, row.ev);
        m = mounted_for(c);
      }
    }
    if (err && refused_by_read_only_mount(row.ev.action, err) && (m || row.verdict.decision == Decision::Deny)) {
      // Refused by a read-only mount: a denial by the rule behind it.
      row.layer = Layer::Mount;
      row.allowed = false;
      if (m && row.verdict.decision != Decision::Deny)
        row.verdict = Verdict{Decision::Deny, m->rule_id, m->message, false};
      ++outcome.denials;
    } else {
      row.layer = Layer::None;
      bool would_allow = row.verdict.decision == Decision::Allow || row.verdict.decision == Decision::Log;
      row.allowed = opts.observe ? would_allow : true;
      if (!opts.observe && !would_allow && err == 0 && !gap_reported) {
        // Something a rule refuses happened without being intercepted.
        gap_reported = true;
        add_degraded("rule " + row.verdict.rule_id + " refuses " + std::string(action_name(row.ev.action)) + " " +
                     row.ev.path + ", which happened without reaching the supervisor");
      }
    }
    emit(std::move(row));
  }

  // Operations that may block run on their own thread; their rows come back
  // to this loop (the sinks are fed from one thread).
  std::atomic<int> workers{0};
  std::atomic<bool> stopping{false};
  std::mutex done_mu;
  std::vector<db::EventRow> done_rows;
  UniqueFd done_fd{eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};

  void run_in_worker(const Call& call, Operation op, Creds creds, db::EventRow row) {
    ++workers;
    std::thread([this, call, op = std::move(op), creds = std::move(creds), row = std::move(row)]() mutable {
      Outcome out =
          execute_blocking(op, call, creds, listener, [&] { return !stopping && listener.id_valid(call.id); });
      row.result_errno = out.ret < 0 ? static_cast<int32_t>(-out.ret) : 0;
      {
        std::lock_guard<std::mutex> g(done_mu);
        done_rows.push_back(std::move(row));
      }
      uint64_t one = 1;
      (void)!write(done_fd.get(), &one, sizeof one);
      --workers;
    }).detach();
  }

  void drain_done() {
    uint64_t n;
    (void)!read(done_fd.get(), &n, sizeof n);
    std::vector<db::EventRow> rows;
    {
      std::lock_guard<std::mutex> g(done_mu);
      rows.swap(done_rows);
    }
    for (auto& r : rows) emit(std::move(r));
  }

  // An allowed operation inside a tree the mount layer made read-only (say,
  // creating a file where only deleting and overwriting are denied) would
  // fail with EROFS in the session's view: it is carried out in the
  // supervisor's own view of the very same directories instead (checked by
  // device and inode, so a path that now leads elsewhere is refused).
  bool under_mounted(const std::string& path) const { return mounted_for(path) != nullptr; }
  // A facet whose path or target lies in a read-only tree.
  bool names_mounted(const Facet& f) const {
    return under_mounted(f.path) || (!f.target.empty() && under_mounted(f.target));
  }

  // Whether the kernel may run an allowed call itself: every refusal of its
  // actions is the mount layer's (Plan::kernel_carried), so whatever path
  // the kernel resolves, nothing protected is reached through this check's
  // absence.  Calls that land inside a read-only tree stay here (they are
  // carried out through the supervisor's own view), and so does
  // open_by_handle_at, which reaches a file past every mount.
  bool kernel_carries(const Call& call, const Classified& c) const {
    if (!opts.kernel_carried || call.nr == __NR_open_by_handle_at) return false;
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
      if (!(opts.kernel_carried & bit(f.action)) || !f.aliases.empty() || names_mounted(f)) return false;
    }
    return true;
  }

  static bool reopen_here(UniqueFd& fd) {
    struct stat a, b;
    if (!fd || fstat(fd.get(), &a)) return false;
    std::string path = fd_path(fd.get());
    if (path.empty() || path[0] != '/') return false;
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd here(static_cast<int>(syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
    if (!here || fstat(here.get(), &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) return false;
    fd = std::move(here);
    return true;
  }

  void redirect_to_host_view(Classified& c) {
    Operation& op = c.op;
    // Not for renames and links: across the mount's boundary the kernel
    // answers EXDEV, and that is right (mv then copies), because a
    // directory or file moved in keeps the handles opened on it outside,
    // which would write past the read-only mount.
    if (opts.mount_denials.empty() || op.obj || op.kind == OpKind::Rename || op.kind == OpKind::Link) return;
    // Only what makes a new name: anything else inside a read-only tree is
    // what the tree's rule refuses, and stays refused by the mount too.
    bool creates = op.kind == OpKind::Mkdir || op.kind == OpKind::Symlink || op.kind == OpKind::Mknod ||
                   (op.kind == OpKind::Open && !c.facets.empty() && c.facets[0].action == Action::FileCreate);
    if (!creates) return;
    // The checked names first (no system call): a call they place outside
    // every read-only tree is left as it is; were they wrong, the mount
    // would refuse it, which fails closed.
    if (std::none_of(c.facets.begin(), c.facets.end(), [&](const Facet& f) { return names_mounted(f); })) return;
    bool touches =
        (op.dir && under_mounted(fd_path(op.dir.get()))) || (op.dir2 && under_mounted(fd_path(op.dir2.get())));
    if (!touches) return;
    // Both ends move together, or a rename/link would cross mounts (EXDEV).
    UniqueFd d1(op.dir ? fcntl(op.dir.get(), F_DUPFD_CLOEXEC, 0) : -1);
    UniqueFd d2(op.dir2 ? fcntl(op.dir2.get(), F_DUPFD_CLOEXEC, 0) : -1);
    if ((d1 && !reopen_here(d1)) || (d2 && !reopen_here(d2))) return;
    if (d1) op.dir = std::move(d1);
    if (d2) op.dir2 = std::move(d2);
  }

  // ----------------------------------------------------------------- asks --

  std::optional<bool> grant_for(ProcessEntry* pe, Action a) {
    if (!pe) return std::nullopt;
    for (auto it = grants.rbegin(); it != grants.rend(); ++it)
      if ((it->actions & bit(a)) && procs.in_tree(pe->info->proc_id, it->tree_root)) return it->allow;
    return std::nullopt;
  }

  std::vector<ChainLink> chain_of(ProcessEntry* pe) {
    std::vector<ChainLink> chain;
    pid_t pid = pe ? pe->info->pid : 0;
    for (int depth = 0; pid > 0 && pid != launched.init_pid && depth < 32; ++depth) {
      ProcessEntry* e = procs.by_tgid(pid);
      if (!e) break;
      chain.push_back({e->info->pid, e->info->comm, e->info->argv});
      pid = e->info->ppid;
    }
    return chain;
  }

  void park(Pending p, ProcessEntry* pe) {
    const Facet& f = p.cls.facets[0];
    std::string key = std::to_string(p.row.ev.pid) + "|" + std::string(action_name(f.action)) + "|" +
                      dirname_of(f.path) + "|" + p.row.verdict.rule_id;
    for (auto& [id, pk] : parked) {
      if (pk.fold_key == key) {
        pk.requests.push_back(std::move(p));
        if (opts.asker) opts.asker->update(id, static_cast<uint32_t>(pk.requests.size()));
        return;
      }
    }
    if (!opts.asker) {
      // Nobody to ask: an unanswered ask is a denial.
      db::ApprovalRow a{p.row.seq, realtime_ns(), realtime_ns(), "no-asker", "deny-once", ""};
      Creds none;
      finish(p.call, p.cls, p.row, false, pe, none);
      for (auto* s : sinks) s->approval(a);
      return;
    }
    Parked pk;
    pk.ask_id = next_ask++;
    pk.fold_key = key;
    pk.asked_ns = realtime_ns();
    pk.deadline_ns = pk.asked_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(opts.ask_timeout).count();
    pk.proc_id = pe ? pe->info->proc_id : 0;
    pk.action = bit(f.action);
    AskRequest r;
    r.ask_id = pk.ask_id;
    r.session = opts.session;
    r.session_name = opts.session_name;
    r.row = p.row;
    r.chain = chain_of(pe);
    r.summary = summarize(f, 1);
    explain_ask(p, pe, r);
    r.asked_ns = pk.asked_ns;
    r.deadline_ns = pk.deadline_ns;
    pk.requests.push_back(std::move(p));
    uint64_t id = pk.ask_id;
    parked.emplace(id, std::move(pk));
    arm_timer();
    opts.asker->ask(r);
  }

  // The explanation of the part of the call that asked (asks are rare: the
  // explained decision's cost is no concern here).
  void explain_ask(const Pending& p, ProcessEntry* pe, AskRequest& r) {
    // Each part saw the count before the call's deletions, plus its own
    // (judge()); the row keeps the count after them.
    uint32_t deletions = 0;
    for (const Facet& f : p.cls.facets) deletions += f.action == Action::FileDelete;
    uint32_t before = p.row.ev.proc_deletes >= deletions ? p.row.ev.proc_deletes - deletions : 0;
    for (const Facet& f : p.cls.facets) {
      Event ev = facet_event(p.call, p.cls, f, pe);
      ev.proc_deletes = pe ? before + (f.action == Action::FileDelete ? 1 : 0) : 0;
      Explanation x = explain(*opts.policy, ev);
      if (x.verdict.decision != p.row.verdict.decision || x.verdict.rule_id != p.row.verdict.rule_id) continue;
      std::string layer = x.verdict.builtin ? "builtin" : "notify";
      audit::Sources sources = audit::sources_of(*opts.policy);
      r.why = audit::explanation_json(x, sources, layer);
      r.why_text = audit::explanation_text(x, sources, layer);
      return;
    }
  }

  void arm_timer() {
    int64_t next = 0;
    for (auto& [id, pk] : parked)
      if (!next || pk.deadline_ns < next) next = pk.deadline_ns;
    itimerspec its{};
    if (next) {
      its.it_value.tv_sec = next / 1000000000;
      its.it_value.tv_nsec = next % 1000000000;
    }
    timerfd_settime(timer_fd.get(), TFD_TIMER_ABSTIME, &its, nullptr);
  }

  void answer(uint64_t ask_id, AskAnswer a, const std::string& by, const std::string& rule_written = "") {
    auto it = parked.find(ask_id);
    if (it == parked.end()) return;
    Parked pk = std::move(it->second);
    parked.erase(it);
    arm_timer();
    bool allow = ask_answer_allows(a);
    if (a == AskAnswer::AllowTree || a == AskAnswer::DenyTree || a == AskAnswer::AllowAlways ||
        a == AskAnswer::DenyAlways)
      grants.push_back({pk.proc_id, pk.action, allow});
    int64_t t = realtime_ns();
    for (auto& p : pk.requests) {
      ProcessEntry* pe = procs.lookup(p.call.tid);
      if (!listener.id_valid(p.call.id)) {
        // The asker gave up (killed, interrupted): record, nothing to answer.
        p.row.allowed = false;
        p.row.result_errno = EINTR;
        emit(p.row);
      } else {
        Creds creds = procs.creds(p.call.tid);
        finish(p.call, p.cls, p.row, allow, pe, creds);
      }
      db::ApprovalRow ar{p.row.seq, pk.asked_ns, t, by, std::string(ask_answer_name(a)), rule_written};
      for (auto* s : sinks) s->approval(ar);
    }
  }

  void expire_asks() {
    int64_t t = realtime_ns();
    std::vector<uint64_t> due;
    for (auto& [id, pk] : parked)
      if (pk.deadline_ns <= t) due.push_back(id);
    for (uint64_t id : due) {
      if (opts.asker) opts.asker->cancel(id);
      answer(id, AskAnswer::Timeout, "timeout");
    }
  }

  void drain_answers() {
    uint64_t n;
    (void)!read(answers_fd.get(), &n, sizeof n);
    std::deque<std::tuple<uint64_t, AskAnswer, std::string, std::string>> got;
    {
      std::lock_guard<std::mutex> g(answers_mu);
      got.swap(answers);
    }
    for (auto& [id, a, by, rule] : got) answer(id, a, by, rule);
  }

  // ---------------------------------------------------------- lifecycle --

  void on_signal() {
    signalfd_siginfo si;
    while (read(sigfd.get(), &si, sizeof si) == sizeof si) {
      int sig = static_cast<int>(si.ssi_signo);
      if (sig == SIGCHLD) continue;  // init's exit arrives on its pidfd
      // A terminal's ^C already reached the command (same process group);
      // signals sent to cottonbox itself are passed on.  Repeated ones end
      // the session.
      bool from_tty = si.ssi_code == SI_KERNEL;
      if (!from_tty && launched.command_pid > 0) kill(launched.command_pid, sig);
      if (++interrupts >= 3) request_kill_now();
    }
  }

  void on_ctl() {
    CtlMsg m{};
    ssize_t n = recv(launched.ctl.get(), &m, sizeof m, MSG_DONTWAIT);
    if (n != sizeof m) return;
    switch (m.type) {
      case CtlType::ExecFailed:
        exec_errno = m.a;
        outcome.exec_failed = true;
        break;
      case CtlType::Exited: {
        int st = m.a;
        command_exited = true;
        if (WIFEXITED(st))
          outcome.exit_status = WEXITSTATUS(st);
        else if (WIFSIGNALED(st)) {
          outcome.exit_signal = WTERMSIG(st);
          outcome.exit_status = 128 + WTERMSIG(st);
        }
        break;
      }
      default: break;
    }
  }

  void request_kill_now() {
    CtlMsg m{CtlType::Kill, 0, 0};
    send(launched.ctl.get(), &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
    syscall(SYS_pidfd_send_signal, launched.init_pidfd.get(), SIGKILL, nullptr, 0);
  }

  SessionOutcome run() {
    setup();
    epoll_event evs[64];
    bool exits_pending = false;
    bool listening = true;
    while (!init_done) {
      int timeout = trace_backlog ? 0 : exits_pending ? 20 : opts.tracer ? kTraceDrainMs : -1;
      // The listener is waited on with poll(2), beside the epoll set, not in
      // it: the kernel's sync wake-up (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
      // reaches a poll(2) waiter, which then runs on the notifying thread's
      // CPU, but epoll's callback drops it, and a wake-up on the other CPU
      // cost each notified call about as much again as the rest of its work.
      pollfd pf[2] = {{listening ? listener.fd() : -1, POLLIN, 0}, {ep.get(), POLLIN, 0}};
      int pn = poll(pf, 2, timeout);
      exits_pending = procs.poll_exits(false);
      if (opts.tracer) drain_trace(false);
      if (pn < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (pf[0].revents & POLLIN) on_notification();
      // No process uses the filter any more: nothing will come.
      else if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))
        listening = false;
      int n = (pf[1].revents & POLLIN) ? epoll_wait(ep.get(), evs, 64, 0) : 0;
      for (int i = 0; i < n; ++i) {
        uint64_t tag = evs[i].data.u64;
        if (tag >= kProcBase) {
          procs.exited(static_cast<pid_t>(tag & 0xffffffffu));
          exits_pending = true;
          continue;
        }
        switch (tag) {
          case kSignal: on_signal(); break;
          case kCtl:
            if (evs[i].events & (EPOLLHUP | EPOLLERR))
              epoll_ctl(ep.get(), EPOLL_CTL_DEL, launched.ctl.get(), nullptr);
            else
              on_ctl();
            break;
          case kInit: {
            // init has exited: no process of the session is left.
            // Its last reports may still be queued behind the exit.
            CtlMsg m{};
            while (recv(launched.ctl.get(), &m, sizeof m, MSG_DONTWAIT | MSG_PEEK) == sizeof m) on_ctl();
            siginfo_t si{};
            waitid(P_PIDFD, static_cast<id_t>(launched.init_pidfd.get()), &si, WEXITED | WNOHANG);
            init_done = true;
            break;
          }
          case kAnswers: drain_answers(); break;
          case kDone: drain_done(); break;
          case kTrace: drain_trace(true); break;
          case kTimer: {
            uint64_t x;
            (void)!read(timer_fd.get(), &x, sizeof x);
            expire_asks();
            break;
          }
        }
      }
    }
    procs.poll_exits(true);
    if (opts.tracer) {
      drain_trace(true, SIZE_MAX);
      for (auto& [key, row] : pending_continue) emit(row);
      pending_continue.clear();
    }
    // Workers notice within one poll interval.
    stopping = true;
    while (workers > 0) usleep(5000);
    drain_done();
    // Asks still open belong to processes that are gone.
    for (auto& [id, pk] : parked)
      if (opts.asker) opts.asker->cancel(id);
    for (auto& [id, pk] : std::map<uint64_t, Parked>(std::move(parked)))
      for (auto& p : pk.requests) {
        p.row.allowed = false;
        p.row.result_errno = ESRCH;
        emit(p.row);
      }
    if (!command_exited && outcome.exit_status < 0) outcome.exit_status = 128 + SIGKILL;
    if (outcome.exec_failed) outcome.exit_status = (exec_errno == ENOENT || exec_errno == ENOTDIR) ? 127 : 126;
    return outcome;
  }
};

Supervisor::Supervisor(SupervisorOptions opts, Launched launched, std::vector<Sink*> sinks)
    : impl_(std::make_unique<Impl>(std::move(opts), std::move(launched), std::move(sinks))) {}

Supervisor::~Supervisor() = default;

SessionOutcome Supervisor::run() { return impl_->run(); }

void Supervisor::request_kill() { impl_->request_kill_now(); }

const std::vector<std::string>& Supervisor::degradations() const { return impl_->degraded; }

std::string_view ask_answer_name(AskAnswer a) {
  switch (a) {
    case AskAnswer::AllowOnce: return "allow-once";
    case AskAnswer::DenyOnce: return "deny-once";
    case AskAnswer::AllowTree: return "allow-tree";
    case AskAnswer::DenyTree: return "deny-tree";
    case AskAnswer::AllowAlways: return "allow-always";
    case AskAnswer::DenyAlways: return "deny-always";
    case AskAnswer::Timeout: return "timeout";
  }
  return "unknown";
}

bool ask_answer_allows(AskAnswer a) {
  return a == AskAnswer::AllowOnce || a == AskAnswer::AllowTree || a == AskAnswer::AllowAlways;
}

}  // namespace cb
