// Starting the tracer service from a root session that found none: the
// service runs detached from the session (its own session id, no inherited
// descriptors, the initial working directory), exits a few seconds after
// the last session left, and the session registers with it like any other.
#pragma once

#include "base/result.h"

namespace cb::tracerd {

// Starts `cottonbox tracer serve --idle-exit SEC` (this very executable)
// and waits up to `wait_ms` for its socket to answer.
Result<Ok> start_service(int idle_exit_s = 5, int wait_ms = 5000);

}  // namespace cb::tracerd
