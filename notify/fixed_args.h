// Whether what a call's pointer arguments point at can still change
// between the supervisor reading it and the kernel reading it again after
// CONTINUE.  Nothing can when the caller (blocked in the call) is the only
// task using its memory and every argument lies in an anonymous private
// mapping, or in the mapping of its own executable (which the kernel keeps
// from being written while it runs).  Only then may a call that was judged
// on its pointer arguments be let through to the kernel.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cb {

struct ArgRange {
  uint64_t addr = 0;
  size_t len = 0;
};

// Empty when the ranges are fixed; otherwise why not, in words.
// `session_pids` lists the other processes that could share the caller's
// memory (CLONE_VM without CLONE_THREAD).
// A relative path (any `dirfd` but -1) depends on the fd table and the cwd
// too, which other processes sharing them could change.
std::string unfixed_args(pid_t tid, const std::vector<ArgRange>& ranges,
                         const std::function<std::vector<pid_t>()>& session_pids, int dirfd = -1);

// Whether the caller's descriptor table can change while it waits in its
// call: not when it is the only thread of its process (and that process's
// leader) and no other process of the session shares the table.  Then the
// fd a call names is the file the supervisor looked at, until the kernel
// runs it.
bool descriptors_fixed(pid_t tid, const std::function<std::vector<pid_t>()>& session_pids);

}  // namespace cb
