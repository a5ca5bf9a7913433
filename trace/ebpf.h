// The eBPF tracer as one session sees it: follows the session's processes
// and hands over their records decoded (trace/ebpf_decode.h).  The records
// come either from the resident service that serves every session
// (connect_service; tracerd/) or from a load of the programs of the
// session's own (open).  Both are read the same way: through the mapping of
// the session's own ring buffer (trace/ring_reader.h).
//
//   auto t = EbpfTracer::connect_service();  // or EbpfTracer::open({})
//   t->track(launcher.init_pid());           // before the session's command runs
//   epoll: t->poll_fd() readable, or every ~100 ms  ->  t->drain(on_record)
//   at the end: t->drain(on_record) once more; t->lost() for the session row
//
// The kernel side wakes the reader only every few records or bytes (a wakeup
// per record would cost more than the record), so the caller must also drain
// on a short timeout; records are never older than that timeout when read.
//
// Threading: one thread owns an EbpfTracer; none of its methods may be called
// concurrently.  Destruction detaches every program and frees the maps (a
// private load), or ends the session's registration (the service).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "trace/core_btf.h"
#include "trace/ebpf_decode.h"
#include "trace/ebpf_programs.h"
#include "trace/tracer_service.h"

namespace cb {

class EbpfTracer {
 public:
  using RecordFn = std::function<void(const TraceRecord&)>;

  // Loads and attaches programs of this tracer's own.  Tracepoints the
  // kernel lacks are skipped and listed in skipped(); missing essentials are
  // an Error that says what is missing ("BPF needs root or CAP_BPF+CAP_PERFMON").
  static Result<EbpfTracer> open(const EbpfConfig& config = {});
  // Connects to the resident service; an Error when none answers there.
  // Needs no privilege: track() registers with it.
  static Result<EbpfTracer> connect_service(const std::string& socket = tracer_socket_path());
  // False when cottonbox was built with COTTONBOX_WITH_EBPF=OFF (open() then
  // always fails).
  static bool built_in();

  EbpfTracer(EbpfTracer&&) noexcept;
  EbpfTracer& operator=(EbpfTracer&&) noexcept;
  ~EbpfTracer();

  // Follows process `pid` (a pid of the caller's namespace) and every
  // descendant it forks from now on.  With the service, `pid` must be a
  // child of the caller.  Once per tracer.
  Result<Ok> track(pid_t pid);

  // For the caller's epoll: readable when records are waiting (subject to
  // the wakeup thresholds above), or when the service has gone.
  int poll_fd() const;

  // Decodes and hands over every record waiting now, in ring order.  Returns
  // how many were handed over.  A record that does not decode is counted in
  // garbled() and skipped.  An exception thrown by `fn` stops the drain and
  // propagates after the ring is left consistent.
  // At most `budget` records are taken: the rest stay for the next call
  // (the poll fd stays readable while any are left).
  Result<size_t> drain(const RecordFn& fn, size_t budget = SIZE_MAX);
  // Waits up to `timeout_ms` for records, then drains (for tests and tools).
  Result<size_t> poll(int timeout_ms, const RecordFn& fn);

  uint64_t lost() const;  // lost + enter_dropped
  EbpfCounters counters() const;
  uint64_t garbled() const;
  const std::string& last_decode_error() const;

  // True when the records come from the resident service.
  bool shared() const;
  // Empty while recording goes on; once the service has gone (its
  // connection ended: its programs are detached), when and why recording
  // stopped.  Noticed by drain().
  const std::string& stopped() const;

  // The caller's pid namespace: records carry its pids.
  const PidNamespace& pidns() const;
  int64_t realtime_offset_ns() const;
  // "raw_tp:sys_enter", "raw_tp:sched_process_fork", ... (a private load)
  const std::vector<std::string>& attached() const;
  // "io_uring:io_uring_submit_req: not in this kernel", ...
  const std::vector<std::string>& skipped() const;

 private:
  struct Impl;
  explicit EbpfTracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cb
