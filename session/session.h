// `cottonbox run`: one supervised session from policy to audit trail.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "plan/layers.h"
#include "policy/policy.h"

namespace cb {

enum class AskMode { Auto, Gui, Tty, Deny, Allow, Exec };

struct RunOptions {
  std::vector<std::string> command;
  std::vector<std::string> policies;  // empty: the default policy (+ the user's rules file)
  std::string db;                     // empty: the default database
  AskMode ask = AskMode::Auto;
  std::string ask_program;  // AskMode::Exec: the approver (ask/ask_exec.h)
  std::chrono::milliseconds ask_timeout{60000};
  bool observe = false;
  std::string tracer = "auto";              // "seccomp", "ebpf", "seccomp,ebpf", "auto"
  std::map<std::string, std::string> vars;  // --var NAME=VALUE
  std::string name;                         // --name LABEL
  bool quiet = false;                       // no notes on stderr
  bool no_keep = false;                     // --no-keep: nothing is kept for undo
  std::string resolver;                     // --resolver: upstream ADDR[:PORT], "off", or "" for the host's
  Layers layers;                            // --layers: the layers that run (plan/layers.h)
};

// Runs the session; returns the exit status `cottonbox run` exits with.
int run_session(const RunOptions& opts);

// Where the shipped rules live: $COTTONBOX_RULES_DIR, next to the installed
// binary (../share/cottonbox/rules), or the source tree this was built from.
std::string rules_dir();
std::string default_policy_path();
// The user's own rules ("allow/deny always" answers): loaded first by default.
std::string user_rules_path();
// Everything cottonbox would load next time, existing or not (the user's
// rules directory, the shipped rules, what sets XDG_CONFIG_HOME for later
// logins), as real paths: a session may not touch them.
std::vector<std::string> config_paths();

// Loads policy files with CWD/HOME/USER and --var; on error prints every
// diagnostic to stderr and returns nullopt.
std::optional<Policy> load_policies(const std::vector<std::string>& files,
                                    const std::map<std::string, std::string>& vars);

// The files a default run loads: the user's rules (if present), then default.yaml.
std::vector<std::string> default_policy_files();

}  // namespace cb
