// From eBPF trace records to the one Event type.
//
// The tracer sees what happened (the syscall, its absolute paths, its
// result); this says which action it was.  Pure: no fds, no clock.
#pragma once

#include <optional>

#include "policy/event.h"
#include "trace/ebpf_decode.h"

namespace cb {

// The action of a syscall record, or nullopt for records that are not
// events (chdir, setuid: they only keep the process table right).
//
// Opens are judged after the fact, without knowing whether the file
// existed: O_TRUNC is a truncate, O_CREAT a create, other write access a
// write, the rest a read.
std::optional<Event> event_of(const TraceRecord& r);

// True when `err` is what a read-only mount answers for this action.
bool refused_by_read_only_mount(Action a, int err);

}  // namespace cb
