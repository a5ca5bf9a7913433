// The seccomp filter: compiled from what the loaded policy can decide.
//
// Only syscalls some rule could decide are notified; scalar arguments are
// compared in the filter itself (a read-only open never leaves the kernel).
// libseccomp builds the program (native arch only, a foreign arch kills the
// process, so `int 0x80` and x32 calls cannot get around it); we export it and
// install it ourselves with raw seccomp(), because Debian 12's libseccomp
// cannot set SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <vector>

#include "base/fd.h"
#include "base/result.h"
#include "plan/filter_spec.h"

namespace cb {

struct FilterProgram {
  std::vector<sock_filter> insns;
};

Result<FilterProgram> build_filter(const FilterSpec& spec);

// Installs `prog` on the calling thread (no_new_privs must be set) and
// returns the listener.  Tries WAIT_KILLABLE_RECV first and falls back
// without it on kernels that lack it; *killable reports which one stuck.
// Async-signal-safe: runs in the child between fork and exec.
int install_filter_raw(const FilterProgram& prog, bool* killable);
// Installs `prog` without a listener (a program that notifies nothing):
// 0, or -1 with errno.  Async-signal-safe.
int install_filter_plain(const FilterProgram& prog);

}  // namespace cb
