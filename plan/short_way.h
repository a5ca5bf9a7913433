// The short way (notify/carry.h): calls whose allowed outcome the kernel may
// carry out itself because every refusal of them is a read-only mount's.
// Which shapes of call a plan lets go that way is the plan's to say.
#pragma once

#include <cstdint>

#include "policy/event.h"

namespace cb {

// What a notified syscall is, as far as the short way cares.
struct CarryShape {
  enum Kind : uint8_t { None, Create, Link } kind = None;
  int dirfd = 0;             // AT_FDCWD, or the dirfd argument
  uint64_t path = 0;         // address of the new name
  bool check_final = false;  // the kernel may open an existing final name, or follow a symlink there
  uint64_t flags = 0;        // an open's flags; mkdir's mode
};

// Whether a plan that leaves the refusals of `kernel_carried` to the mounts
// lets a call of this shape take the short way at all.  Without O_EXCL the
// name may appear between the look and the kernel's open (another thread
// renames a file there): what the open then writes or truncates must be the
// mounts' to refuse too.
bool short_way_allowed(ActionMask kernel_carried, const CarryShape& s);

}  // namespace cb
