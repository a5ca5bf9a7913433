// `cottonbox doctor`: what this machine offers cottonbox, one line per
// capability, and what cottonbox does without each.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "host/features.h"

namespace cb {

struct Capability {
  std::string id;    // "seccomp_notify", "ebpf", ... (the JSON key)
  std::string name;  // "seccomp user-notify"
  bool available = false;
  std::string detail;      // what the machine has, or what is missing
  std::string effect;      // what cottonbox does with it, or without it
  bool essential = false;  // cottonbox cannot run without it
};

// Inside another supervisor: the kernel has user-notify, but a listener
// is already installed above this process (host/nesting.h).
bool nested_here(const Features& f);

// The report for `f`, in display order.
std::vector<Capability> capabilities(const Features& f);

// Probes and prints; `json`: one JSON object.  Returns 0 when cottonbox can
// run here (possibly degraded), 1 when an essential capability is missing.
int run_doctor(bool json, std::ostream& out);
// The same for given features (for tests).
int print_doctor(const Features& f, bool json, std::ostream& out);

}  // namespace cb
