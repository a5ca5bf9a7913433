#include "launch/filter.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "syscalls/compat.h"
#include "syscalls/table.h"

namespace cb {
namespace {

struct CtxDeleter {
  void operator()(void* c) const { seccomp_release(c); }
};
using CtxPtr = std::unique_ptr<void, CtxDeleter>;

class Builder {
 public:
  explicit Builder(scmp_filter_ctx ctx) : ctx_(ctx) {}

  // One clause of a row: its comparisons, expanded where seccomp's
  // comparisons cannot say it in one rule.
  void add(int nr, const FilterClause& c) {
    uint32_t action = c.errno_ ? SCMP_ACT_ERRNO(static_cast<uint16_t>(c.errno_)) : SCMP_ACT_NOTIFY;
    std::vector<std::vector<scmp_arg_cmp>> alternatives{{}};
    for (const ArgCmp& cmp : c.cmp) {
      if (cmp.op == CmpOp::None) continue;
      std::vector<scmp_arg_cmp> options = expand(cmp);
      std::vector<std::vector<scmp_arg_cmp>> next;
      for (const auto& alt : alternatives)
        for (const auto& o : options) {
          next.push_back(alt);
          next.back().push_back(o);
        }
      alternatives = std::move(next);
    }
    for (const auto& alt : alternatives) rule(action, nr, alt);
  }

  int error() const { return err_; }

 private:
  // Each comparison as seccomp rules, any one of which may match.
  static std::vector<scmp_arg_cmp> expand(const ArgCmp& c) {
    auto arg = static_cast<unsigned>(static_cast<uint8_t>(c.arg));
    std::vector<scmp_arg_cmp> out;
    switch (c.op) {
      case CmpOp::MaskedEq: out.push_back(SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, c.mask, c.value)); break;
      case CmpOp::NotEqual: out.push_back(SCMP_CMP(arg, SCMP_CMP_NE, c.value)); break;
      case CmpOp::AnyBit:
        // A masked compare tests equality, not "any of": one rule per bit.
        for (uint64_t b = 1; b; b <<= 1)
          if (c.mask & b) out.push_back(SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, b, b));
        break;
      case CmpOp::WriteOpen:
        // A write-intent open: access mode not O_RDONLY, or O_CREAT/O_TRUNC.
        for (uint64_t acc : {uint64_t(O_WRONLY), uint64_t(O_RDWR), uint64_t(O_ACCMODE)})
          out.push_back(SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, acc));
        for (uint64_t b : {uint64_t(O_CREAT), uint64_t(O_TRUNC)})
          out.push_back(SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, b, b));
        break;
      case CmpOp::None: break;
    }
    return out;
  }

  void rule(uint32_t action, int nr, const std::vector<scmp_arg_cmp>& cmps) {
    int rc = cmps.empty() ? seccomp_rule_add(ctx_, action, nr, 0)
                          : seccomp_rule_add_array(ctx_, action, nr, static_cast<unsigned>(cmps.size()), cmps.data());
    // EEXIST: an identical rule is already there.
    if (rc < 0 && rc != -EEXIST && !err_) err_ = -rc;
  }

  scmp_filter_ctx ctx_;
  int err_ = 0;
};

}  // namespace

Result<FilterProgram> build_filter(const FilterSpec& s) {
  CtxPtr ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Error{ENOMEM, "seccomp_init failed"};
  // Native arch only: an i386 (`int 0x80`) or x32 syscall would be decoded
  // with another table, so it kills the process instead of being allowed.
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0);  // set by the launcher itself
  seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);

  const GateMask open = s.open_gates(s.io_uring_allowed);
  Builder b(ctx.get());
  for (const Syscall& row : syscall_table()) {
    // A clause with no comparison covers the row's others: seccomp would
    // keep the broadest anyway, and libseccomp refuses some mixes.
    bool whole = false;
    auto wanted = [&](const FilterClause& c) {
      return c.gate != Gate::Count && (open & gate_bit(c.gate)) && (s.notify || c.errno_);
    };
    for (const FilterClause& c : row.filter)
      if (wanted(c) && c.cmp[0].op == CmpOp::None) {
        b.add(row.nr, c);
        whole = true;
        break;
      }
    if (whole) continue;
    for (const FilterClause& c : row.filter)
      if (wanted(c)) b.add(row.nr, c);
  }
  for (const FilterRefusal& r : s.refusals) b.add(r.nr, FilterClause{Gate::Always, {r.cmp, r.cmp2}, r.err});
  if (b.error()) return Error{b.error(), std::string("building the seccomp filter: ") + strerror(b.error())};

  // Debian 12's libseccomp has no export to memory: go through a memfd.
  UniqueFd mfd(memfd_create("cottonbox-filter", MFD_CLOEXEC));
  if (!mfd) return Error::from_errno("memfd_create");
  if (int rc = seccomp_export_bpf(ctx.get(), mfd.get()); rc < 0) return Error{-rc, "seccomp_export_bpf failed"};
  off_t len = lseek(mfd.get(), 0, SEEK_END);
  if (len <= 0 || len % sizeof(sock_filter)) return Error{EINVAL, "bad exported filter size"};
  FilterProgram prog;
  prog.insns.resize(len / sizeof(sock_filter));
  if (pread(mfd.get(), prog.insns.data(), len, 0) != len) return Error::from_errno("reading the filter");
  return prog;
}

int install_filter_plain(const FilterProgram& prog) {
  sock_fprog fprog{static_cast<unsigned short>(prog.insns.size()), const_cast<sock_filter*>(prog.insns.data())};
  return static_cast<int>(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog));
}

int install_filter_raw(const FilterProgram& prog, bool* killable) {
  sock_fprog fprog{static_cast<unsigned short>(prog.insns.size()), const_cast<sock_filter*>(prog.insns.data())};
  unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
  int fd = static_cast<int>(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog));
  if (fd >= 0) {
    if (killable) *killable = true;
    return fd;
  }
  if (errno != EINVAL) return -1;
  if (killable) *killable = false;
  return static_cast<int>(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog));
}

}  // namespace cb
