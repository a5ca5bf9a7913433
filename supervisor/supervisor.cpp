// The supervisor's loop: it waits on the listener and on everything else
// the session has (signals, init's control channel, answers to asks, the
// asks' deadlines, blocking operations done, the tracer's ring, process
// exits) and hands each to its part: the notify path, the trace merge, the
// ask broker.  Everything runs on this one thread but the blocking
// operations and the askers' own threads, whose results come back here.
#include "supervisor/supervisor.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <deque>
#include <mutex>
#include <optional>
#include <tuple>

#include "base/paths.h"
#include "net/resolver.h"
#include "notify/listener.h"
#include "procs/procs.h"
#include "supervisor/notify_path.h"
#include "supervisor/proc_scan.h"
#include "supervisor/recorder.h"
#include "supervisor/trace_merge.h"
#include "trace/ebpf.h"

namespace cb {
namespace {

// epoll tags: the low bits say what kind of fd woke us.
enum Tag : uint64_t { kSignal = 1, kCtl, kInit, kAnswers, kTimer, kDone, kTrace, kResolver, kProcBase = 1ull << 32 };

// Records reach the reader in batches: draining at least this often keeps
// the trail and the process table close behind the session.
constexpr int kTraceDrainMs = 50;
// Records applied per turn of the loop, so that a notification arriving
// meanwhile waits for a few of them, not for the whole ring.
constexpr size_t kTraceBatch = 32;

// A lookup the session's resolver answered, as the trail keeps it.
LookupRow lookup_row(const net::LookupRecord& l) {
  LookupRow r;
  r.ts_ns = l.ts_ns;
  r.client = l.client.text();
  r.tcp = l.tcp;
  r.name = l.name;
  r.type = l.type;
  r.rcode = static_cast<int>(l.rcode);
  r.denied = l.denied;
  r.truncated = l.truncated;
  r.chain = l.chain;
  for (const auto& a : l.addresses) r.addresses.push_back(a.text());
  r.upstream = l.upstream;
  r.note = l.note;
  return r;
}

}  // namespace

struct Supervisor::Impl {
  SupervisorOptions opts;
  Launched launched;
  Listener listener;
  ProcessTable procs;
  Recorder rec;
  SessionOutcome outcome;
  TaintTracker taint;
  TraceMerge trace;
  NotifyPath notify;

  UniqueFd ep, sigfd, answers_fd, timer_fd;
  bool init_done = false;
  bool command_exited = false;
  int exec_errno = 0;
  int interrupts = 0;
  int64_t armed_deadline = 0;

  // Answers arrive on the askers' threads.
  std::mutex answers_mu;
  std::deque<std::tuple<uint64_t, AskAnswer, std::string, std::string>> answers;

  // Neither notifications nor the tracer: the tree is looked at instead.
  std::optional<ProcScan> scan;
  int64_t last_scan_ns = 0;

  // The tracer's ring.
  int64_t last_drain_ns = 0;
  bool trace_backlog = false;  // the last drain stopped at its budget
  uint64_t reported_lost = 0;
  bool tracer_stopped = false;  // the tracer service has gone

  Impl(SupervisorOptions o, Launched l, std::vector<Sink*> s)
      : opts(std::move(o)),
        launched(std::move(l)),
        listener(std::move(launched.listener)),
        procs(launched.init_pid),
        rec(std::move(s)),
        taint(opts.policy, procs),
        trace(opts, procs, rec, taint),
        notify(opts, launched.init_pid, listener, procs, rec, trace, taint, outcome) {
    if (taint.active()) rec.observe = [this](const EventRow& row) { taint.on_row(row); };
    if (opts.policy) procs.identities = &opts.policy->identities;
    procs.code_before_ns = opts.started_ns;
  }

  void watch(int fd, uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &ev);
  }

  // ---------------------------------------------------------------- setup --

  void setup() {
    ep.reset(epoll_create1(EPOLL_CLOEXEC));
    // This thread's umask and cwd become its own, so emulated creations can
    // take the target's umask without touching other threads.
    unshare(CLONE_FS);
    // No listener (a session without a supervisor of its own: plan/kernel_only.h):
    // nothing is notified, and nothing is slower for it.
    bool listens = listener.fd() >= 0;
    if (listens && !listener.set_sync_wakeup())
      rec.degraded("no SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: slower notifications");
    if (listens && !launched.killable_recv)
      rec.degraded("no SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: a signal can interrupt a decided syscall");
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
    watch(notify.workers_fd(), kDone);
    if (opts.resolver) {
      opts.resolver->set_on_lookup([this](const net::LookupRecord& l) { rec.lookup(lookup_row(l)); });
      watch(opts.resolver->fd(), kResolver);
    }
    if (opts.tracer) {
      watch(opts.tracer->poll_fd(), kTrace);
      procs.exits_from_tracer = true;
    }

    procs.watch = [this](int fd, pid_t tgid) { watch(fd, kProcBase | static_cast<uint32_t>(tgid)); };
    procs.unwatch = [this](int fd) { epoll_ctl(ep.get(), EPOLL_CTL_DEL, fd, nullptr); };
    procs.on_new = [this](const ProcessEntry& e) {
      ProcessRow r;
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
      r.names = e.info->names;
      r.identity = e.info->identity;
      rec.process(r);
    };
    procs.on_exec = [this](const ProcessEntry& e) {
      rec.process_exec(ProcessExec{e.info->proc_id, realtime_ns(), e.info->comm, e.info->exe, e.info->argv,
                                   e.info->names, e.info->identity});
    };
    procs.on_exit = [this](const ProcessEntry& e, int status, int sig) {
      ProcessExit x{e.info->proc_id, realtime_ns(), status, sig};
      rec.process_exit(x);
      if (sig == SIGSYS) notify.foreign_abi_denied(e, x.ended_ns);
    };
    if (!listens && !opts.tracer) {
      scan.emplace(procs, launched.init_pid);
      ProcScan::await_exec(launched.command_pid);
      scan->scan();
      last_scan_ns = realtime_ns();
      rec.degraded("the process tree is recorded by looking every " + std::to_string(ProcScan::kIntervalMs) +
                   " ms: processes that start and end between two looks are not");
    }
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
  }

  // ----------------------------------------------------------------- asks --

  // The timer fires at the earliest deadline of an open ask.
  void arm_timer() {
    int64_t next = notify.asks().next_deadline();
    if (next == armed_deadline) return;
    armed_deadline = next;
    itimerspec its{};
    if (next) {
      its.it_value.tv_sec = next / 1000000000;
      its.it_value.tv_nsec = next % 1000000000;
    }
    timerfd_settime(timer_fd.get(), TFD_TIMER_ABSTIME, &its, nullptr);
  }

  void drain_answers() {
    uint64_t n;
    (void)!read(answers_fd.get(), &n, sizeof n);
    std::deque<std::tuple<uint64_t, AskAnswer, std::string, std::string>> got;
    {
      std::lock_guard<std::mutex> g(answers_mu);
      got.swap(answers);
    }
    for (auto& [id, a, by, rule] : got) notify.asks().answer(id, a, by, rule);
  }

  // --------------------------------------------------------------- tracer --

  void drain_trace(bool ready, size_t budget = kTraceBatch) {
    int64_t t = realtime_ns();
    if (!ready && !trace_backlog && t - last_drain_ns < int64_t(kTraceDrainMs) * 1000000) return;
    last_drain_ns = t;
    auto n = opts.tracer->drain([this](const TraceRecord& r) { trace.on_record(r); }, budget);
    // A full slice: more may wait, and the tracer wakes the reader only
    // every few thousand records, so the loop goes on draining (between
    // notifications) instead of waiting for the next timeout.
    trace_backlog = n.ok() && *n >= budget;
    // The service's end detached the programs: the session goes on deciding
    // (it never depended on the tracer), and says from when it was not
    // recorded.
    if (!tracer_stopped && !opts.tracer->stopped().empty()) {
      tracer_stopped = true;
      rec.degraded(opts.tracer->stopped() + "; actions no rule decides are not recorded from then on");
    }
    uint64_t lost = opts.tracer->lost();
    if (lost != reported_lost) {
      reported_lost = lost;
      taint.lost();
      rec.events_lost(lost);
    }
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
        if (WIFEXITED(st)) {
          outcome.exit_status = WEXITSTATUS(st);
        } else if (WIFSIGNALED(st)) {
          outcome.exit_signal = WTERMSIG(st);
          outcome.exit_status = 128 + WTERMSIG(st);
        }
        break;
      }
      default: break;
    }
  }

  // init has exited: no process of the session is left.  Its last reports
  // may still be queued behind the exit.
  void on_init_exit() {
    CtlMsg m{};
    while (recv(launched.ctl.get(), &m, sizeof m, MSG_DONTWAIT | MSG_PEEK) == sizeof m) on_ctl();
    siginfo_t si{};
    waitid(P_PIDFD, static_cast<id_t>(launched.init_pidfd.get()), &si, WEXITED | WNOHANG);
    init_done = true;
  }

  void request_kill_now() {
    CtlMsg m{CtlType::Kill, 0, 0};
    send(launched.ctl.get(), &m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
    syscall(SYS_pidfd_send_signal, launched.init_pidfd.get(), SIGKILL, nullptr, 0);
  }

  void dispatch(const epoll_event& ev, bool& exits_pending) {
    uint64_t tag = ev.data.u64;
    if (tag >= kProcBase) {
      procs.exited(static_cast<pid_t>(tag & 0xffffffffu));
      exits_pending = true;
      return;
    }
    switch (tag) {
      case kSignal: on_signal(); break;
      case kCtl:
        if (ev.events & (EPOLLHUP | EPOLLERR))
          epoll_ctl(ep.get(), EPOLL_CTL_DEL, launched.ctl.get(), nullptr);
        else
          on_ctl();
        break;
      case kInit: on_init_exit(); break;
      case kAnswers: drain_answers(); break;
      case kDone: notify.drain_done(); break;
      case kTrace: drain_trace(true); break;
      case kResolver: opts.resolver->run_once(); break;
      case kTimer: {
        uint64_t x;
        (void)!read(timer_fd.get(), &x, sizeof x);
        notify.asks().expire();
        break;
      }
    }
  }

  SessionOutcome run() {
    setup();
    epoll_event evs[64];
    bool exits_pending = false;
    bool listening = listener.fd() >= 0;
    while (!init_done) {
      int timeout = trace_backlog      ? 0
                    : exits_pending    ? 20
                    : opts.tracer      ? kTraceDrainMs
                    : scan.has_value() ? ProcScan::kIntervalMs
                                       : -1;
      // The listener is waited on with poll(2), beside the epoll set, not in
      // it: the kernel's sync wake-up (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
      // reaches a poll(2) waiter, which then runs on the notifying thread's
      // CPU, but epoll's callback drops it, and a wake-up on the other CPU
      // cost each notified call about as much again as the rest of its work.
      pollfd pf[2] = {{listening ? listener.fd() : -1, POLLIN, 0}, {ep.get(), POLLIN, 0}};
      int pn = poll(pf, 2, timeout);
      exits_pending = procs.poll_exits(false);
      if (opts.tracer) drain_trace(false);
      if (scan && realtime_ns() - last_scan_ns >= int64_t(ProcScan::kIntervalMs) * 1000000) {
        scan->scan();
        last_scan_ns = realtime_ns();
      }
      if (pn < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (pf[0].revents & POLLIN) notify.on_notification();
      // No process uses the filter any more: nothing will come.
      else if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))
        listening = false;
      int n = (pf[1].revents & POLLIN) ? epoll_wait(ep.get(), evs, 64, 0) : 0;
      for (int i = 0; i < n; ++i) dispatch(evs[i], exits_pending);
      arm_timer();
    }
    procs.poll_exits(true);
    if (opts.tracer) {
      drain_trace(true, SIZE_MAX);
      trace.flush_awaited();
    }
    notify.end();
    outcome.denials += trace.denials();
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

const std::vector<std::string>& Supervisor::degradations() const { return impl_->rec.degradations(); }

}  // namespace cb
