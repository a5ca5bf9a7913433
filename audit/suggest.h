// `cottonbox suggest`: a policy learned from one session.
//
// For every request the user allowed when a rule asked, the narrowest rule
// that allows it: its action, its exact path (or its directory, `dir/*`,
// when the same process did the same to several files there; a host's
// every port for connections), and the process that did it.  A rule that
// would also allow something the session refused is narrowed to exact paths,
// or left out with a comment.  The patch is a file to load before the
// session's policy (first match wins).
//
// For an --observe session: a whole policy that allows what was seen, by
// action and directory, and asks about everything else (`default: ask`).
//
// A rule names its process by identity (policy/identity.h), never by the
// command name, which the process chose: the identity the supervisor found,
// or for a process whose file the session's policy did not trust, a name
// `namer` finds for that very file (a system program's name, which a rule
// can then trust).  A process with neither gets a rule for any process,
// with a comment that says why.
//
// Pure: the session's events (and the policy it ran with) in, rules and
// their YAML out; `cottonbox suggest` loads it and replays it against the
// session to show that it changes exactly the events it names.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/store.h"
#include "policy/policy.h"

namespace cb::audit {

struct SuggestedRule {
  std::string id;
  Action action = Action::FileWrite;
  std::vector<std::string> paths;      // glob texts, as written in the YAML
  std::vector<std::string> processes;  // empty: any process
  std::vector<std::string> comments;   // the lines above the rule, without '#'
  std::vector<size_t> events;          // the events (indices) it is for
};

struct Suggestion {
  bool observe = false;
  std::vector<SuggestedRule> rules;
  // The events the policy is meant to change (to allow), by index: the
  // replay of the session must change these and nothing else.
  std::vector<size_t> target;
  std::vector<std::string> left_out;  // requests no rule was suggested for, and why
  std::string yaml;
};

// The name a rule could trust a process by that had none (its file was
// none the session's policy trusted), or "".  `cottonbox suggest` passes
// system_name_of() (policy/identity.h).
using ProgramNamer = std::function<std::string(const ProcessInfo&)>;

// `original`: the policy the session ran with (to tell which parts of a
// call were refused); without it the recorded verdicts are used.
// `now_ns` dates the header.
Suggestion suggest(const db::SessionSummary& s, const std::vector<db::StoredEvent>& events, const Policy* original,
                   int64_t now_ns, const ProgramNamer& namer = {});

// An event the user allowed when it was asked (an answer, or an earlier
// answer for its process tree).
bool asked_and_allowed(const db::StoredEvent& e);

}  // namespace cb::audit
