#include "trace/ebpf.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <exception>

#include "base/fd.h"
#include "host/features.h"
#include "trace/core_btf.h"

#ifdef COTTONBOX_HAVE_EBPF
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cb_calibrate.skel.h"
#include "cottonbox.skel.h"
#endif

namespace cb {

#ifdef COTTONBOX_HAVE_EBPF

namespace {

// Owners for libbpf objects, so that every early return cleans up.
template <auto F>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    F(p);
  }
};
using SkelPtr = std::unique_ptr<cottonbox_bpf, Deleter<&cottonbox_bpf__destroy>>;
using CalibratePtr = std::unique_ptr<cb_calibrate_bpf, Deleter<&cb_calibrate_bpf__destroy>>;
using LinkPtr = std::unique_ptr<bpf_link, Deleter<&bpf_link__destroy>>;
using RingPtr = std::unique_ptr<ring_buffer, Deleter<&ring_buffer__free>>;

// libbpf reports through a global print callback; while a LogCapture is
// alive on this thread, its warnings go into a string for error messages.
thread_local std::string* t_log = nullptr;

int capture_print(enum libbpf_print_level level, const char* fmt, va_list ap) {
  if (!t_log || level == LIBBPF_DEBUG) return 0;
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return 0;
  std::string s(static_cast<size_t>(n) + 1, '\0');
  vsnprintf(s.data(), s.size(), fmt, ap);
  s.pop_back();
  t_log->append(s);
  // The verifier's log can run to megabytes; its end says what failed.
  if (t_log->size() > (1u << 20)) t_log->erase(0, t_log->size() - (1u << 19));
  return 0;
}

class LogCapture {
 public:
  LogCapture() : prev_(libbpf_set_print(capture_print)) { t_log = &log_; }
  ~LogCapture() {
    t_log = nullptr;
    libbpf_set_print(prev_);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  void clear() { log_.clear(); }
  // The last lines, which is where libbpf and the verifier say what failed.
  std::string tail() const {
    if (log_.empty()) return {};
    std::string t = log_.size() > 2000 ? "..." + log_.substr(log_.size() - 2000) : log_;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return "\n" + t;
  }

 private:
  std::string log_;
  libbpf_print_fn_t prev_;
};

// Privileges are checked before anything is loaded, so EACCES here is the
// verifier refusing a program, and EPERM a missing capability or a lockdown.
Error load_error(const char* what, int err, const LogCapture& log) {
  if (err == EPERM) return Error{err, std::string(what) + ": BPF needs root or CAP_BPF+CAP_PERFMON" + log.tail()};
  if (err == EACCES) return Error{err, std::string(what) + ": refused by the kernel's BPF verifier" + log.tail()};
  return Error{err, std::string(what) + ": " + std::strerror(err) + log.tail()};
}

uint64_t round_up_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

int64_t now(clockid_t c) {
  timespec ts{};
  clock_gettime(c, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few samples.
int64_t realtime_offset() {
  int64_t best_gap = INT64_MAX, offset = 0;
  for (int i = 0; i < 5; ++i) {
    int64_t m1 = now(CLOCK_MONOTONIC), r = now(CLOCK_REALTIME), m2 = now(CLOCK_MONOTONIC);
    if (m2 - m1 < best_gap) {
      best_gap = m2 - m1;
      offset = r - (m1 + (m2 - m1) / 2);
    }
  }
  return offset;
}

// The kernel's whole BTF, named as the object's custom BTF when the cut-down
// one cannot be used: left to itself, libbpf 1.1 parses these 5 MB once more
// for every object.
constexpr const char* kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

// Learns the calling process's pid namespace from the kernel (see
// bpf/cb_calibrate.bpf.c for why user space cannot).
Result<PidNamespace> calibrate() {
  struct stat st {};
  if (stat("/proc/self/ns/pid", &st) != 0) return Error::from_errno("cannot stat /proc/self/ns/pid");
  // The initial pid namespace has a fixed inode number (PROC_PID_INIT_INO),
  // one that no other namespace can have: there, the common case, the
  // program need not run, and its load and CO-RE pass are saved.
  constexpr uint64_t kInitPidNsIno = 0xEFFFFFFCU;
  if (st.st_ino == kInitPidNsIno) return PidNamespace{st.st_dev, st.st_ino, 0};
  LogCapture log;
  LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = kVmlinuxBtf);
  CalibratePtr c(cb_calibrate_bpf__open_opts(&oo));
  if (!c) return load_error("cannot open the calibration program", errno, log);
  c->rodata->ns_dev = st.st_dev;
  c->rodata->ns_ino = st.st_ino;
  if (int err = cb_calibrate_bpf__load(c.get())) return load_error("cannot load the calibration program", -err, log);
  LIBBPF_OPTS(bpf_test_run_opts, opts);
  if (bpf_prog_test_run_opts(bpf_program__fd(c->progs.cb_calibrate), &opts) != 0)
    return load_error("cannot run the calibration program", errno, log);
  const auto* b = c->bss;
  if (!b->ran) return Error{EINVAL, "the calibration program did not run"};
  if (b->inum != st.st_ino)
    return Error{EINVAL, "the kernel places this process in pid namespace " + std::to_string(b->inum) +
                             " but /proc/self/ns/pid says " + std::to_string(st.st_ino)};
  if (b->helper_ret != 0 || b->ns_tgid != getpid())
    return Error{EINVAL, "bpf_get_ns_current_pid_tgid disagrees with getpid() (" + std::to_string(b->ns_tgid) + " vs " +
                             std::to_string(getpid()) + ")"};
  return PidNamespace{st.st_dev, st.st_ino, b->level};
}

}  // namespace

struct EbpfTracer::Impl {
  SkelPtr skel;
  std::vector<LinkPtr> links;
  RingPtr ring;  // last: freed first
  PidNamespace ns;
  int64_t rt_offset = 0;
  std::vector<std::string> attached;
  std::vector<std::string> skipped;
  uint64_t garbled = 0;
  uint64_t delivered = 0;
  std::string last_error;
  const RecordFn* fn = nullptr;
  size_t budget = 0;
  std::exception_ptr exc;

  ~Impl() {
    // The ring first (its callbacks point here), then the links: six raw
    // tracepoints, where a perf event per syscall took seconds of RCU grace
    // periods to detach, detach in well under a millisecond.
    ring.reset();
    links.clear();
  }

  static int on_sample(void* ctx, void* data, size_t size) {
    auto* self = static_cast<Impl*>(ctx);
    TraceRecord rec;
    if (auto ok = decode_into({static_cast<const uint8_t*>(data), size}, self->rt_offset, rec); !ok) {
      ++self->garbled;
      self->last_error = ok.error().message;
      return 0;
    }
    try {
      (*self->fn)(rec);
    } catch (...) {
      self->exc = std::current_exception();
      return -ECANCELED;
    }
    ++self->delivered;
    // Stops the ring's loop with this record consumed.
    if (--self->budget == 0) return -EAGAIN;
    return 0;
  }

  Result<Ok> attach_raw(bpf_program* prog, const char* tp) {
    LogCapture log;
    LinkPtr link(bpf_program__attach_raw_tracepoint(prog, tp));
    if (!link) return load_error((std::string("cannot attach to ") + tp).c_str(), errno, log);
    links.push_back(std::move(link));
    attached.push_back(std::string("raw_tp:") + tp);
    return Ok{};
  }
};

Result<EbpfTracer> EbpfTracer::open(const EbpfConfig& config) {
  if (fake_missing("ebpf")) return Error{ENOTSUP, "eBPF tracer disabled by COTTONBOX_FAKE_MISSING=ebpf (test only)"};
  if (fake_missing("ebpf-load"))
    return Error{ENOTSUP, "the tracer's programs failed to load (COTTONBOX_FAKE_MISSING=ebpf-load, test only)"};
  if (!has_bpf_privileges()) return Error{EPERM, "BPF needs root or CAP_BPF+CAP_PERFMON"};
  if (access(kVmlinuxBtf, R_OK) != 0)
    return Error{ENOTSUP, "kernel lacks BTF (/sys/kernel/btf/vmlinux): the tracer's CO-RE programs cannot be placed"};
  {
    LogCapture quiet;
    if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, nullptr) == 0)
      return Error{ENOTSUP, "kernel lacks BPF ring buffers (Linux 5.8 or later)"};
    if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, nullptr) == 0)
      return Error{ENOTSUP, "kernel lacks BPF tracepoint programs (CONFIG_BPF_EVENTS)"};
  }
  std::string tracefs_where;
  auto tracefs = open_tracefs(&tracefs_where);
  if (!tracefs) return tracefs.error();
  if (faccessat(tracefs->get(), "events/syscalls", F_OK, 0) != 0)
    return Error{ENOTSUP, "kernel lacks syscall tracepoints (CONFIG_FTRACE_SYSCALLS)"};

  auto impl = std::make_unique<Impl>();
  auto ns = calibrate();
  if (!ns) return ns.error();
  impl->ns = *ns;

  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t ring = round_up_pow2(std::max(config.ring_bytes, page));
  if (ring > (1ULL << 31)) return Error{EINVAL, "ring buffer of " + std::to_string(ring) + " bytes is too large"};
  // A program that CO-RE cannot place would fail the whole load: leave the
  // io_uring one out on kernels without the tracepoint it reads.
  bool io_uring_tp = faccessat(tracefs->get(), "events/io_uring/io_uring_submit_req", F_OK, 0) == 0;
  if (!io_uring_tp) impl->skipped.push_back("io_uring:io_uring_submit_req: not in this kernel");

  LogCapture log;
  auto load = [&](const char* btf_path) -> Result<Ok> {
    LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = btf_path);
    impl->skel.reset(cottonbox_bpf__open_opts(&oo));
    if (!impl->skel) return load_error("cannot open the tracer's BPF object", errno, log);
    auto* skel = impl->skel.get();
    skel->rodata->sup_pidns_level = impl->ns.level;
    skel->rodata->sup_pidns_ino = static_cast<uint32_t>(impl->ns.ino);
    // Every CPU may hold back its threshold at once: together about a
    // quarter of the ring (a page per CPU at least), so a reader that wakes
    // late still finds room.
    long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_CONF));
    skel->rodata->wakeup_bytes =
        std::max<uint64_t>(page, std::min<uint64_t>(config.wakeup_bytes, ring / 4 / static_cast<uint64_t>(cpus)));
    skel->rodata->wakeup_mask = static_cast<uint32_t>(round_up_pow2(std::max<uint32_t>(config.wakeup_records, 1)) - 1);
    if (int err = bpf_map__set_max_entries(skel->maps.rb, static_cast<uint32_t>(ring)))
      return load_error("cannot size the ring buffer", -err, log);
    if (!io_uring_tp) bpf_program__set_autoload(skel->progs.cb_io_uring, false);
    if (int err = cottonbox_bpf__load(skel)) return load_error("cannot load the tracer's BPF programs", -err, log);
    return Ok{};
  };
  // CO-RE against the cut-down kernel BTF (trace/core_btf.h); should that
  // fail, whatever the reason, against the whole of it.
  Result<Ok> loaded = Error{0, "no cut-down BTF"};
  if (!config.core_btf_dir.empty()) {
    size_t elf_size = 0;
    const void* elf = cottonbox_bpf__elf_bytes(&elf_size);
    if (auto core = core_btf_file(elf, elf_size, config.core_btf_dir)) {
      loaded = load(core->c_str());
      if (!loaded) {
        unlink(core->c_str());  // remade by the next session
        log.clear();
      }
    }
  }
  if (!loaded) loaded = load(kVmlinuxBtf);
  if (!loaded) return loaded.error();
  auto* skel = impl->skel.get();

  // Process lifecycle first: a fork during the attach loop is then not missed.
  for (auto [prog, tp] :
       {std::pair{skel->progs.cb_fork, "sched_process_fork"}, std::pair{skel->progs.cb_exec, "sched_process_exec"},
        std::pair{skel->progs.cb_exit, "sched_process_exit"}})
    if (auto r = impl->attach_raw(prog, tp); !r) return r.error();
  if (io_uring_tp) {
    if (auto r = impl->attach_raw(skel->progs.cb_io_uring, "io_uring_submit_req"); !r)
      impl->skipped.push_back("io_uring:io_uring_submit_req: " + r.error().message);
  }

  // The table before the programs that read it; exit before enter, so that
  // no saved enter waits for an exit that is not attached yet.
  int desc_fd = bpf_map__fd(skel->maps.sysdesc);
  std::vector<uint32_t> keys;
  std::vector<cb_sysdesc> descs;
  for (const auto& s : syscall_table()) {
    if (!s.traced) continue;
    if (s.nr < 0 || s.nr >= CB_NR_MAX)
      return Error{EINVAL, "traced syscall table: bad entry for " + std::string(s.name)};
    keys.push_back(static_cast<uint32_t>(s.nr));
    descs.push_back(to_sysdesc(s));
  }
  // One call for the table (the start waits for every one of them); one
  // per entry where the kernel has no batch updates for arrays (< 5.6).
  {
    LIBBPF_OPTS(bpf_map_batch_opts, bo);
    auto count = static_cast<uint32_t>(keys.size());
    if (bpf_map_update_batch(desc_fd, keys.data(), descs.data(), &count, &bo) != 0 || count != keys.size()) {
      for (size_t i = 0; i < keys.size(); ++i)
        if (bpf_map_update_elem(desc_fd, &keys[i], &descs[i], BPF_ANY) != 0)
          return Error::from_errno("cannot program the syscall table");
    }
  }
  for (auto [prog, tp] :
       {std::pair{skel->progs.cb_sys_exit, "sys_exit"}, std::pair{skel->progs.cb_sys_enter, "sys_enter"}})
    if (auto r = impl->attach_raw(prog, tp); !r) return r.error();

  impl->ring.reset(ring_buffer__new(bpf_map__fd(skel->maps.rb), &Impl::on_sample, impl.get(), nullptr));
  if (!impl->ring) return load_error("cannot open the ring buffer", errno, log);
  impl->rt_offset = realtime_offset();
  return EbpfTracer(std::move(impl));
}

Result<Ok> EbpfTracer::track(pid_t pid) {
  if (pid <= 0) return Error{EINVAL, "track: bad pid " + std::to_string(pid)};
  uint8_t one = 1;
  if (impl_->ns.level == 0) {
    uint32_t key = static_cast<uint32_t>(pid);
    if (bpf_map__update_elem(impl_->skel->maps.tracked, &key, sizeof(key), &one, sizeof(one), BPF_ANY) != 0)
      return Error::from_errno("cannot track pid " + std::to_string(pid));
  } else {
    int32_t key = pid;
    if (bpf_map__update_elem(impl_->skel->maps.seeds, &key, sizeof(key), &one, sizeof(one), BPF_ANY) != 0)
      return Error::from_errno("cannot track pid " + std::to_string(pid));
  }
  return Ok{};
}

int EbpfTracer::poll_fd() const { return ring_buffer__epoll_fd(impl_->ring.get()); }

Result<size_t> EbpfTracer::drain(const RecordFn& fn, size_t budget) {
  if (budget == 0) return size_t{0};
  impl_->fn = &fn;
  impl_->budget = budget;
  uint64_t before = impl_->delivered;
  int n = ring_buffer__consume(impl_->ring.get());
  impl_->fn = nullptr;
  impl_->budget = 0;
  if (impl_->exc) std::rethrow_exception(std::exchange(impl_->exc, nullptr));
  if (n < 0 && n != -EAGAIN) return Error{-n, std::string("reading the ring buffer: ") + std::strerror(-n)};
  return static_cast<size_t>(impl_->delivered - before);
}

Result<size_t> EbpfTracer::poll(int timeout_ms, const RecordFn& fn) {
  impl_->fn = &fn;
  uint64_t before = impl_->delivered;
  impl_->budget = SIZE_MAX;
  int n = ring_buffer__poll(impl_->ring.get(), timeout_ms);
  impl_->fn = nullptr;
  if (impl_->exc) std::rethrow_exception(std::exchange(impl_->exc, nullptr));
  if (n < 0 && n != -EINTR) return Error{-n, std::string("polling the ring buffer: ") + std::strerror(-n)};
  return static_cast<size_t>(impl_->delivered - before);
}

EbpfCounters EbpfTracer::counters() const {
  int ncpu = libbpf_num_possible_cpus();
  EbpfCounters out;
  if (ncpu <= 0) return out;
  std::vector<cb_counters> per_cpu(static_cast<size_t>(ncpu));
  uint32_t key = 0;
  if (bpf_map__lookup_elem(impl_->skel->maps.counters, &key, sizeof(key), per_cpu.data(),
                           per_cpu.size() * sizeof(cb_counters), 0) != 0)
    return out;
  for (const auto& c : per_cpu) {
    out.lost += c.lost;
    out.records += c.records;
    out.enter_dropped += c.enter_dropped;
  }
  return out;
}

uint64_t EbpfTracer::lost() const {
  auto c = counters();
  return c.lost + c.enter_dropped;
}

#else  // !COTTONBOX_HAVE_EBPF

struct EbpfTracer::Impl {
  PidNamespace ns;
  int64_t rt_offset = 0;
  std::vector<std::string> attached, skipped;
  uint64_t garbled = 0;
  std::string last_error;
};

Result<EbpfTracer> EbpfTracer::open(const EbpfConfig&) {
  if (fake_missing("ebpf")) return Error{ENOTSUP, "eBPF tracer disabled by COTTONBOX_FAKE_MISSING=ebpf (test only)"};
  return Error{ENOTSUP, "this cottonbox was built without eBPF support (COTTONBOX_WITH_EBPF=OFF)"};
}
Result<Ok> EbpfTracer::track(pid_t) { return Error{ENOTSUP, "no eBPF support"}; }
int EbpfTracer::poll_fd() const { return -1; }
Result<size_t> EbpfTracer::drain(const RecordFn&, size_t) { return size_t{0}; }
Result<size_t> EbpfTracer::poll(int, const RecordFn&) { return size_t{0}; }
EbpfCounters EbpfTracer::counters() const { return {}; }
uint64_t EbpfTracer::lost() const { return 0; }

#endif

bool EbpfTracer::built_in() {
#ifdef COTTONBOX_HAVE_EBPF
  return true;
#else
  return false;
#endif
}

EbpfTracer::EbpfTracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EbpfTracer::EbpfTracer(EbpfTracer&&) noexcept = default;
EbpfTracer& EbpfTracer::operator=(EbpfTracer&&) noexcept = default;
EbpfTracer::~EbpfTracer() = default;

uint64_t EbpfTracer::garbled() const { return impl_->garbled; }
const std::string& EbpfTracer::last_decode_error() const { return impl_->last_error; }
const PidNamespace& EbpfTracer::pidns() const { return impl_->ns; }
int64_t EbpfTracer::realtime_offset_ns() const { return impl_->rt_offset; }
const std::vector<std::string>& EbpfTracer::attached() const { return impl_->attached; }
const std::vector<std::string>& EbpfTracer::skipped() const { return impl_->skipped; }

}  // namespace cb
