// Policies: loading (YAML with positions), compiling, and the pure decision.
//
// Loading runs in falco's phases: read every file into raw rules that keep
// their file:line:col, then expand ${VARS}, @lists and action groups, parse
// `when:` expressions and compile globs, collecting every error with its
// location instead of stopping at the first.
//
// decide() is pure: no fds, no clock, no I/O.  Everything it needs is in the
// Policy and the Event.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/event.h"
#include "policy/expr.h"
#include "policy/glob.h"
#include "policy/identity.h"

namespace cb {

struct SourceLoc {
  std::string file;
  int line = 0;  // 1-based; 0 = not from a file
  int col = 0;   // 1-based
};

struct Diagnostic {
  SourceLoc loc;
  std::string message;
};
// "file:line:col: error: message"
std::string format_diagnostic(const Diagnostic& d);

// Which of cottonbox's own rules a rule is: the planner enforces each in a
// layer of its own (the audit database read-only, the control socket's
// directory hidden).
enum class Builtin : uint8_t {
  None,
  SelfProtectFiles,
  SelfProtectTrail,
  SelfProtectControl,
  SelfProtectConfig,
  Resolver,
  Guard
};

struct Rule {
  std::string id;
  ActionMask actions = 0;
  std::vector<Glob> paths;  // empty: any path
  // net.* only.  A rule with hosts or ports matches only events with an IP
  // address (never a unix socket).  An Address pattern tests Event::net.addr;
  // a Name pattern tests the names the session resolved to it
  // (NetObject::hosts for an allow rule, NetObject::names otherwise).
  std::vector<HostPattern> hosts;      // empty: any host
  std::vector<PortRange> ports;        // empty: any port
  std::vector<std::string> processes;  // identities (policy/identity.h); empty: any
  std::shared_ptr<const Expr> when;    // null: always
  std::string when_text;
  Decision decision = Decision::Deny;
  std::string message;
  std::optional<bool> keep;  // `keep: true|false`; unset: the policy's keep scope decides
  SourceLoc loc;
  // cottonbox's own rules: self-protection (first) or guards (last).
  Builtin kind = Builtin::None;
  bool builtin() const { return kind != Builtin::None; }
  // The deepest directory at or below which every path the globs match
  // lies ("/home/u" for a rule of ~/.ssh/** and ~/.aws/**): decide() passes
  // over the rule with one comparison for a path elsewhere.  Set by
  // index_rules(); empty means no such directory (or not indexed).
  std::string anchor;
};

// A list named in `read(@name)`: the files whose reading taints a process.
struct TaintList {
  std::string name;  // without '@'
  std::vector<Glob> paths;
  std::string anchor;  // as Rule::anchor
};

// Where undo keeps what allowed calls destroy, unless a rule says `keep:`.
// A policy's top-level `keep:` sets it (`paths`, `except`; items may be
// @lists); without one, the working directory and $HOME.
struct KeepScope {
  std::vector<Glob> paths;
  std::vector<Glob> except;  // build outputs, caches: regenerated, so never kept
};

// The file actions after which something that existed may be gone: what
// the keeper runs before.
constexpr ActionMask kDestroys = bit(Action::FileWrite) | bit(Action::FileDelete) | bit(Action::FileRename) |
                                 bit(Action::FileTruncate) | bit(Action::FileAttr);

struct Policy {
  Decision default_decision = Decision::Allow;
  KeepScope keep;
  // Evaluated in order, first match wins: self-protection, the files' rules in
  // file order, then the guards that deny sys.io_uring, sys.namespace,
  // sys.mount and proc.trace unless an earlier rule allowed them.
  std::vector<Rule> rules;
  std::vector<std::string> files;
  std::vector<std::pair<std::string, std::string>> sources;  // each file's name and text, as loaded
  std::map<std::string, std::string> vars;                   // after expansion: CWD, HOME, USER, --var
  std::string hash;                                          // sha256 (hex) of the files and vars
  // The trusted executables behind every name a rule uses (`process:`,
  // proc.name, proc.ancestors), stat()ed when the policy loaded.
  Identities identities;
  // The lists `when:` expressions test with read(@name); bit i of
  // Event::read_taint stands for taints[i].  At most 64.
  std::vector<TaintList> taints;
};

struct LoadOptions {
  std::map<std::string, std::string> vars;  // CWD, HOME, USER and every --var
  bool add_guards = true;                   // append the builtin guard rules
  bool resolve_identities = true;           // stat the trusted executables (policy/identity.h)
  bool canonical_vars = true;               // resolve variables naming paths (base/paths.h canonical_path)
};

// Loads and compiles one or more policy files: later files' rules follow
// earlier ones; `default:` from the last file that sets it wins.  On failure
// returns every diagnostic found, in file order.
struct LoadResult {
  std::optional<Policy> policy;
  std::vector<Diagnostic> errors;
};
LoadResult load_policy_files(const std::vector<std::string>& files, const LoadOptions& opts);
// Same, from text already in memory (tests, embedded defaults).  `name` is
// used in diagnostics.
LoadResult load_policy_text(const std::vector<std::pair<std::string, std::string>>& name_and_text,
                            const LoadOptions& opts);

// Rules cottonbox puts before every user rule and which no rule can override.
struct SelfProtection {
  std::vector<std::string> protected_files;  // audit db (+ -wal/-shm/-journal), policy files
  std::vector<std::string> protected_dirs;   // control socket directories, the tracer's cache
  // What cottonbox would load next time, existing or not: the user's rules
  // directory, the default rules, what sets XDG_CONFIG_HOME for later
  // logins.  Neither created, changed, moved nor removed from a session.
  std::vector<std::string> config_paths;
  // The session's own audit trail (the database and its companions): not
  // even read from the session, so that nothing in it (an agent, an MCP
  // server it starts) learns what was recorded or asked about it.
  std::vector<std::string> trail_files;

  // The audit database `db` and its companions: read-only and hidden.
  void add_trail(const std::string& db) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      protected_files.push_back(db + suffix);
      trail_files.push_back(db + suffix);
    }
  }
};
void add_self_protection(Policy& p, const SelfProtection& sp);
// The session's own resolver at `addr`:`port` (session/session_dns.h): its
// lookups are judged by the resolver (net/policy_judge.h), so reaching it is
// allowed first, whatever a rule says of the network.  Idempotent.
void add_resolver_rule(Policy& p, const IpAddr& addr, uint16_t port);

// Sets every rule's anchor from its globs.  The loader and
// add_self_protection() call it; a Rule built by hand may skip it.
void index_rules(Policy& p);

// The judgement.  Rules are tried in order; a rule matches when the action is
// one of its actions, the path (or an alias, or for a directory delete/rename
// a path below it, for deny and ask rules) matches one of its globs, the
// process matches, and `when` holds.  No rule: the policy's default.
Verdict decide(const Policy& p, const Event& ev);
// Whether the keep scope covers `path` (for an action in kDestroys).
bool in_keep_scope(const KeepScope& k, std::string_view path);

// The taint lists (bits of Event::read_taint) whose patterns match `path`: the
// supervisor calls it for each file a process reads and keeps the union per
// process.  0 when the policy tests no read(@list).
uint64_t taint_bits(const Policy& p, std::string_view path);

// Actions for which some rule or the default can produce a deny or an ask:
// only these need to reach the supervisor before they happen.
ActionMask actions_needing_decision(const Policy& p);
// Actions some rule marks `log`: recorded with that rule, never blocked.
ActionMask actions_logged(const Policy& p);

// A directory tree on which the policy denies `actions` for every process and
// every path below `root`, unconditionally: such a denial can be enforced by a
// kernel layer (a read-only mount) with no round trip.
struct StaticDenial {
  std::string root;  // absolute directory, no trailing slash
  ActionMask actions = 0;
  std::string rule_id;
  std::string message;
};
// Every such tree, with the actions the first matching rule denies there.
// A tree is only reported when no earlier rule can match an event below it
// with one of those actions (so the kernel layer decides exactly what
// decide() would).
std::vector<StaticDenial> static_denials(const Policy& p);

// Human-readable and JSON renderings of the compiled policy for `cottonbox check`.
std::string describe_rule(const Rule& r);

}  // namespace cb
