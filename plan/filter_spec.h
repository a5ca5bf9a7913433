// What the plan asks of the seccomp filter: which gates of the syscall
// table (syscalls/table.h) are open, that is, which families of system
// calls reach the supervisor.  launch/filter.h builds the program from it.
#pragma once

#include <cerrno>
#include <vector>

#include "syscalls/table.h"

namespace cb {

// A call the filter fails in the kernel, whatever the gates.  A session
// without a supervisor of its own (plan/kernel_only.h) refuses this way
// what its policy denies whatever the path and the process.
struct FilterRefusal {
  int nr = -1;
  ArgCmp cmp;  // CmpOp::None: every call of `nr`
  int16_t err = EPERM;
  ArgCmp cmp2;  // a second comparison that must hold too (socket: family and type)
};

struct FilterSpec {
  // Guards (io_uring_setup, mounts, namespaces, tracing, kernel facilities,
  // mknod, prlimit on others) are always notified: they are rare and every
  // attempt belongs in the trail.
  GateMask gates = gate_bit(Gate::Always);

  bool has(Gate g) const { return gates & gate_bit(g); }
  void set(Gate g, bool on = true) {
    if (on)
      gates |= gate_bit(g);
    else
      gates &= ~gate_bit(g);
  }
  // Some file action is judged: then openat2, open_by_handle_at and the
  // chattr ioctls are too.
  bool any_file() const {
    constexpr GateMask kFile = gate_bit(Gate::ReadOpens) | gate_bit(Gate::WriteOpens) | gate_bit(Gate::CreateOpens) |
                               gate_bit(Gate::Deletes) | gate_bit(Gate::Renames) | gate_bit(Gate::HardLinks) |
                               gate_bit(Gate::Symlinks) | gate_bit(Gate::Creates) | gate_bit(Gate::Truncates) |
                               gate_bit(Gate::Attrs);
    return gates & kFile;
  }
  // The gates the filter opens: these, the file objects' with any file
  // gate, and io_uring's refusal unless a rule allows io_uring.
  GateMask open_gates(bool io_uring_allowed) const {
    GateMask g = gates | gate_bit(Gate::Always);
    if (any_file()) g |= gate_bit(Gate::FileObjects);
    if (!io_uring_allowed) g |= gate_bit(Gate::IoUringRefused);
    return g;
  }
  bool io_uring_allowed = false;
  // False when no listener can be had: clauses that would notify are left
  // out, and only refusals (the table's and these) remain.
  bool notify = true;
  std::vector<FilterRefusal> refusals;
};

}  // namespace cb
