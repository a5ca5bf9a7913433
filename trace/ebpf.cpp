#include "trace/ebpf.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <exception>
#include <optional>

#include "base/fd.h"
#include "host/features.h"
#include "trace/ring_reader.h"

namespace cb {

namespace {

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

std::string utc_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &t);
  char ms[24];
  snprintf(ms, sizeof ms, ".%03ldZ", ts.tv_nsec / 1000000);
  return std::string(buf) + ms;
}

}  // namespace

struct EbpfTracer::Impl {
  std::optional<EbpfPrograms> progs;  // a private load
  uint32_t slot = 0;
  UniqueFd sock;  // the service's connection
  UniqueFd ep;    // the service: the ring and the connection
  std::optional<RingReader> ring;
  std::optional<MappedLosses> losses;
  bool tracking = false;
  PidNamespace ns;
  int64_t rt_offset = 0;
  std::vector<std::string> attached;
  std::vector<std::string> skipped;
  uint64_t garbled = 0;
  uint64_t delivered = 0;
  std::string last_error;
  std::string stopped;

  ~Impl() {
    // The reader's mappings before the programs that fill them.
    ring.reset();
    losses.reset();
    progs.reset();
  }

  Result<Ok> adopt(UniqueFd ring_fd, UniqueFd lost_fd, uint64_t bytes) {
    auto r = RingReader::map(std::move(ring_fd), bytes);
    if (!r) return r.error();
    auto l = MappedLosses::map(std::move(lost_fd));
    if (!l) return l.error();
    ring.emplace(std::move(*r));
    losses.emplace(std::move(*l));
    return Ok{};
  }

  // The service's connection ends only when the service does: its programs
  // went with it, and nothing more will be recorded.
  void check_service() {
    if (!sock || !stopped.empty()) return;
    char c;
    ssize_t n = recv(sock.get(), &c, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR))) return;
    stopped = "recording stopped at " + utc_now() + ": the tracer service ended" +
              (n < 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string());
    epoll_ctl(ep.get(), EPOLL_CTL_DEL, sock.get(), nullptr);
  }

  size_t consume(const RecordFn& fn, size_t budget) {
    if (!ring) return 0;
    return ring->consume(
        [&](std::span<const uint8_t> bytes) {
          // A fresh record each time: decode_into fills only what the
          // record's kind has.
          TraceRecord rec;
          if (auto ok = decode_into(bytes, rt_offset, rec); !ok) {
            ++garbled;
            last_error = ok.error().message;
            return true;
          }
          fn(rec);
          ++delivered;
          return true;
        },
        budget);
  }
};

Result<EbpfTracer> EbpfTracer::open(const EbpfConfig& config) {
  auto progs = EbpfPrograms::load(config);
  if (!progs) return progs.error();
  auto impl = std::make_unique<Impl>();
  impl->ns = progs->pidns();
  auto slot = progs->add_slot(impl->ns);
  if (!slot) return slot.error();
  impl->slot = slot->slot;
  if (auto a = impl->adopt(std::move(slot->ring), std::move(slot->lost), slot->ring_bytes); !a) return a.error();
  impl->attached = progs->attached();
  impl->skipped = progs->skipped();
  impl->progs.emplace(std::move(*progs));
  impl->rt_offset = realtime_offset();
  return EbpfTracer(std::move(impl));
}

Result<EbpfTracer> EbpfTracer::connect_service(const std::string& socket) {
  if (fake_missing("ebpf")) return Error{ENOTSUP, "eBPF tracer disabled by COTTONBOX_FAKE_MISSING=ebpf (test only)"};
  // A test that fakes a tracer that fails to load means every tracer.
  if (fake_missing("tracer-service") || fake_missing("ebpf-load"))
    return Error{ENOENT, "no tracer service (COTTONBOX_FAKE_MISSING, test only)"};
  auto s = connect_tracer_service(socket);
  if (!s) return s.error();
  auto impl = std::make_unique<Impl>();
  impl->sock = std::move(*s);
  impl->ep.reset(epoll_create1(EPOLL_CLOEXEC));
  if (!impl->ep) return Error::from_errno("epoll_create1");
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = impl->sock.get();
  epoll_ctl(impl->ep.get(), EPOLL_CTL_ADD, impl->sock.get(), &ev);
  struct stat st {};
  if (stat("/proc/self/ns/pid", &st) == 0) impl->ns = PidNamespace{st.st_dev, st.st_ino, 0};
  impl->attached = {"tracer service " + socket};
  impl->rt_offset = realtime_offset();
  return EbpfTracer(std::move(impl));
}

Result<Ok> EbpfTracer::track(pid_t pid) {
  if (pid <= 0) return Error{EINVAL, "track: bad pid " + std::to_string(pid)};
  auto& im = *impl_;
  if (im.tracking) return Error{EALREADY, "the tracer follows a session already"};
  if (im.progs) {
    if (auto t = im.progs->track(im.slot, pid); !t) return t.error();
    im.tracking = true;
    return Ok{};
  }
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return Error::from_errno("pidfd_open " + std::to_string(pid));
  auto reg = register_with_tracer(im.sock.get(), pidfd.get());
  if (!reg) return reg.error();
  if (auto a = im.adopt(std::move(reg->ring), std::move(reg->lost), reg->ring_bytes); !a) return a.error();
  im.slot = reg->slot;
  im.ns.level = reg->pidns_level;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = im.ring->fd();
  if (epoll_ctl(im.ep.get(), EPOLL_CTL_ADD, im.ring->fd(), &ev) != 0) return Error::from_errno("epoll on the ring");
  im.tracking = true;
  return Ok{};
}

int EbpfTracer::poll_fd() const {
  if (impl_->ep) return impl_->ep.get();
  return impl_->ring ? impl_->ring->fd() : -1;
}

Result<size_t> EbpfTracer::drain(const RecordFn& fn, size_t budget) {
  impl_->check_service();
  if (budget == 0) return size_t{0};
  return impl_->consume(fn, budget);
}

Result<size_t> EbpfTracer::poll(int timeout_ms, const RecordFn& fn) {
  pollfd pf{poll_fd(), POLLIN, 0};
  if (pf.fd >= 0 && ::poll(&pf, 1, timeout_ms) < 0 && errno != EINTR)
    return Error::from_errno("polling the ring buffer");
  return drain(fn);
}

EbpfCounters EbpfTracer::counters() const {
  if (impl_->progs) return impl_->progs->counters(impl_->slot);
  EbpfCounters c;
  if (impl_->losses) {
    c.lost = impl_->losses->lost();
    c.enter_dropped = impl_->losses->enter_dropped();
  }
  c.records = impl_->delivered + impl_->garbled;
  return c;
}

uint64_t EbpfTracer::lost() const {
  if (!impl_->losses) return 0;
  return impl_->losses->lost() + impl_->losses->enter_dropped();
}

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
bool EbpfTracer::shared() const { return !impl_->progs.has_value(); }
const std::string& EbpfTracer::stopped() const { return impl_->stopped; }
const PidNamespace& EbpfTracer::pidns() const { return impl_->ns; }
int64_t EbpfTracer::realtime_offset_ns() const { return impl_->rt_offset; }
const std::vector<std::string>& EbpfTracer::attached() const { return impl_->attached; }
const std::vector<std::string>& EbpfTracer::skipped() const { return impl_->skipped; }

}  // namespace cb
