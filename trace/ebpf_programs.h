// The eBPF tracer's programs, loaded and attached once, serving sessions by
// slot (bpf/cb_wire.h): each slot has its own ring buffer and loss counters,
// and the pid namespace its reader numbers processes in.  A private tracer
// (trace/ebpf.h) holds a load with one slot; the resident service
// (tracerd/) holds one load for every session on the host, so that what a
// syscall outside every session pays does not grow with their number.
//
//   auto p = EbpfPrograms::load({});              // Error if BPF is unusable
//   auto s = p->add_slot(reader_ns, ring_bytes);  // ring + loss counters fds
//   p->track(s->slot, init_pid);                  // before init forks
//   ... the reader maps s->ring and s->lost (trace/ring_reader.h)
//   p->remove_slot(s->slot);                      // its processes are let go
//
// Threading: one thread owns an EbpfPrograms; another may prepare_slot()
// beside it.  Destruction detaches every
// program and frees the maps (a reader's mapping keeps its ring alive).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "trace/core_btf.h"

namespace cb {

struct EbpfConfig {
  // Ring buffer size in bytes: rounded up to a power of two of at least one
  // page.  4 MiB absorbs a burst of ~16k records while the reader stalls;
  // the kernel maps the data twice, so it counts double in the reader's RSS.
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

// A pid namespace as the kernel sees it (records carry pids of the reader's
// namespace).
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

// What a reader of one slot needs.
struct EbpfSlot {
  uint32_t slot = 0;
  UniqueFd ring;  // BPF_MAP_TYPE_RINGBUF of ring_bytes
  UniqueFd lost;  // a mappable array of one struct cb_lost
  uint64_t ring_bytes = 0;
};

class EbpfPrograms {
 public:
  // Loads and attaches.  Tracepoints the kernel lacks (io_uring, a recent
  // syscall) are skipped and listed in skipped(); missing essentials are an
  // Error that says what is missing ("BPF needs root or CAP_BPF+CAP_PERFMON").
  static Result<EbpfPrograms> load(const EbpfConfig& config = {});

  EbpfPrograms(EbpfPrograms&&) noexcept;
  EbpfPrograms& operator=(EbpfPrograms&&) noexcept;
  ~EbpfPrograms();

  // A free slot with a new ring buffer (0: the configured size) and loss
  // counters; records of its processes carry pids of `reader_ns`.  With an
  // `owner_uid`, only what its processes do as that effective uid is
  // recorded (a plain user's session and the setuid programs it runs).
  static constexpr uint32_t kAnyUid = 0xffffffffU;
  Result<EbpfSlot> add_slot(const PidNamespace& reader_ns, uint64_t ring_bytes = 0, uint32_t owner_uid = kAnyUid);
  // Follows process `pid` (a pid of the loader's namespace) and every
  // descendant it forks from now on, in `slot`.  With the loader in the
  // initial pid namespace this takes effect at once; inside one, the kernel
  // only learns which process that number means at the process's next fork
  // or exec, which for a session's init (it forks the command) is in time.
  Result<Ok> track(uint32_t slot, pid_t pid);
  // Stops recording for the slot at once and lets go of its processes; its
  // maps are written no more and replaced when the slot is taken again.
  void remove_slot(uint32_t slot);
  size_t live_slots() const;
  // Handing a map to the programs waits for an RCU grace period (10-30 ms
  // here): a resident loader prepares free slots of the configured size
  // ahead, on a thread of its own (prepare_slot is safe beside the other
  // calls, which stay on one thread), fresh maps already in place, so that
  // add_slot on one waits for nothing.  No process is followed in a
  // prepared slot, so its ring stays empty until a session has it; a freed
  // slot's old maps are never handed out again.  False when no free slot
  // is left or the maps cannot be made.
  bool prepare_slot();
  size_t prepared_slots() const;
  // Whether process `pid` (of the loader's namespace) is followed in some
  // slot now.
  bool is_tracked(pid_t pid) const;

  EbpfCounters counters(uint32_t slot) const;
  const PidNamespace& pidns() const;  // the loader's, measured in the kernel
  uint64_t ring_bytes() const;        // the configured size, rounded
  // "raw_tp:sys_enter", "raw_tp:sched_process_fork", ...
  const std::vector<std::string>& attached() const;
  // "io_uring:io_uring_submit_req: not in this kernel", ...
  const std::vector<std::string>& skipped() const;
  // The kernel's ids of the attached programs.
  std::vector<uint32_t> program_ids() const;

 private:
  struct Impl;
  explicit EbpfPrograms(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cb
