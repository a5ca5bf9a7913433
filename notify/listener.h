// The seccomp user-notification listener, wrapped (after crun's seccomp_notify.c
// and the kernel selftests): buffers sized with SECCOMP_GET_NOTIF_SIZES, ENOENT
// on any ioctl means the target is gone (not an error), and ID_VALID is
// checked after every read of target memory.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace cb {

class Listener {
 public:
  explicit Listener(UniqueFd fd);
  int fd() const { return fd_.get(); }

  // Sets SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: the woken target runs on the
  // supervisor's CPU, which cuts the round trip several-fold.
  bool set_sync_wakeup();

  // One notification; false if none was pending (EAGAIN/ENOENT/EINTR).
  bool receive(seccomp_notif* req);
  bool id_valid(uint64_t id) const;

  // Answers.  All return false when the target is gone.  Thread-safe: a
  // worker may answer while the main loop receives.
  bool respond_error(uint64_t id, int err);  // err > 0: fail with -err
  bool respond_value(uint64_t id, int64_t val);
  bool respond_continue(uint64_t id);
  // Installs `fd` into the target (lowest free number, O_CLOEXEC if asked)
  // and answers with that number, atomically.  Returns the new fd or -errno.
  int respond_addfd(uint64_t id, int fd, bool cloexec);

  seccomp_notif* alloc_req();

 private:
  bool send(seccomp_notif_resp* r);
  UniqueFd fd_;
  size_t req_size_ = sizeof(seccomp_notif);
  size_t resp_size_ = sizeof(seccomp_notif_resp);
  std::vector<uint8_t> req_buf_;
};

// Reads the target's memory with process_vm_readv, one page at a time where a
// read would cross into an unmapped page (the syscall does not split a remote
// iovec), falling back to /proc/PID/mem.
class TargetMemory {
 public:
  // Reads a NUL-terminated string of at most `max` bytes (PATH_MAX for paths).
  // ENAMETOOLONG when no NUL is found, EFAULT for a bad address.
  static Result<std::string> read_string(pid_t tid, uint64_t addr, size_t max);
  static Result<Ok> read(pid_t tid, uint64_t addr, void* out, size_t len);
  // Gathers the target's buffers `remote[0..n)` into `out` (their total
  // length), in one process_vm_readv where every byte is mapped.
  static Result<Ok> read_gather(pid_t tid, const iovec* remote, size_t n, void* out);
  // Writes into the target's memory (what a call returns through a
  // pointer, e.g. sendmmsg's msg_len).
  static Result<Ok> write(pid_t tid, uint64_t addr, const void* in, size_t len);
};

}  // namespace cb
