// Syscall names for the audit trail (x86_64).
#pragma once

#include <string_view>

namespace cb {

std::string_view syscall_name(int nr);

}  // namespace cb
