#include "trace/ebpf_programs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "host/features.h"
#include "syscalls/table.h"
#include "trace/ebpf_decode.h"

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

struct EbpfPrograms::Impl {
  SkelPtr skel;
  std::vector<LinkPtr> links;
  PidNamespace ns;
  uint64_t ring_bytes = 0;
  std::vector<std::string> attached;
  std::vector<std::string> skipped;
  // Each slot's generation: 0 free, else that of its live session.
  uint32_t gen[CB_SLOTS] = {};
  uint32_t last_gen[CB_SLOTS] = {};
  // Free slots whose new maps are in the outer maps already (prepare_slot).
  struct Prepared {
    UniqueFd ring, lost;
    uint64_t bytes = 0;
  };
  std::unique_ptr<Prepared> prepared[CB_SLOTS];
  // A slot being prepared, on another thread; nobody else takes it.
  bool reserved[CB_SLOTS] = {};
  // The slot state above is shared with a thread preparing slots; the
  // maps' own updates need no lock.
  mutable std::mutex mu;
  bool takeable(uint32_t s) const { return !gen[s] && !prepared[s] && !reserved[s]; }

  // A new ring and loss counters for `slot`, handed to the programs.
  Result<Ok> install(uint32_t slot, uint64_t bytes, UniqueFd& ring, UniqueFd& lost);

  ~Impl() {
    // Six raw tracepoints, where a perf event per syscall took seconds of
    // RCU grace periods to detach, detach in well under a millisecond.
    links.clear();
  }

  Result<Ok> attach_raw(bpf_program* prog, const char* tp) {
    LogCapture log;
    LinkPtr link(bpf_program__attach_raw_tracepoint(prog, tp));
    if (!link) return load_error((std::string("cannot attach to ") + tp).c_str(), errno, log);
    links.push_back(std::move(link));
    attached.push_back(std::string("raw_tp:") + tp);
    return Ok{};
  }

  // Deletes the entries of `map` whose CB_TRACK value names `slot`.
  void sweep(bpf_map* map, size_t key_size, uint32_t slot) {
    int fd = bpf_map__fd(map);
    std::vector<uint32_t> doomed;
    uint32_t key = 0, next = 0;
    void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, &next) == 0) {
      uint32_t v = 0;
      if (bpf_map_lookup_elem(fd, &next, &v) == 0 && CB_TRACK_SLOT(v) == slot) doomed.push_back(next);
      key = next;
      prev = &key;
    }
    (void)key_size;
    for (uint32_t k : doomed) bpf_map_delete_elem(fd, &k);
  }
};

Result<EbpfPrograms> EbpfPrograms::load(const EbpfConfig& config) {
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

  impl->ring_bytes = ring;
  return EbpfPrograms(std::move(impl));
}

Result<Ok> EbpfPrograms::Impl::install(uint32_t slot, uint64_t bytes, UniqueFd& ring, UniqueFd& lost) {
  ring.reset(bpf_map_create(BPF_MAP_TYPE_RINGBUF, "cb_ring", 0, 0, static_cast<uint32_t>(bytes), nullptr));
  if (!ring) return Error::from_errno("cannot create a ring buffer");
  LIBBPF_OPTS(bpf_map_create_opts, lo, .map_flags = BPF_F_MMAPABLE);
  lost.reset(bpf_map_create(BPF_MAP_TYPE_ARRAY, "cb_lost", sizeof(uint32_t), sizeof(cb_lost), 1, &lo));
  if (!lost) return Error::from_errno("cannot create the loss counters");
  int rfd = ring.get(), lfd = lost.get();
  if (bpf_map_update_elem(bpf_map__fd(skel->maps.rings), &slot, &rfd, BPF_ANY) != 0)
    return Error::from_errno("cannot hand the ring buffer to the programs");
  if (bpf_map_update_elem(bpf_map__fd(skel->maps.losts), &slot, &lfd, BPF_ANY) != 0) {
    bpf_map_delete_elem(bpf_map__fd(skel->maps.rings), &slot);
    return Error::from_errno("cannot hand the loss counters to the programs");
  }
  return Ok{};
}

bool EbpfPrograms::prepare_slot() {
  auto& im = *impl_;
  uint32_t slot = 0;
  {
    std::lock_guard lk(im.mu);
    while (slot < CB_SLOTS && !im.takeable(slot)) ++slot;
    if (slot == CB_SLOTS) return false;
    im.reserved[slot] = true;
  }
  // The slow part, unlocked: new maps replace whatever a past session of
  // the slot left in the outer maps.
  auto p = std::make_unique<Impl::Prepared>();
  p->bytes = im.ring_bytes;
  bool ok = im.install(slot, p->bytes, p->ring, p->lost).ok();
  std::lock_guard lk(im.mu);
  im.reserved[slot] = false;
  if (ok) im.prepared[slot] = std::move(p);
  return ok;
}

size_t EbpfPrograms::prepared_slots() const {
  std::lock_guard lk(impl_->mu);
  return static_cast<size_t>(std::count_if(std::begin(impl_->prepared), std::end(impl_->prepared),
                                           [](const auto& p) { return p != nullptr; }));
}

Result<EbpfSlot> EbpfPrograms::add_slot(const PidNamespace& reader_ns, uint64_t ring_bytes, uint32_t owner_uid) {
  auto& im = *impl_;
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t bytes = ring_bytes ? round_up_pow2(std::max(ring_bytes, page)) : im.ring_bytes;
  if (bytes > (1ULL << 31)) return Error{EINVAL, "ring buffer of " + std::to_string(bytes) + " bytes is too large"};
  EbpfSlot out;
  out.ring_bytes = bytes;
  // A prepared slot of this size first; else the first free one (private
  // loads use slot 0; the service hands out the least recently freed slot
  // last, and a slot's stragglers are swept at once anyway).
  uint32_t slot = 0;
  bool ready = false;
  {
    std::lock_guard lk(im.mu);
    while (slot < CB_SLOTS && !(im.prepared[slot] && im.prepared[slot]->bytes == bytes)) ++slot;
    if (slot < CB_SLOTS) {
      out.ring = std::move(im.prepared[slot]->ring);
      out.lost = std::move(im.prepared[slot]->lost);
      im.prepared[slot].reset();
      ready = true;
    } else {
      slot = 0;
      while (slot < CB_SLOTS && !im.takeable(slot)) ++slot;
      if (slot == CB_SLOTS) return Error{EBUSY, "all " + std::to_string(CB_SLOTS) + " tracer slots are in use"};
    }
    // Taken: live from here on for everyone else (its generation is set
    // below, once its maps are in place).
    im.reserved[slot] = true;
  }
  struct Unreserve {
    Impl& im;
    uint32_t slot;
    ~Unreserve() {
      std::lock_guard lk(im.mu);
      im.reserved[slot] = false;
    }
  } unreserve{im, slot};
  if (!ready)
    if (auto r = im.install(slot, bytes, out.ring, out.lost); !r) return r.error();
  out.slot = slot;
  auto* skel = im.skel.get();
  // Counters start from zero for every session of the slot.
  int ncpu = libbpf_num_possible_cpus();
  if (ncpu > 0) {
    std::vector<cb_counters> zero(static_cast<size_t>(ncpu));
    bpf_map_update_elem(bpf_map__fd(skel->maps.counters), &slot, zero.data(), BPF_ANY);
  }
  uint32_t gen = im.last_gen[slot] % 0xffff + 1;
  cb_slot cfg{};
  cfg.gen = gen;
  cfg.pidns_level = reader_ns.level;
  cfg.pidns_ino = static_cast<uint32_t>(reader_ns.ino);
  cfg.owner_uid = owner_uid;
  if (bpf_map_update_elem(bpf_map__fd(skel->maps.slots), &slot, &cfg, BPF_ANY) != 0) {
    bpf_map_delete_elem(bpf_map__fd(skel->maps.rings), &slot);
    bpf_map_delete_elem(bpf_map__fd(skel->maps.losts), &slot);
    return Error::from_errno("cannot open a tracer slot");
  }
  std::lock_guard lk(im.mu);
  im.gen[slot] = im.last_gen[slot] = gen;
  return out;
}

Result<Ok> EbpfPrograms::track(uint32_t slot, pid_t pid) {
  if (pid <= 0) return Error{EINVAL, "track: bad pid " + std::to_string(pid)};
  if (slot >= CB_SLOTS || !impl_->gen[slot]) return Error{EINVAL, "track: no slot " + std::to_string(slot)};
  uint32_t v = CB_TRACK(slot, impl_->gen[slot]);
  auto* skel = impl_->skel.get();
  if (impl_->ns.level == 0) {
    uint32_t key = static_cast<uint32_t>(pid);
    if (bpf_map__update_elem(skel->maps.tracked, &key, sizeof(key), &v, sizeof(v), BPF_ANY) != 0)
      return Error::from_errno("cannot track pid " + std::to_string(pid));
  } else {
    int32_t key = pid;
    if (bpf_map__update_elem(skel->maps.seeds, &key, sizeof(key), &v, sizeof(v), BPF_ANY) != 0)
      return Error::from_errno("cannot track pid " + std::to_string(pid));
  }
  return Ok{};
}

void EbpfPrograms::remove_slot(uint32_t slot) {
  auto& im = *impl_;
  if (slot >= CB_SLOTS || !im.gen[slot]) return;
  auto* skel = im.skel.get();
  // The generation first: from here on nothing more is recorded for it.
  // Its maps stay in the outer maps, written no more, until new ones take
  // their place (install): taking them out would wait for a grace period.
  cb_slot cfg{};
  bpf_map_update_elem(bpf_map__fd(skel->maps.slots), &slot, &cfg, BPF_ANY);
  im.sweep(skel->maps.tracked, sizeof(uint32_t), slot);
  im.sweep(skel->maps.seeds, sizeof(int32_t), slot);
  std::lock_guard lk(im.mu);
  im.gen[slot] = 0;
}

size_t EbpfPrograms::live_slots() const {
  return static_cast<size_t>(
      std::count_if(std::begin(impl_->gen), std::end(impl_->gen), [](uint32_t g) { return g != 0; }));
}

bool EbpfPrograms::is_tracked(pid_t pid) const {
  if (impl_->ns.level != 0) {
    // Only the kernel knows the global number; a seed is what can be asked.
    int32_t key = pid;
    uint32_t v = 0;
    return bpf_map__lookup_elem(impl_->skel->maps.seeds, &key, sizeof(key), &v, sizeof(v), 0) == 0;
  }
  uint32_t key = static_cast<uint32_t>(pid), v = 0;
  if (bpf_map__lookup_elem(impl_->skel->maps.tracked, &key, sizeof(key), &v, sizeof(v), 0) != 0) return false;
  uint32_t slot = CB_TRACK_SLOT(v);
  return slot < CB_SLOTS && impl_->gen[slot] == CB_TRACK_GEN(v);
}

EbpfCounters EbpfPrograms::counters(uint32_t slot) const {
  int ncpu = libbpf_num_possible_cpus();
  EbpfCounters out;
  if (ncpu <= 0) return out;
  std::vector<cb_counters> per_cpu(static_cast<size_t>(ncpu));
  if (bpf_map__lookup_elem(impl_->skel->maps.counters, &slot, sizeof(slot), per_cpu.data(),
                           per_cpu.size() * sizeof(cb_counters), 0) != 0)
    return out;
  for (const auto& c : per_cpu) {
    out.lost += c.lost;
    out.records += c.records;
    out.enter_dropped += c.enter_dropped;
  }
  return out;
}

std::vector<uint32_t> EbpfPrograms::program_ids() const {
  std::vector<uint32_t> ids;
  bpf_program* p = nullptr;
  bpf_object* obj = impl_->skel->obj;
  while ((p = bpf_object__next_program(obj, p)) != nullptr) {
    int fd = bpf_program__fd(p);
    if (fd < 0) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) ids.push_back(info.id);
  }
  return ids;
}

#else  // !COTTONBOX_HAVE_EBPF

struct EbpfPrograms::Impl {
  PidNamespace ns;
  std::vector<std::string> attached, skipped;
};

Result<EbpfPrograms> EbpfPrograms::load(const EbpfConfig&) {
  if (fake_missing("ebpf")) return Error{ENOTSUP, "eBPF tracer disabled by COTTONBOX_FAKE_MISSING=ebpf (test only)"};
  return Error{ENOTSUP, "this cottonbox was built without eBPF support (COTTONBOX_WITH_EBPF=OFF)"};
}
Result<EbpfSlot> EbpfPrograms::add_slot(const PidNamespace&, uint64_t, uint32_t) {
  return Error{ENOTSUP, "no eBPF support"};
}
Result<Ok> EbpfPrograms::track(uint32_t, pid_t) { return Error{ENOTSUP, "no eBPF support"}; }
void EbpfPrograms::remove_slot(uint32_t) {}
size_t EbpfPrograms::live_slots() const { return 0; }
bool EbpfPrograms::prepare_slot() { return false; }
size_t EbpfPrograms::prepared_slots() const { return 0; }
bool EbpfPrograms::is_tracked(pid_t) const { return false; }
EbpfCounters EbpfPrograms::counters(uint32_t) const { return {}; }
std::vector<uint32_t> EbpfPrograms::program_ids() const { return {}; }

#endif

EbpfPrograms::EbpfPrograms(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EbpfPrograms::EbpfPrograms(EbpfPrograms&&) noexcept = default;
EbpfPrograms& EbpfPrograms::operator=(EbpfPrograms&&) noexcept = default;
EbpfPrograms::~EbpfPrograms() = default;

const PidNamespace& EbpfPrograms::pidns() const { return impl_->ns; }
#ifdef COTTONBOX_HAVE_EBPF
uint64_t EbpfPrograms::ring_bytes() const { return impl_->ring_bytes; }
#else
uint64_t EbpfPrograms::ring_bytes() const { return 0; }
#endif
const std::vector<std::string>& EbpfPrograms::attached() const { return impl_->attached; }
const std::vector<std::string>& EbpfPrograms::skipped() const { return impl_->skipped; }

}  // namespace cb
