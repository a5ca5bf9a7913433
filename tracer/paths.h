// Path strings: one way to join and normalise them, for the supervisor's
// resolution and the tracer's records alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cb {

// base + "/" + rel, with "." components and repeated slashes dropped ("..":
// kept, since only the kernel knows what it meant across a symlink).  An
// absolute `rel` is returned as is; an empty one names `base` itself.
std::string join_path(std::string_view base, std::string_view rel);

// CLOCK_REALTIME in nanoseconds: the time stamps of the audit trail.
int64_t realtime_ns();

}  // namespace cb
