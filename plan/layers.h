// `--layers`: which of a session's layers run, for teaching and testing.
//
// A session normally has them all: the supervisor deciding notified calls
// (notify), the eBPF tracer recording the rest (tracer), read-only bind
// mounts in a private mount namespace (mounts), and Landlock's scoping of
// signals and abstract unix sockets (landlock).  Switching some off reuses
// the paths a host without them takes (no listener: plan/kernel_only.h; no
// tracer: seccomp-only; no mount namespace; no Landlock), so a session with
// fewer layers is exactly one that a poorer host would run, and it says so
// (degraded).  The seccomp filter itself always stays: without it the
// command could undo the others (umount, a new namespace, ptrace).
//
// No value lets the kernel continue a call the supervisor checked by its
// arguments unless a kernel layer bounds what it can reach: that is a race
// (docs/labs/1-seccomp-notify.md), never a mode.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace cb {

struct Layers {
  bool notify = true;
  bool tracer = true;
  bool mounts = true;
  bool landlock = true;
};

// "all", or a comma-separated list of notify, tracer, mounts, landlock
// (each at most once): the layers that run.
Result<Layers> parse_layers(std::string_view list);

// The layers switched off, comma-separated in the order above ("" if none).
std::string layers_off(const Layers& l);

}  // namespace cb
