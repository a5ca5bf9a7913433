// The words for what an event asks: "delete 240 files under build/".  The
// one summary shared by every asker (terminal, GUI, protocol clients).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "policy/event.h"

namespace cb {

// The words for `count` folded requests like `ev`.  `cwd` (the session's)
// shortens paths below it.
std::string summarize(const Event& ev, uint32_t count, std::string_view cwd = {});

// The directory part of a path ("/" for a name in the root, "." for a bare name).
std::string dirname_of(std::string_view p);

}  // namespace cb
