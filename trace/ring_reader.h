// Reads a BPF ring buffer through its mapping alone, without the bpf()
// system call: a session's supervisor gets its ring's fd from the resident
// tracer (tracerd/), and Debian 12's kernel refuses bpf() to an unprivileged
// process even on a map fd it holds, while mmap and epoll on that fd need
// nothing.  The layout is the kernel's (kernel/bpf/ringbuf.c): a page with
// the consumer position (the one page user space may write), a page with the
// producer position, then the data, mapped twice in a row so that a record
// that wraps reads as one piece.  Each record starts with an 8-byte header:
// its length with a busy and a discard bit, and the kernel's page offset.
//
// Threading: one thread reads a ring.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "base/fd.h"
#include "base/result.h"

namespace cb {

class RingReader {
 public:
  // A record's bytes; return false to stop after this one.
  using Fn = std::function<bool(std::span<const uint8_t>)>;

  // `data_bytes`: the ring's size (a power of two, page-aligned), as it was
  // created.
  static Result<RingReader> map(UniqueFd fd, uint64_t data_bytes);

  RingReader(RingReader&&) noexcept;
  RingReader& operator=(RingReader&&) noexcept;
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;
  ~RingReader();

  // Readable (EPOLLIN) when records wait, as the kernel's wakeups allow.
  int fd() const { return fd_.get(); }
  uint64_t data_bytes() const { return mask_ + 1; }

  // Hands over up to `budget` committed records in order; returns how many.
  // Stops at the first record still being written.  A record is released to
  // the kernel only after `fn` returned (or threw: the exception propagates
  // with that record released).
  size_t consume(const Fn& fn, size_t budget = SIZE_MAX);

 private:
  RingReader() = default;
  void unmap();

  UniqueFd fd_;
  uint8_t* consumer_ = nullptr;  // one page, read-write
  uint8_t* producer_ = nullptr;  // producer page + data twice, read-only
  size_t page_ = 0;
  uint64_t mask_ = 0;
};

// A slot's loss counters (struct cb_lost in bpf/cb_wire.h), read through a
// read-only mapping of their one-entry array, bpf() again not needed.
class MappedLosses {
 public:
  static Result<MappedLosses> map(UniqueFd fd);
  MappedLosses(MappedLosses&&) noexcept;
  MappedLosses& operator=(MappedLosses&&) noexcept;
  MappedLosses(const MappedLosses&) = delete;
  MappedLosses& operator=(const MappedLosses&) = delete;
  ~MappedLosses();

  uint64_t lost() const;
  uint64_t enter_dropped() const;

 private:
  MappedLosses() = default;
  UniqueFd fd_;
  uint8_t* page_ = nullptr;
  size_t size_ = 0;
};

}  // namespace cb
