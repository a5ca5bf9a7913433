// The tracer's records merged into the session: forks, execs and exits
// keep the process table exact; a call the supervisor let the kernel run
// gets its row once the record brings the kernel's result; everything else
// the tracer saw is judged and recorded as it happened (denied by a
// read-only mount, or allowed), after the fact.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "procs/procs.h"
#include "supervisor/recorder.h"
#include "supervisor/supervisor.h"
#include "supervisor/taint.h"
#include "trace/ebpf_decode.h"

namespace cb {

// The mounted tree a path lies in, if any.
const StaticDenial* mounted_for(const std::vector<StaticDenial>& mounts, const std::string& path);

class TraceMerge {
 public:
  TraceMerge(const SupervisorOptions& opts, ProcessTable& procs, Recorder& rec, const TaintTracker& taint);

  void on_record(const TraceRecord& r);
  // A call the supervisor let through that the tracer records: its row is
  // written once, with the kernel's result.
  void await_result(pid_t tid, int nr, EventRow row);
  // The session ended: rows still awaiting a result are written without.
  void flush_awaited();
  uint64_t denials() const { return denials_; }

 private:
  struct PairHash {
    size_t operator()(const std::pair<pid_t, int>& p) const {
      return std::hash<uint64_t>()((uint64_t(p.first) << 16) ^ p.second);
    }
  };
  const SupervisorOptions& opts_;
  ProcessTable& procs_;
  Recorder& rec_;
  const TaintTracker& taint_;
  std::unordered_map<std::pair<pid_t, int>, EventRow, PairHash> pending_;
  bool gap_reported_ = false;
  uint64_t denials_ = 0;
};

}  // namespace cb
