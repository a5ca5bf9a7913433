// cottonbox: run a command under supervision, and read the audit trail.
#include <unistd.h>

#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>

#include "audit/commands.h"
#include "commands/check.h"
#include "commands/doctor.h"
#include "commands/undo.h"
#include "db/follow.h"
#include "db/report.h"
#include "db/store.h"
#include "launch/launch.h"
#include "mcp/server.h"
#include "plan/plan.h"
#include "session/session.h"
#include "tracerd/server.h"

namespace {

constexpr int kOwnError = 125;

std::map<std::string, std::string> parse_vars(const std::vector<std::string>& in, bool* ok) {
  std::map<std::string, std::string> out;
  for (const auto& v : in) {
    auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "cottonbox: --var needs NAME=VALUE, got '" << v << "'\n";
      *ok = false;
      continue;
    }
    out[v.substr(0, eq)] = v.substr(eq + 1);
  }
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size() && !s.empty()) {
    size_t comma = s.find(',', pos);
    out.push_back(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// The default audit database, or, inside another session where it is
// hidden, the one sessions started there record into (db/store.h).
std::string default_db() {
  std::string usable = cb::db::usable_default_db_path();
  if (std::string def = cb::db::default_db_path(); usable != def)
    std::cerr << "cottonbox: the audit database " << def
              << " is hidden here (this runs inside another cottonbox session); reading " << usable << "\n";
  return usable;
}

// After `sessions` of the default database: where the sessions started
// inside its sessions are, and how many.
void mention_nested(const std::string& db_path, std::ostream& out) {
  std::string nested = cb::db::nested_db_path(db_path);
  if (access(nested.c_str(), F_OK) != 0 || cb::db::db_hidden(nested)) return;
  auto reader = cb::db::Reader::open(nested);
  if (!reader) return;
  auto sessions = (*reader)->sessions();
  if (!sessions || sessions->empty()) return;
  out << sessions->size() << (sessions->size() == 1 ? " session" : " sessions")
      << " started inside other sessions: cottonbox sessions --db " << nested << "\n";
}

std::atomic<bool> g_stop{false};
void on_stop_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
  // Before anything opens a file: what we inherited is what the command gets.
  cb::record_inherited_fds();

  // Everything after the first "--" is the command, untouched by parsing.
  std::vector<std::string> command;
  int cli_argc = argc;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) {
      command.assign(argv + i + 1, argv + argc);
      cli_argc = i;
      break;
    }

  CLI::App app{"cottonbox: a supervisor for AI agent sessions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "cottonbox 0.1.0");

  // ---- run
  cb::RunOptions ro;
  std::string ask = "auto";
  double ask_timeout = 60;
  std::vector<std::string> vars;
  auto* run = app.add_subcommand("run", "Run COMMAND under supervision: cottonbox run [OPTIONS] -- COMMAND [ARG...]");
  run->add_option("--policy", ro.policies, "Policy file (repeatable; later files' rules follow earlier ones)");
  run->add_option("--db", ro.db, "Audit database (default $XDG_DATA_HOME/cottonbox/audit.db)");
  run->add_option("--ask", ask,
                  "Who answers 'ask' rules: gui|tty|deny|allow|exec:PROGRAM (default: gui, else tty, else deny)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            for (const char* m : {"auto", "gui", "tty", "deny", "allow"})
              if (v == m) return "";
            if (v.starts_with("exec:") && v.size() > 5) return "";
            return "--ask must be gui, tty, deny, allow or exec:PROGRAM, not '" + v + "'";
          },
          "MODE"));
  run->add_option("--ask-timeout", ask_timeout, "Seconds to wait for an answer; none means deny")
      ->check(CLI::PositiveNumber);
  run->add_flag("--observe", ro.observe, "Record what would be decided; block nothing");
  run->add_flag("--no-keep", ro.no_keep, "Keep nothing for `cottonbox undo`");
  run->add_option("--tracer", ro.tracer, "seccomp|ebpf|seccomp,ebpf (default: both where privileges allow)")
      ->check(CLI::IsMember({"auto", "seccomp", "ebpf", "seccomp,ebpf", "ebpf,seccomp"}));
  std::string run_layers = "all", check_layers = "all";
  run->add_option("--layers", run_layers,
                  "The layers that run: all, or some of notify,tracer,mounts,landlock (for teaching and testing; "
                  "a session with fewer is marked degraded)");
  run->add_option("--var", vars, "NAME=VALUE for ${NAME} in policies (repeatable)");
  run->add_option("--name", ro.name, "A label for the session");
  run->add_option("--resolver", ro.resolver,
                  "Where the session's resolver forwards lookups: ADDR[:PORT] (default: the host's resolv.conf), "
                  "or 'off' for no resolver of the session's (no host names in its network events)");
  run->add_flag("-q,--quiet", ro.quiet, "No notes on stderr");
  std::vector<std::string> positional;
  run->add_option("command", positional, "The command (after --)");

  std::string db;  // --db for check, sessions, events, tree, hosts, changes, undo, gc

  // ---- check
  std::vector<std::string> check_policies;
  std::vector<std::string> check_vars;
  bool check_json = false;
  auto* check = app.add_subcommand("check", "Validate policy files and show the compiled rules and their layers");
  check->add_option("--policy", check_policies, "Policy file (repeatable; default: the default policy)");
  check->add_option("--var", check_vars, "NAME=VALUE for ${NAME}");
  check->add_flag("--json", check_json, "JSON output");
  check->add_option("--db", db, "The audit database a session would use (for the built-in protection)");
  bool check_no_keep = false;
  check->add_flag("--no-keep", check_no_keep, "Plan as `run --no-keep` does (nothing kept for undo)");
  check->add_option("--layers", check_layers, "Plan as `run --layers LIST` does: where each rule lands then");

  // ---- sessions / events / tree
  bool json = false;
  auto* sessions = app.add_subcommand("sessions", "List recorded sessions");
  sessions->add_option("--db", db, "Audit database");
  sessions->add_flag("--json", json, "One JSON object a line");

  cb::db::EventQuery q;
  std::string q_action, q_decision, q_path, q_host;
  int64_t q_session = 0;
  auto* events = app.add_subcommand("events", "List recorded events");
  events->add_option("--db", db, "Audit database");
  events->add_flag("--json", json, "One JSON object a line");
  events->add_option("--session", q_session, "Only this session");
  events->add_option("--action", q_action, "Only this action or group (file.delete, file.mutate, file.*)");
  events->add_option("--decision", q_decision, "allow|deny|ask|log")
      ->check(CLI::IsMember({"allow", "deny", "ask", "log"}));
  events->add_option("--path", q_path, "Only paths matching this glob");
  events->add_option("--host", q_host,
                     "Who contacted this host: a name, *.example.com, an address or a block (10.0.0.0/8)");
  bool follow = false;
  int64_t after = 0;
  events->add_flag("--follow", follow, "Keep printing events as sessions commit them (resume with --after)");
  events->add_option("--after", after, "Only events with a larger id (the last id a follower saw)");

  // ---- why / replay / suggest
  std::vector<std::string> why_args, why_policies, why_vars;
  cb::audit::WhyQuery wq;
  std::string why_ancestors, why_argv;
  bool why_json = false;
  int64_t why_deletes = -1, why_uid = -1;
  auto* why = app.add_subcommand(
      "why",
      "Explain a decision: cottonbox why EVENT_ID, or cottonbox why [--policy P...] ACTION PATH [--process NAME]");
  why->add_option("args", why_args, "EVENT_ID, or ACTION PATH");
  why->add_option("--db", db, "Audit database");
  why->add_option("--policy", why_policies, "Judge against these policy files (default: the default policy)")
      ->allow_extra_args(false);
  why->add_option("--var", why_vars, "NAME=VALUE for ${NAME}")->allow_extra_args(false);
  why->add_option("--process", wq.process, "The process's identity (process:, proc.name), also taken as its comm");
  why->add_option("--exe", wq.exe, "The process's executable");
  why->add_option("--ancestors", why_ancestors, "Its parents' names, nearest first: a,b,c");
  why->add_option("--argv", why_argv, "Its command line, comma-separated");
  why->add_option("--target", wq.target, "The second path (a rename's destination)");
  why->add_option("--deletes", why_deletes, "proc.deletes: files the process deleted, this one included");
  why->add_option("--uid", why_uid, "The process's uid");
  why->add_flag("--dir", wq.is_dir, "The path is a directory");
  why->add_flag("--json", why_json, "JSON output");

  std::vector<int64_t> replay_sessions;
  std::vector<std::string> replay_policies, replay_vars;
  bool replay_json = false;
  auto* replay = app.add_subcommand("replay", "Judge recorded sessions against another policy and show what changes");
  replay->add_option("--session", replay_sessions, "Session id (repeatable)")->allow_extra_args(false)->required();
  replay->add_option("--policy", replay_policies, "The policy to judge against (repeatable)")
      ->allow_extra_args(false)
      ->required();
  replay->add_option("--var", replay_vars, "NAME=VALUE for ${NAME}")->allow_extra_args(false);
  replay->add_option("--db", db, "Audit database");
  replay->add_flag("--json", replay_json, "JSON output");

  int64_t suggest_session = 0;
  bool suggest_json = false;
  auto* suggest = app.add_subcommand("suggest", "Print a policy learned from a session (YAML)");
  suggest->add_option("--session", suggest_session, "Session id")->required();
  suggest->add_option("--db", db, "Audit database");
  suggest->add_flag("--json", suggest_json, "JSON output");

  int64_t tree_session = 0;
  auto* tree = app.add_subcommand("tree", "Show a session's process tree");
  tree->add_option("--session", tree_session, "Session id")->required();
  tree->add_option("--db", db, "Audit database");
  tree->add_flag("--json", json, "JSON output");

  int64_t hosts_session = 0;
  auto* hosts = app.add_subcommand("hosts", "List the hosts a session contacted, with ports, processes and times");
  hosts->add_option("--session", hosts_session, "Session id")->required();
  hosts->add_option("--db", db, "Audit database");
  hosts->add_flag("--json", json, "One JSON object a line");
  // ---- changes / undo / gc
  int64_t ch_session = 0;
  uint64_t ch_command = 0;
  auto* changes = app.add_subcommand("changes", "What a session changed, per command, and whether it can be undone");
  changes->add_option("--session", ch_session, "Session id")->required();
  auto* ch_command_opt = changes->add_option("--command", ch_command, "Only this command (its number in the list)");
  changes->add_flag("--json", json, "One JSON object a line");
  changes->add_option("--db", db, "Audit database");

  int64_t un_session = 0;
  uint64_t un_command = 0;
  cb::keep::UndoRequest un;
  auto* undo = app.add_subcommand("undo", "Give back what a session changed, refusing files changed since");
  undo->add_option("--session", un_session, "Session id")->required();
  auto* un_command_opt = undo->add_option("--command", un_command, "Only this command's changes");
  undo->add_option("--path", un.path_glob, "Only paths matching this glob (a path: it and below)");
  undo->add_flag("--dry-run", un.dry_run, "Say what would be done; change nothing");
  undo->add_flag("--created", un.created, "Also remove files the session created");
  undo->add_flag("--force", un.force, "Overwrite files changed after the session");
  undo->add_option("--db", db, "Audit database");

  double gc_age = cb::kGcDefaultMaxAgeDays;
  std::string gc_size = cb::kGcDefaultMaxSize;
  auto* gc = app.add_subcommand("gc", "Remove old sessions' kept files from the keep store");
  gc->add_option("--max-age", gc_age, "Remove sessions older than DAYS (default 30; 0: no limit)");
  gc->add_option("--max-size", gc_size, "Then the oldest while the store holds more (default 10G; 0: no limit)");
  gc->add_option("--db", db, "Audit database (the store is beside it)");
  // ---- mcp
  auto* mcp = app.add_subcommand(
      "mcp", "A Model Context Protocol server on stdin/stdout: read-only tools over the audit database");
  mcp->add_option("--db", db, "Audit database");

  // ---- doctor
  bool doctor_json = false;
  auto* doctor = app.add_subcommand("doctor", "Show what this machine offers cottonbox, and what it does without each");
  doctor->add_flag("--json", doctor_json, "One JSON object");

  // ---- tracer
  cb::tracerd::ServeOptions serve_o;
  bool tracer_json = false;
  auto* tracer = app.add_subcommand("tracer", "The resident eBPF tracer that records every session (docs/tracer.md)");
  tracer->require_subcommand(1);
  auto* serve = tracer->add_subcommand("serve", "Load the tracer once and serve sessions on its socket (as root)");
  serve->add_option("--socket", serve_o.socket, "Socket path (default: /run/cottonbox/tracer.sock)");
  serve->add_option("--idle-exit", serve_o.idle_exit_s, "Exit this many seconds after the last session left")
      ->check(CLI::NonNegativeNumber);
  serve->add_flag("--keep", serve_o.keep, "Stay when no session is left");
  serve->add_option("--ready-fd", serve_o.ready_fd, "Write 1 to this fd once serving (for whoever starts it)");
  auto* tstatus = tracer->add_subcommand("status", "Whether the tracer service runs, its sessions and programs");
  tstatus->add_option("--socket", serve_o.socket, "Socket path");
  tstatus->add_flag("--json", tracer_json, "One JSON object");

  try {
    app.parse(cli_argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kOwnError;
  }

  if (*run) {
    if (!positional.empty()) command.insert(command.begin(), positional.begin(), positional.end());
    if (command.empty()) {
      std::cerr << "cottonbox run: no command given (usage: cottonbox run [OPTIONS] -- COMMAND [ARG...])\n";
      return kOwnError;
    }
    bool ok = true;
    ro.vars = parse_vars(vars, &ok);
    if (!ok) return kOwnError;
    ro.command = command;
    ro.ask = ask == "gui"               ? cb::AskMode::Gui
             : ask == "tty"             ? cb::AskMode::Tty
             : ask == "deny"            ? cb::AskMode::Deny
             : ask == "allow"           ? cb::AskMode::Allow
             : ask.starts_with("exec:") ? cb::AskMode::Exec
                                        : cb::AskMode::Auto;
    if (ro.ask == cb::AskMode::Exec) ro.ask_program = ask.substr(5);
    ro.ask_timeout = std::chrono::milliseconds(static_cast<int64_t>(ask_timeout * 1000));
    auto layers = cb::parse_layers(run_layers);
    if (!layers) {
      std::cerr << "cottonbox: " << layers.error().message << "\n";
      return kOwnError;
    }
    ro.layers = *layers;
    if (!ro.layers.tracer && (ro.tracer == "ebpf" || ro.tracer.find(',') != std::string::npos)) {
      std::cerr << "cottonbox: --tracer " << ro.tracer << " asks for the tracer, which --layers leaves out\n";
      return kOwnError;
    }
    try {
      return cb::run_session(ro);
    } catch (const std::exception& e) {
      std::cerr << "cottonbox: " << e.what() << "\n";
      return kOwnError;
    }
  }
  if (!command.empty()) {
    std::cerr << "cottonbox: '--' is only meaningful with 'run'\n";
    return kOwnError;
  }
  if (*check) {
    bool ok = true;
    auto v = parse_vars(check_vars, &ok);
    if (!ok) return kOwnError;
    auto layers = cb::parse_layers(check_layers);
    if (!layers) {
      std::cerr << "cottonbox: " << layers.error().message << "\n";
      return kOwnError;
    }
    return cb::run_check(check_policies, v, db.empty() ? default_db() : db, check_json, std::cout, !check_no_keep,
                         *layers);
  }
  if (*mcp) {
    signal(SIGPIPE, SIG_IGN);
    return cb::mcp::run_mcp(db.empty() ? default_db() : db, std::cin, std::cout);
  }
  if (*why) {
    std::string db_path = db.empty() ? default_db() : db;
    if (why_args.size() == 1) {
      char* end = nullptr;
      long long id = strtoll(why_args[0].c_str(), &end, 10);
      if (!end || *end || id <= 0) {
        std::cerr << "cottonbox why: '" << why_args[0] << "' is no event id (or give ACTION PATH)\n";
        return kOwnError;
      }
      return cb::audit::run_why_event(db_path, id, why_json, std::cout);
    }
    if (why_args.size() != 2) {
      std::cerr << "cottonbox why: give EVENT_ID, or ACTION PATH\n";
      return kOwnError;
    }
    bool ok = true;
    auto v = parse_vars(why_vars, &ok);
    if (!ok) return kOwnError;
    wq.action = why_args[0];
    wq.path = why_args[1];
    wq.ancestors = split_commas(why_ancestors);
    wq.argv = split_commas(why_argv);
    if (why_deletes >= 0) wq.deletes = static_cast<uint32_t>(why_deletes);
    if (why_uid >= 0) wq.uid = static_cast<uint32_t>(why_uid);
    auto files = why_policies.empty() ? cb::default_policy_files() : why_policies;
    return cb::audit::run_why_query(files, v, db_path, wq, why_json, std::cout);
  }
  if (*replay) {
    bool ok = true;
    auto v = parse_vars(replay_vars, &ok);
    if (!ok) return kOwnError;
    return cb::audit::run_replay(db.empty() ? default_db() : db, replay_sessions, replay_policies, v, replay_json,
                                 std::cout);
  }
  if (*suggest) return cb::audit::run_suggest(db.empty() ? default_db() : db, suggest_session, suggest_json, std::cout);
  if (*events && follow) {
    if (q_session) q.session = q_session;
    if (!q_action.empty()) q.action = q_action;
    if (!q_decision.empty()) q.decision = q_decision;
    if (!q_path.empty()) q.path_glob = q_path;
    if (!q_host.empty()) q.host = q_host;
    q.after_id = after;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    cb::db::FollowOptions fo;
    fo.query = q;
    fo.json = json;
    fo.stop = &g_stop;
    return cb::db::follow_events(db.empty() ? default_db() : db, fo, std::cout);
  }
  if (*doctor) return cb::run_doctor(doctor_json, std::cout);
  if (*serve) return cb::tracerd::serve(serve_o, std::cerr);
  if (*tstatus) return cb::tracerd::print_status(serve_o.socket, tracer_json, std::cout);
  std::string db_path = db.empty() ? default_db() : db;
  if (*changes)
    return cb::run_changes(db_path, ch_session, *ch_command_opt ? std::optional(ch_command) : std::nullopt, json,
                           std::cout);
  if (*undo) {
    if (*un_command_opt) un.command = un_command;
    return cb::run_undo(db_path, un_session, un, std::cout);
  }
  if (*gc) return cb::run_gc(db_path, gc_age, gc_size, std::cout);
  auto reader = cb::db::Reader::open(db_path);
  if (!reader) return cb::db::report_error(reader.error());
  if (*sessions) {
    int rc = cb::db::print_sessions(**reader, json, std::cout);
    if (rc == 0 && !json && db.empty()) mention_nested(db_path, std::cout);
    return rc;
  }
  if (*events) {
    if (q_session) q.session = q_session;
    if (!q_action.empty()) q.action = q_action;
    if (!q_decision.empty()) q.decision = q_decision;
    if (!q_path.empty()) q.path_glob = q_path;
    if (!q_host.empty()) q.host = q_host;
    q.after_id = after;
    return cb::db::print_events(**reader, q, json, std::cout);
  }
  if (*tree) return cb::db::print_tree(**reader, tree_session, json, std::cout);
  if (*hosts) return cb::db::print_hosts(**reader, hosts_session, json, std::cout);
  return kOwnError;
}
