#include "tracer/ebpf.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <exception>

#include "tracer/fd.h"
#include "tracer/features.h"

#ifdef COTTONBOX_HAVE_EBPF
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>

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
  if (err == EPERM)
    return Error{err, std::string(what) + ": BPF needs root or CAP_BPF+CAP_PERFMON" + log.tail()};
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

// Named as a custom BTF so that each object parses it once: left to itself,
// libbpf 1.1 parses vmlinux's 5 MB of BTF once more for every object, which
// cost a third of the tracer's start.
constexpr const char* kVmlinuxBtf = "/sys/kernel/btf/vmlinux";

int read_tp_id(const UniqueFd& tracefs, const std::string& event) {
  UniqueFd fd(openat(tracefs.get(), ("events/" + event + "/id").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return -1;
  char buf[32] = {};
  ssize_t n = read(fd.get(), buf, sizeof(buf) - 1);
  if (n <= 0) return -1;
  return std::atoi(buf);
}

// Learns the calling process's pid namespace from the kernel (see
// bpf/cb_calibrate.bpf.c for why user space cannot).
Result<PidNamespace> calibrate() {
  struct stat st{};
  if (stat("/proc/self/ns/pid", &st) != 0) return Error::from_errno("cannot stat /proc/self/ns/pid");
  LogCapture log;
  LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = kVmlinuxBtf);
  CalibratePtr c(cb_calibrate_bpf__open_opts(&oo));
  if (!c) return load_error("cannot open the calibration program", errno, log);
  c->rodata->ns_dev = st.st_dev;
  c->rodata->ns_ino = st.st_ino;
  if (int err = cb_calibrate_bpf__load(c.get()))
    return load_error("cannot load the calibration program", -err, log);
  LIBBPF_OPTS(bpf_test_run_opts, opts);
  if (bpf_prog_test_run_opts(bpf_program__fd(c->progs.cb_calibrate), &opts) != 0)
    return load_error("cannot run the calibration program", errno, log);
  const auto* b = c->bss;
  if (!b->ran) return Error{EINVAL, "the calibration program did not run"};
  if (b->inum != st.st_ino)
    return Error{EINVAL, "the kernel places this process in pid namespace " + std::to_string(b->inum) +
                             " but /proc/self/ns/pid says " + std::to_string(st.st_ino)};
  if (b->helper_ret != 0 || b->ns_tgid != getpid())
    return Error{EINVAL, "bpf_get_ns_current_pid_tgid disagrees with getpid() (" + std::to_string(b->ns_tgid) +
                             " vs " + std::to_string(getpid()) + ")"};
  return PidNamespace{st.st_dev, st.st_ino, b->level};
}

int perf_open_tracepoint(int id) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.size = sizeof(attr);
  attr.config = static_cast<uint64_t>(id);
  attr.sample_period = 1;
  attr.wakeup_events = 1;
  // pid -1 with one cpu: a BPF program on a tracepoint runs on every CPU.
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC));
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
  std::exception_ptr exc;

  std::vector<int> perf_fds;  // owned by the links; listed for the hand-off below

  ~Impl() {
    ring.reset();
    if (skel) {
      // Nothing of the session is followed any more, whatever runs on.
      clear_map(skel->maps.tracked, sizeof(uint32_t));
      clear_map(skel->maps.seeds, sizeof(int32_t));
    }
    // Detaching from a syscall tracepoint costs the kernel an RCU grace
    // period under a global mutex: one after another, ~90 of them take
    // seconds, and a process exiting with them attached waits as long.  A
    // reaper process inherits the fds and pays for it in the background; our
    // own copies then close at once.
    std::vector<int> fds = perf_fds;
    for (const auto& l : links) fds.push_back(bpf_link__fd(l.get()));
    UniqueFd go = hand_off(std::move(fds));
    links.clear();
    // go closes last: the reaper starts once our copies are gone, so that its
    // closes are the final ones, which pay.
  }

  static void clear_map(bpf_map* map, size_t key_size) {
    std::vector<uint8_t> key(key_size), next(key_size);
    while (bpf_map__get_next_key(map, nullptr, next.data(), key_size) == 0)
      if (bpf_map__delete_elem(map, next.data(), key_size, 0) != 0) break;
  }

  // Leaves `fds` open in a detached grandchild that closes them, and exits,
  // once the returned fd is closed.  An empty fd: no reaper, our own closes pay.
  static UniqueFd hand_off(std::vector<int> fds) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return {};
    UniqueFd rd(p[0]), wr(p[1]);
    fds.push_back(rd.get());
    std::sort(fds.begin(), fds.end());
    pid_t child = fork();
    if (child < 0) return {};
    if (child == 0) {
      // Only system calls from here: the parent may have threads.
      if (syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, 0) != 0) _exit(0);
      unsigned lo = 0;
      for (int fd : fds) {
        if (static_cast<unsigned>(fd) > lo) syscall(SYS_close_range, lo, static_cast<unsigned>(fd) - 1, 0);
        lo = static_cast<unsigned>(fd) + 1;
      }
      syscall(SYS_close_range, lo, ~0U, 0);
      if (chdir("/") != 0) {
      }
      char c;
      while (read(p[0], &c, 1) < 0 && errno == EINTR) {
      }
      for (int fd : fds) close(fd);
      _exit(0);
    }
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    return wr;
  }

  static int on_sample(void* ctx, void* data, size_t size) {
    auto* self = static_cast<Impl*>(ctx);
    auto rec = decode({static_cast<const uint8_t*>(data), size}, self->rt_offset);
    if (!rec) {
      ++self->garbled;
      self->last_error = rec.error().message;
      return 0;
    }
    try {
      (*self->fn)(*rec);
    } catch (...) {
      self->exc = std::current_exception();
      return -ECANCELED;
    }
    ++self->delivered;
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

  Result<Ok> attach_tp(bpf_program* prog, const UniqueFd& tracefs, const std::string& event) {
    int id = read_tp_id(tracefs, event);
    if (id < 0) return Error{ENOENT, event + ": not in this kernel"};
    UniqueFd pfd(perf_open_tracepoint(id));
    if (!pfd) return Error::from_errno("perf_event_open(" + event + ")");
    LogCapture log;
    LinkPtr link(bpf_program__attach_perf_event(prog, pfd.get()));
    if (!link) return load_error(("cannot attach to " + event).c_str(), errno, log);
    perf_fds.push_back(pfd.release());  // the link owns it now
    links.push_back(std::move(link));
    std::string name = event;
    name[name.find('/')] = ':';
    attached.push_back(name);
    return Ok{};
  }
};

Result<EbpfTracer> EbpfTracer::open(const EbpfConfig& config) {
  if (fake_missing("ebpf"))
    return Error{ENOTSUP, "eBPF tracer disabled by COTTONBOX_FAKE_MISSING=ebpf (test only)"};
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

  LogCapture log;
  LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = kVmlinuxBtf);
  impl->skel.reset(cottonbox_bpf__open_opts(&oo));
  if (!impl->skel) return load_error("cannot open the tracer's BPF object", errno, log);
  auto* skel = impl->skel.get();
  skel->rodata->sup_pidns_level = impl->ns.level;
  skel->rodata->sup_pidns_ino = static_cast<uint32_t>(impl->ns.ino);
  skel->rodata->wakeup_bytes = config.wakeup_bytes;
  skel->rodata->wakeup_mask = static_cast<uint32_t>(round_up_pow2(std::max<uint32_t>(config.wakeup_records, 1)) - 1);
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t ring = round_up_pow2(std::max(config.ring_bytes, page));
  if (ring > (1ULL << 31)) return Error{EINVAL, "ring buffer of " + std::to_string(ring) + " bytes is too large"};
  if (int err = bpf_map__set_max_entries(skel->maps.rb, static_cast<uint32_t>(ring)))
    return load_error("cannot size the ring buffer", -err, log);

  // A program that CO-RE cannot place would fail the whole load: leave the
  // io_uring one out on kernels without the tracepoint it reads.
  bool io_uring_tp = faccessat(tracefs->get(), "events/io_uring/io_uring_submit_req", F_OK, 0) == 0;
  if (!io_uring_tp) {
    bpf_program__set_autoload(skel->progs.cb_io_uring, false);
    impl->skipped.push_back("io_uring:io_uring_submit_req: not in this kernel");
  }
  if (int err = cottonbox_bpf__load(skel)) return load_error("cannot load the tracer's BPF programs", -err, log);

  // Process lifecycle first: a fork during the attach loop is then not missed.
  for (auto [prog, tp] : {std::pair{skel->progs.cb_fork, "sched_process_fork"},
                          std::pair{skel->progs.cb_exec, "sched_process_exec"},
                          std::pair{skel->progs.cb_exit, "sched_process_exit"}})
    if (auto r = impl->attach_raw(prog, tp); !r) return r.error();
  if (io_uring_tp) {
    if (auto r = impl->attach_raw(skel->progs.cb_io_uring, "io_uring_submit_req"); !r)
      impl->skipped.push_back("io_uring:io_uring_submit_req: " + r.error().message);
  }

  bpf_program* enter_by_nargs[] = {nullptr,
                                   skel->progs.cb_sys_enter1,
                                   skel->progs.cb_sys_enter2,
                                   skel->progs.cb_sys_enter3,
                                   skel->progs.cb_sys_enter4,
                                   skel->progs.cb_sys_enter5,
                                   skel->progs.cb_sys_enter6};
  int desc_fd = bpf_map__fd(skel->maps.sysdesc);
  for (const auto& s : traced_syscalls()) {
    std::string name(s.name);
    if (s.nargs < 1 || s.nargs > 6 || s.nr < 0 || s.nr >= CB_NR_MAX)
      return Error{EINVAL, "traced syscall table: bad entry for " + name};
    // exit before enter: an enter saved without its exit attached would linger
    auto x = impl->attach_tp(skel->progs.cb_sys_exit, *tracefs, "syscalls/sys_exit_" + name);
    if (!x) {
      if (x.error().err != ENOENT) return x.error();
      impl->skipped.push_back("syscalls:" + name + ": not in this kernel");
      continue;
    }
    auto e = impl->attach_tp(enter_by_nargs[s.nargs], *tracefs, "syscalls/sys_enter_" + name);
    if (!e) {
      if (e.error().err != ENOENT) return e.error();
      impl->skipped.push_back("syscalls:" + name + ": not in this kernel");
      continue;
    }
    cb_sysdesc d = to_sysdesc(s);
    uint32_t key = static_cast<uint32_t>(s.nr);
    if (bpf_map_update_elem(desc_fd, &key, &d, BPF_ANY) != 0)
      return Error::from_errno("cannot program the syscall table");
  }

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

Result<size_t> EbpfTracer::drain(const RecordFn& fn) {
  impl_->fn = &fn;
  uint64_t before = impl_->delivered;
  int n = ring_buffer__consume(impl_->ring.get());
  impl_->fn = nullptr;
  if (impl_->exc) std::rethrow_exception(std::exchange(impl_->exc, nullptr));
  if (n < 0) return Error{-n, std::string("reading the ring buffer: ") + std::strerror(-n)};
  return static_cast<size_t>(impl_->delivered - before);
}

Result<size_t> EbpfTracer::poll(int timeout_ms, const RecordFn& fn) {
  impl_->fn = &fn;
  uint64_t before = impl_->delivered;
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
  if (fake_missing("ebpf"))
    return Error{ENOTSUP, "eBPF tracer disabled by COTTONBOX_FAKE_MISSING=ebpf (test only)"};
  return Error{ENOTSUP, "this cottonbox was built without eBPF support (COTTONBOX_WITH_EBPF=OFF)"};
}
Result<Ok> EbpfTracer::track(pid_t) { return Error{ENOTSUP, "no eBPF support"}; }
int EbpfTracer::poll_fd() const { return -1; }
Result<size_t> EbpfTracer::drain(const RecordFn&) { return size_t{0}; }
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
