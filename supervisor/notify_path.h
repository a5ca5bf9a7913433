// One notification from receipt to answer: read the call once, resolve and
// classify it (notify/), judge every facet with decide(), then carry out
// what is allowed on exactly the objects checked (or let the kernel run it
// where the plan says every refusal is a mount's), refuse the rest, or park
// an ask; answer the kernel and record the row.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "host/unix_servers.h"
#include "net/name_map.h"
#include "notify/carry.h"
#include "notify/listener.h"
#include "notify/ops.h"
#include "procs/procs.h"
#include "supervisor/ask_broker.h"
#include "supervisor/host_view.h"
#include "supervisor/keep_calls.h"
#include "supervisor/pending.h"
#include "supervisor/recorder.h"
#include "supervisor/supervisor.h"
#include "supervisor/taint.h"
#include "supervisor/trace_merge.h"
#include "supervisor/workers.h"

namespace cb {

class NotifyPath {
 public:
  NotifyPath(const SupervisorOptions& opts, pid_t init_pid, Listener& listener, ProcessTable& procs, Recorder& rec,
             TraceMerge& trace, TaintTracker& taint, SessionOutcome& outcome);

  // Serves one pending notification, if any.
  void on_notification();
  // The filter killed a process that made a syscall through another ABI
  // (int 0x80, x32): the kernel leaves no other trace of that denial.
  void foreign_abi_denied(const ProcessEntry& e, int64_t ts);
  AskBroker& asks() { return asks_; }
  // Rows of blocking operations that completed on their threads.
  int workers_fd() const { return workers_.fd(); }
  void drain_done();
  // The session ended: blocking operations stop, open asks are abandoned.
  void end();

 private:
  struct Judgement {
    Verdict verdict;
    size_t facet = 0;
    // Allowed deletions for tree.deletes (all, and renames that prepare one)
    // and session.deletes (those the policy guards) (policy/counts.h).
    uint32_t tree_counted = 0;
    uint32_t session_counted = 0;
    uint32_t keep = 0;  // facets whose verdict keeps (Classified::keep)
  };
  Judgement judge(const Classified& c, ProcessEntry* pe, const Call& call);
  // facet_event(), with what the process read (TaintTracker).
  Event event_of(const Call& call, const Classified& c, const Facet& f, const ProcessEntry* pe) const;
  EventRow make_row(const Call& call, const Classified& c, ProcessEntry* pe, const Judgement& j);
  PathContext context_for(const Call& call, ProcessEntry* pe);
  bool carried_by_kernel(const Call& call, ProcessEntry* pe);
  std::optional<EventRow> short_way_row(const Call& call, ProcessEntry* pe, PathContext& ctx, const CarryShape& s,
                                        const std::string& path, mode_t final_mode);
  void finish(const Call& call, Classified& c, EventRow& row, bool allow, ProcessEntry* pe, const Creds& creds);
  void note_link(const Classified& c);
  void send_unjudged(const Call& call, Operation& op, const Creds& creds);
  bool kernel_carries(const Call& call, const Classified& c) const;
  std::vector<ChainLink> chain_of(ProcessEntry* pe);
  void park(Pending p, ProcessEntry* pe);
  void resolve_asked(Pending& p, bool allow, const ApprovalRow& a);
  void explain_ask(const Pending& p, ProcessEntry* pe, AskRequest& r);

  const SupervisorOptions& opts_;
  pid_t init_pid_;
  Listener& listener_;
  ProcessTable& procs_;
  Recorder& rec_;
  TraceMerge& trace_;
  TaintTracker& taint_;
  std::unique_ptr<UnixServers> unix_servers_;  // only when a rule reads net.server
  SessionOutcome& outcome_;
  seccomp_notif* req_;
  HostView host_view_;
  Workers workers_;
  AskBroker asks_;
  KeepCalls keep_;
  uint64_t name_gen_ = 0;       // bumped whenever a directory is renamed
  WritableDirs writable_dirs_;  // for creates the kernel may carry out (notify/carry.h)
  bool fs_shared_ = false;      // some process shares its fs_struct: no root/cwd caching
  // Root mounted a proc, sys or cgroup somewhere: a path the kernel resolves
  // again may land on a kernel setting no mount refuses, so write opens are
  // no longer the kernel's to carry out.
  bool kernel_fs_mounted_ = false;
  MountMap mounts_;  // names on other namespaces' mounts
  pid_t self_pid_ = getpid();
};

// What one facet of a notified call is, as the policy and the trail see it.
// `names`: the session's name map, for the host names of net.* objects.
Event facet_event(const Call& call, const Classified& c, const Facet& f, const ProcessEntry* pe,
                  const net::NameMap* names);

}  // namespace cb
