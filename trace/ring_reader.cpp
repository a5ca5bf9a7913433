#include "trace/ring_reader.h"

#include "bpf/cb_wire.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

namespace cb {

namespace {

// include/uapi/linux/bpf.h
constexpr uint32_t kBusyBit = 1U << 31;
constexpr uint32_t kDiscardBit = 1U << 30;
constexpr uint32_t kHeaderBytes = 8;

uint64_t load_acquire(const uint8_t* p) {
  return std::atomic_ref<const uint64_t>(*reinterpret_cast<const uint64_t*>(p)).load(std::memory_order_acquire);
}

}  // namespace

Result<RingReader> RingReader::map(UniqueFd fd, uint64_t data_bytes) {
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0) return Error{EINVAL, "no page size"};
  if (data_bytes < static_cast<uint64_t>(page) || (data_bytes & (data_bytes - 1)) != 0 || data_bytes > (1ULL << 31))
    return Error{EINVAL, "ring buffer size " + std::to_string(data_bytes) + " is not a power of two of pages"};
  RingReader r;
  r.page_ = static_cast<size_t>(page);
  r.mask_ = data_bytes - 1;
  void* c = mmap(nullptr, r.page_, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (c == MAP_FAILED) return Error::from_errno("cannot map the ring buffer's consumer page");
  r.consumer_ = static_cast<uint8_t*>(c);
  void* p = mmap(nullptr, r.page_ + 2 * data_bytes, PROT_READ, MAP_SHARED, fd.get(), static_cast<off_t>(r.page_));
  if (p == MAP_FAILED) return Error::from_errno("cannot map the ring buffer's data");
  r.producer_ = static_cast<uint8_t*>(p);
  r.fd_ = std::move(fd);
  return r;
}

RingReader::RingReader(RingReader&& o) noexcept
    : fd_(std::move(o.fd_)),
      consumer_(std::exchange(o.consumer_, nullptr)),
      producer_(std::exchange(o.producer_, nullptr)),
      page_(o.page_),
      mask_(o.mask_) {}

RingReader& RingReader::operator=(RingReader&& o) noexcept {
  if (this != &o) {
    unmap();
    fd_ = std::move(o.fd_);
    consumer_ = std::exchange(o.consumer_, nullptr);
    producer_ = std::exchange(o.producer_, nullptr);
    page_ = o.page_;
    mask_ = o.mask_;
  }
  return *this;
}

RingReader::~RingReader() { unmap(); }

void RingReader::unmap() {
  if (consumer_) munmap(consumer_, page_);
  if (producer_) munmap(producer_, page_ + 2 * (mask_ + 1));
  consumer_ = producer_ = nullptr;
}

size_t RingReader::consume(const Fn& fn, size_t budget) {
  if (!consumer_ || budget == 0) return 0;
  auto cons = std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(consumer_));
  const uint8_t* data = producer_ + page_;
  uint64_t pos = cons.load(std::memory_order_acquire);
  size_t handed = 0;
  for (;;) {
    uint64_t prod = load_acquire(producer_);
    if (pos >= prod) return handed;
    while (pos < prod) {
      const uint8_t* rec = data + (pos & mask_);
      uint32_t len =
          std::atomic_ref<const uint32_t>(*reinterpret_cast<const uint32_t*>(rec)).load(std::memory_order_acquire);
      if (len & kBusyBit) return handed;  // the producer is still writing it
      uint32_t bytes = len & ~(kBusyBit | kDiscardBit);
      uint64_t next = pos + ((bytes + kHeaderBytes + 7) & ~7U);
      bool more = true;
      if (!(len & kDiscardBit)) {
        try {
          more = fn({rec + kHeaderBytes, bytes});
        } catch (...) {
          cons.store(next, std::memory_order_release);
          throw;
        }
        ++handed;
      }
      pos = next;
      cons.store(pos, std::memory_order_release);
      if (!more || handed >= budget) return handed;
    }
  }
}

Result<MappedLosses> MappedLosses::map(UniqueFd fd) {
  MappedLosses m;
  m.size_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, m.size_, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) return Error::from_errno("cannot map the tracer's loss counters");
  m.page_ = static_cast<uint8_t*>(p);
  m.fd_ = std::move(fd);
  return m;
}

MappedLosses::MappedLosses(MappedLosses&& o) noexcept
    : fd_(std::move(o.fd_)), page_(std::exchange(o.page_, nullptr)), size_(o.size_) {}

MappedLosses& MappedLosses::operator=(MappedLosses&& o) noexcept {
  if (this != &o) {
    if (page_) munmap(page_, size_);
    fd_ = std::move(o.fd_);
    page_ = std::exchange(o.page_, nullptr);
    size_ = o.size_;
  }
  return *this;
}

MappedLosses::~MappedLosses() {
  if (page_) munmap(page_, size_);
}

uint64_t MappedLosses::lost() const { return page_ ? load_acquire(page_ + offsetof(cb_lost, lost)) : 0; }

uint64_t MappedLosses::enter_dropped() const {
  return page_ ? load_acquire(page_ + offsetof(cb_lost, enter_dropped)) : 0;
}

}  // namespace cb
