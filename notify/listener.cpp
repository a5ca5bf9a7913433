#include "notify/listener.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "syscalls/compat.h"

namespace cb {

Listener::Listener(UniqueFd fd) : fd_(std::move(fd)) {
  seccomp_notif_sizes sizes{};
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0) {
    req_size_ = std::max<size_t>(sizes.seccomp_notif, sizeof(seccomp_notif));
    resp_size_ = std::max<size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp));
  }
  req_buf_.resize(req_size_);
}

bool Listener::set_sync_wakeup() {
  return ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0;
}

seccomp_notif* Listener::alloc_req() { return reinterpret_cast<seccomp_notif*>(req_buf_.data()); }

bool Listener::receive(seccomp_notif* req) {
  memset(req, 0, req_size_);
  return ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_RECV, req) == 0;
}

bool Listener::id_valid(uint64_t id) const { return ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

bool Listener::send(seccomp_notif_resp* r) { return ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_SEND, r) == 0; }

namespace {
// The kernel may know a larger response than our headers: size it at run time.
struct RespBuf {
  explicit RespBuf(size_t n) : bytes(std::max(n, sizeof(seccomp_notif_resp)), 0) {}
  seccomp_notif_resp* get() { return reinterpret_cast<seccomp_notif_resp*>(bytes.data()); }
  std::vector<uint8_t> bytes;
};
}  // namespace

bool Listener::respond_error(uint64_t id, int err) {
  RespBuf b(resp_size_);
  auto* r = b.get();
  r->id = id;
  r->error = -err;
  return send(r);
}

bool Listener::respond_value(uint64_t id, int64_t val) {
  RespBuf b(resp_size_);
  auto* r = b.get();
  r->id = id;
  r->val = val;
  return send(r);
}

bool Listener::respond_continue(uint64_t id) {
  RespBuf b(resp_size_);
  auto* r = b.get();
  r->id = id;
  // Only for decisions made on scalar arguments and for exec: the kernel
  // reads pointer arguments again after this, so a path checked here could
  // have changed.  Allowed mutations are carried out by the supervisor.
  r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  return send(r);
}

int Listener::respond_addfd(uint64_t id, int fd, bool cloexec) {
  seccomp_notif_addfd a{};
  a.id = id;
  a.flags = SECCOMP_ADDFD_FLAG_SEND;
  a.srcfd = static_cast<uint32_t>(fd);
  a.newfd_flags = cloexec ? O_CLOEXEC : 0;
  int rc = ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &a);
  if (rc >= 0) return rc;
  int e = errno;
  // The call must be answered whatever happened: a descriptor the kernel
  // would not install is an error for the caller, never a thread parked
  // for good.  (ENOENT: the call is gone, nobody waits.)
  if (e != ENOENT) respond_error(id, e == EBADF ? EACCES : e);
  return -e;
}

namespace {

constexpr uint64_t kPage = 4096;

ssize_t vm_read(pid_t tid, uint64_t addr, void* out, size_t len) {
  iovec local{out, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return process_vm_readv(tid, &local, 1, &remote, 1, 0);
}

ssize_t mem_read(pid_t tid, uint64_t addr, void* out, size_t len) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", tid);
  UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return -1;
  return pread(fd.get(), out, len, static_cast<off_t>(addr));
}

}  // namespace

Result<std::string> TargetMemory::read_string(pid_t tid, uint64_t addr, size_t max) {
  if (addr == 0) return Error{EFAULT, "null pointer"};
  std::string out;
  char buf[kPage];
  bool use_mem = false;
  while (out.size() < max) {
    // Never cross a page boundary in one read: the next page may be unmapped
    // while the string ends before it.
    size_t chunk = kPage - (addr % kPage);
    chunk = std::min(chunk, max - out.size());
    ssize_t n = use_mem ? mem_read(tid, addr, buf, chunk) : vm_read(tid, addr, buf, chunk);
    if (n < 0 && !use_mem && errno != EFAULT) {
      use_mem = true;
      continue;
    }
    if (n <= 0) return Error{n < 0 ? errno : EFAULT, "reading target memory"};
    const char* nul = static_cast<const char*>(memchr(buf, 0, static_cast<size_t>(n)));
    if (nul) {
      out.append(buf, nul - buf);
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
    addr += static_cast<uint64_t>(n);
  }
  return Error{ENAMETOOLONG, "string too long"};
}

Result<Ok> TargetMemory::read(pid_t tid, uint64_t addr, void* out, size_t len) {
  if (addr == 0) return Error{EFAULT, "null pointer"};
  auto* p = static_cast<char*>(out);
  while (len) {
    size_t chunk = std::min<size_t>(len, kPage - (addr % kPage));
    ssize_t n = vm_read(tid, addr, p, chunk);
    if (n < 0 && errno != EFAULT) n = mem_read(tid, addr, p, chunk);
    if (n <= 0) return Error{n < 0 ? errno : EFAULT, "reading target memory"};
    p += n;
    addr += static_cast<uint64_t>(n);
    len -= static_cast<size_t>(n);
  }
  return Ok{};
}

Result<Ok> TargetMemory::read_gather(pid_t tid, const iovec* remote, size_t n, void* out) {
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) total += remote[i].iov_len;
  if (total == 0) return Ok{};
  iovec local{out, total};
  if (n <= IOV_MAX && process_vm_readv(tid, &local, 1, remote, n, 0) == static_cast<ssize_t>(total)) return Ok{};
  // A buffer crossing into an unmapped page, or no process_vm_readv:
  // buffer by buffer, a page at a time.
  auto* p = static_cast<char*>(out);
  for (size_t i = 0; i < n; ++i) {
    if (remote[i].iov_len == 0) continue;
    auto r = read(tid, reinterpret_cast<uint64_t>(remote[i].iov_base), p, remote[i].iov_len);
    if (!r) return r.error();
    p += remote[i].iov_len;
  }
  return Ok{};
}

Result<Ok> TargetMemory::write(pid_t tid, uint64_t addr, const void* in, size_t len) {
  if (addr == 0) return Error{EFAULT, "null pointer"};
  iovec local{const_cast<void*>(in), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  ssize_t n = process_vm_writev(tid, &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(len)) return Ok{};
  // Where the kernel's own write would fault, so does this one (/proc/PID/mem
  // would write through a read-only mapping).
  if (n >= 0 || errno == EFAULT) return Error{EFAULT, "writing target memory"};
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", tid);
  UniqueFd fd(open(path, O_WRONLY | O_CLOEXEC));
  if (!fd || pwrite(fd.get(), in, len, static_cast<off_t>(addr)) != static_cast<ssize_t>(len))
    return Error{errno ? errno : EFAULT, "writing target memory"};
  return Ok{};
}

}  // namespace cb
