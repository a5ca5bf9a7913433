// What the audit trail records: a session, its processes, its events with
// their verdicts, and the answers to asks.  Produced by the supervisor and
// the tracer, consumed by sinks (the SQLite store, the GUI connection, JSON):
// these types sit below both, so neither depends on the other for them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/event.h"

namespace cb {

// The policy a session ran with, exactly as it was loaded: `why` and
// `replay` judge its events against it, not against today's files.
struct PolicySnapshot {
  std::vector<std::pair<std::string, std::string>> files;  // name (as loaded), text
  std::map<std::string, std::string> vars;                 // CWD, HOME, USER, --var
  // What add_self_protection() was given.
  std::vector<std::string> protected_files;
  std::vector<std::string> protected_dirs;
};

struct SessionStart {
  std::string uuid;  // random, for matching live sessions in the GUI
  std::string name;  // --name LABEL
  std::vector<std::string> argv;
  std::string cwd;
  uint32_t uid = 0;
  std::string user;
  std::string hostname;
  std::vector<std::string> policy_files;
  std::string policy_hash;
  std::optional<PolicySnapshot> policy;  // stored once per distinct snapshot
  int64_t started_ns = 0;
  bool observe = false;
  std::string tracer;    // "seccomp", "ebpf", "seccomp,ebpf"
  std::string ask_mode;  // "gui", "tty", "deny", "allow"
  int32_t supervisor_pid = 0;
  std::string boot_id;  // /proc/sys/kernel/random/boot_id: with supervisor_pid, tells a dead session
};

enum class SessionState { Running, Ended, Aborted };
std::string_view session_state_name(SessionState s);

struct SessionEnd {
  int64_t ended_ns = 0;
  int exit_status = -1;  // the command's exit status as `cottonbox run` returns it (128+N for signal N)
  int exit_signal = 0;   // N when a signal ended it
  SessionState state = SessionState::Ended;
};

struct ProcessRow {
  uint64_t proc_id = 0;         // session-unique, assigned by the tracer
  uint64_t parent_proc_id = 0;  // 0: the root of the tree or unknown
  int32_t pid = 0;
  int32_t ppid = 0;
  uint32_t uid = 0;
  std::string comm;
  std::string exe;
  std::vector<std::string> argv;
  std::string cwd;
  int64_t started_ns = 0;
  std::vector<std::string> names;  // its identities (ProcessInfo::names)
  IdentityFacts identity;          // how they were found, or why there are none
};

// A process image replaced by exec: same proc_id, new exe/argv/comm and identity.
struct ProcessExec {
  uint64_t proc_id = 0;
  int64_t ts_ns = 0;
  std::string comm;
  std::string exe;
  std::vector<std::string> argv;
  std::vector<std::string> names;
  IdentityFacts identity;
};

struct ProcessExit {
  uint64_t proc_id = 0;
  int64_t ended_ns = 0;
  int exit_status = -1;  // 0..255 when it exited, -1 unknown
  int exit_signal = 0;   // N when killed by signal N
};

// Another part of one system call that was judged with the row's event (a
// rename that replaces a file also deletes it): the row's verdict is the
// most severe of all its parts'.
struct FacetRow {
  Action action = Action::FileWrite;
  std::string path;
  std::string target;
  std::vector<std::string> aliases;
  bool is_dir = false;
  int32_t target_pid = 0;
};

struct EventRow {
  uint64_t seq = 0;  // session-unique, assigned by the producer (approvals refer to it)
  // ev.proc->proc_id links the process; ev.proc itself (the image that was
  // judged: exe, argv, cwd, ancestors) and ev.proc_deletes are stored too.
  Event ev;
  std::vector<FacetRow> facets;  // the call's other parts, judged with ev
  Verdict verdict;               // what the policy said (allow/deny/ask/log, the rule)
  bool allowed = true;           // what was decided in the end (an ask's answer; deny when unanswered)
  bool enforced = true;          // false in --observe sessions: the decision was recorded, not applied
  Layer layer = Layer::None;
  int32_t result_errno = -1;  // 0 success, >0 the errno the syscall returned, -1 unknown
  uint32_t count = 1;         // >1 when a burst of identical events was folded into one row
};

struct ApprovalRow {
  uint64_t event_seq = 0;
  int64_t asked_ns = 0;
  int64_t answered_ns = 0;
  std::string answered_by;  // "tty", "gui", "timeout", "no-asker", or a protocol client's name
  std::string answer;  // "allow-once", "deny-once", "allow-tree", "deny-tree", "allow-always", "deny-always", "timeout"
  std::string rule_written;  // the rule text saved to the user rules file, if any
};

// One name lookup the session's resolver answered (net/resolver.h's
// LookupRecord, as the trail keeps it).
struct LookupRow {
  int64_t ts_ns = 0;
  uint64_t proc_id = 0;  // who asked, when the supervisor knows; 0 unknown
  std::string client;    // the asking socket, "127.0.0.1:40000"
  bool tcp = false;
  std::string name;  // normalized, no final '.'
  uint16_t type = 0;
  int rcode = 0;
  bool denied = false;
  bool truncated = false;
  std::vector<std::string> chain;      // CNAME targets
  std::vector<std::string> addresses;  // recorded into the session's name map
  std::string upstream;
  std::string note;
};

}  // namespace cb
