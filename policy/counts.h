// Counts that follow the data.
//
// A mass deletion split into many processes, or prepared by moving the
// files somewhere their deletion is not guarded (out of the working
// directory, into build/ or *.o), is the same loss as one `rm -rf`.  The
// supervisor counts every deletion per command tree (tree.deletes), and per
// session only those the policy guards (session.deletes): a deletion counts
// there when the policy would ask or deny it once the counts were high
// (deleting build outputs or caches counts for nothing over a long session).  A rename that moves a guarded file to
// where deleting it is not guarded is judged and counted as the deletion it prepares; a directory moved that way stands
// for more files than any threshold.
//
// Pure: the policy decides what is guarded; nothing here knows a path.
#pragma once

#include <cstdint>
#include <optional>

#include "policy/policy.h"

namespace cb {

// Counts as high as any threshold a policy could sensibly write.
inline constexpr uint32_t kManyDeletes = 1u << 30;

// Would the policy ask about or deny deleting `path` (by ev's process) once
// every count were high?
bool guarded_delete(const Policy& p, const Event& ev, const std::string& path, bool is_dir);

// For a file.rename: the file.delete event it prepares (its source, with
// the counts of `rename` plus this one, or kManyDeletes for a directory),
// when the source is guarded and its destination is not; nullopt otherwise.
std::optional<Event> prepared_delete(const Policy& p, const Event& rename);

}  // namespace cb
