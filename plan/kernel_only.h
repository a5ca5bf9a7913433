// A session without a supervisor of its own.
//
// Where no seccomp listener can be had (inside another cottonbox session,
// whose supervisor holds the one listener the kernel allows in a filter
// chain), nothing can be decided as it happens.  The policy is then
// enforced by what the kernel does alone:
//   - read-only mounts in the session's private mount namespace, where the
//     enclosing sandbox lets it make one (plan.cpp, as always);
//   - refusals in the seccomp filter for the facilities (mounts,
//     namespaces, tracing, kernel facilities, io_uring) that the policy
//     refuses whoever asks and whatever the path: the built-in guards,
//     and rules like them;
//   - Landlock's scoping of signals and ptrace, as always (launch/).
// Ask rules become deny rules (nothing can hold a call while someone
// answers), and every rule that needs the supervisor is named in the
// session's degradations.  What the outer supervisor allows still bounds
// everything: this only narrows.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/filter_spec.h"
#include "policy/policy.h"

namespace cb {

// The decision every event of `a` on `path` gets whoever causes it, or
// nullopt when that depends on more than the action and the path (the
// process, a condition on other fields).  `path` null: any path.  Log
// counts as allow (a log rule blocks nothing).
std::optional<Decision> fixed_decision(const Policy& p, Action a, const std::string* path);

// Rewrites every ask rule (and an ask default) as deny; returns the ids of
// the rules rewritten.
std::vector<std::string> asks_become_denials(Policy& p);

struct KernelOnlyFilter {
  std::vector<FilterRefusal> refusals;
  ActionMask fixed = 0;  // actions whose every call the filter decides as the policy would
  std::vector<std::string> notes;
};
// The refusals for the facility actions (sys.mount, sys.namespace,
// sys.kernel, proc.trace, sys.io_uring) that the policy decides without
// looking at the process.  `guard_mounts` (a root session with read-only
// trees): every mount call is refused, whatever the policy says of mounts.
KernelOnlyFilter kernel_only_filter(const Policy& p, bool guard_mounts = false);

// The `weakened` line for rules a kernel-only session cannot enforce
// (wholly or partly), given each rule's layer; empty when there is none.
struct RuleLayer;
std::string kernel_only_unenforced(const Policy& p, const std::vector<RuleLayer>& layers, ActionMask fixed);

// What a kernel-only session says of itself at its start: why it has no
// supervisor (`no_listener`, host/nesting.h), the ask rules it turned into
// denials, and what records it (the tracer, or `no_tracer` says why not).
// `nested`: inside another supervisor, which still judges every call (false:
// `--layers` left the notify layer out, and nothing else judges).
std::vector<std::string> kernel_only_degradations(const std::string& no_listener,
                                                  const std::vector<std::string>& asks_denied, bool tracer,
                                                  const std::string& no_tracer, bool nested = true);

}  // namespace cb
