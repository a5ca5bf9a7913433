// The eBPF tracer's loader: loads bpf/cottonbox.bpf.c, follows one session,
// and hands over its records decoded (trace/ebpf_decode.h).
//
//   auto t = EbpfTracer::open({});          // load + attach; Error if BPF is unusable
//   t->track(launcher.init_pid());          // before the session's command runs
//   epoll: t->poll_fd() readable, or every ~100 ms  ->  t->drain(on_record)
//   at the end: t->drain(on_record) once more; t->lost() for the session row
//
// The kernel side wakes the reader only every few records or bytes (a wakeup
// per record would cost more than the record), so the caller must also drain
// on a short timeout; records are never older than that timeout when read.
//
// Threading: one thread owns an EbpfTracer; none of its methods may be called
// concurrently.  Destruction detaches every program and frees the maps.
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

namespace cb {

struct EbpfConfig {
  // Ring buffer size in bytes: rounded up to a power of two of at least one
  // page.  4 MiB absorbs a burst of ~16k records while the reader stalls;
  // the kernel maps the data twice, so it counts double in the
  // supervisor's RSS.
  uint64_t ring_bytes = 4ULL << 20;
  // Wake the reader after this many records per CPU (rounded up to a power
  // of two), or when this many bytes are waiting on a CPU, whichever comes
  // first; the bytes are capped so that all CPUs together hold back about a
  // quarter of the ring (never less than a page per CPU).  A wakeup is an
  // interrupt the recording CPU raises on itself: on a virtual machine a VM
  // exit, tens of µs, so rare wakeups pay for themselves.  The reader must
  // then also drain on a timeout, and drain all that waits when it does.
  uint32_t wakeup_records = 4096;
  uint64_t wakeup_bytes = 1ULL << 20;
  // Where the cut-down copy of the kernel's BTF that the programs are
  // placed against is kept (see trace/core_btf.h); empty: use the whole.
  std::string core_btf_dir = cb::core_btf_dir();
};

// The supervisor's pid namespace as the kernel sees it (records carry pids
// of this namespace).  Measured at open, in the kernel, for the calling process.
struct PidNamespace {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint32_t level = 0;  // 0: the initial pid namespace
};

struct EbpfCounters {
  uint64_t lost = 0;           // records the ring buffer had no room for
  uint64_t records = 0;        // records submitted
  uint64_t enter_dropped = 0;  // syscalls not recorded because their arguments could not be saved
};

class EbpfTracer {
 public:
  using RecordFn = std::function<void(const TraceRecord&)>;

  // Loads and attaches.  Tracepoints the kernel lacks (io_uring, a recent
  // syscall) are skipped and listed in skipped(); missing essentials are an
  // Error that says what is missing ("BPF needs root or CAP_BPF+CAP_PERFMON").
  static Result<EbpfTracer> open(const EbpfConfig& config = {});
  // False when cottonbox was built with COTTONBOX_WITH_EBPF=OFF (open() then
  // always fails).
  static bool built_in();

  EbpfTracer(EbpfTracer&&) noexcept;
  EbpfTracer& operator=(EbpfTracer&&) noexcept;
  ~EbpfTracer();

  // Follows process `pid` (a pid of the supervisor's namespace) and every
  // descendant it forks from now on.  With the supervisor in the initial pid
  // namespace this takes effect at once; inside a pid namespace, the kernel
  // only learns which process that number means at the process's next fork or
  // exec, which for a session's init (it forks the command) is in time.
  Result<Ok> track(pid_t pid);

  // For the caller's epoll: readable when records are waiting (subject to
  // the wakeup thresholds above).
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

  uint64_t lost() const;  // lost + enter_dropped, summed over CPUs
  EbpfCounters counters() const;
  uint64_t garbled() const;
  const std::string& last_decode_error() const;

  const PidNamespace& pidns() const;
  int64_t realtime_offset_ns() const;
  // "raw_tp:sys_enter", "raw_tp:sched_process_fork", ...
  const std::vector<std::string>& attached() const;
  // "io_uring:io_uring_submit_req: not in this kernel", ...
  const std::vector<std::string>& skipped() const;

 private:
  struct Impl;
  explicit EbpfTracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cb
