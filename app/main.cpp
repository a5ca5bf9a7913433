// cottonbox: run a command under supervision, and read the audit trail.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>

#include "commands/check.h"
#include "commands/doctor.h"
#include "db/report.h"
#include "db/store.h"
#include "launch/launch.h"
#include "plan/plan.h"
#include "session/session.h"

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
  run->add_option("--ask", ask, "Who answers 'ask' rules: gui|tty|deny|allow (default: gui, else tty, else deny)")
      ->check(CLI::IsMember({"auto", "gui", "tty", "deny", "allow"}));
  run->add_option("--ask-timeout", ask_timeout, "Seconds to wait for an answer; none means deny")
      ->check(CLI::PositiveNumber);
  run->add_flag("--observe", ro.observe, "Record what would be decided; block nothing");
  run->add_option("--tracer", ro.tracer, "seccomp|ebpf|seccomp,ebpf (default: both where privileges allow)")
      ->check(CLI::IsMember({"auto", "seccomp", "ebpf", "seccomp,ebpf", "ebpf,seccomp"}));
  run->add_option("--var", vars, "NAME=VALUE for ${NAME} in policies (repeatable)");
  run->add_option("--name", ro.name, "A label for the session");
  run->add_flag("-q,--quiet", ro.quiet, "No notes on stderr");
  std::vector<std::string> positional;
  run->add_option("command", positional, "The command (after --)");

  std::string db;  // --db for check, sessions, events, tree, hosts

  // ---- check
  std::vector<std::string> check_policies;
  std::vector<std::string> check_vars;
  bool check_json = false;
  auto* check = app.add_subcommand("check", "Validate policy files and show the compiled rules and their layers");
  check->add_option("--policy", check_policies, "Policy file (repeatable; default: the default policy)");
  check->add_option("--var", check_vars, "NAME=VALUE for ${NAME}");
  check->add_flag("--json", check_json, "JSON output");
  check->add_option("--db", db, "The audit database a session would use (for the built-in protection)");

  // ---- sessions / events / tree
  bool json = false;
  auto* sessions = app.add_subcommand("sessions", "List recorded sessions");
  sessions->add_option("--db", db, "Audit database");
  sessions->add_flag("--json", json, "One JSON object a line");

  cb::db::EventQuery q;
  std::string q_action, q_decision, q_path;
  int64_t q_session = 0;
  auto* events = app.add_subcommand("events", "List recorded events");
  events->add_option("--db", db, "Audit database");
  events->add_flag("--json", json, "One JSON object a line");
  events->add_option("--session", q_session, "Only this session");
  events->add_option("--action", q_action, "Only this action or group (file.delete, file.mutate, file.*)");
  events->add_option("--decision", q_decision, "allow|deny|ask|log")
      ->check(CLI::IsMember({"allow", "deny", "ask", "log"}));
  events->add_option("--path", q_path, "Only paths matching this glob");

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

  // ---- doctor
  bool doctor_json = false;
  auto* doctor = app.add_subcommand("doctor", "Show what this machine offers cottonbox, and what it does without each");
  doctor->add_flag("--json", doctor_json, "One JSON object");

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
    ro.ask = ask == "gui"     ? cb::AskMode::Gui
             : ask == "tty"   ? cb::AskMode::Tty
             : ask == "deny"  ? cb::AskMode::Deny
             : ask == "allow" ? cb::AskMode::Allow
                              : cb::AskMode::Auto;
    ro.ask_timeout = std::chrono::milliseconds(static_cast<int64_t>(ask_timeout * 1000));
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
    return cb::run_check(check_policies, v, db.empty() ? cb::db::default_db_path() : db, check_json, std::cout);
  }
  if (*doctor) return cb::run_doctor(doctor_json, std::cout);
  std::string db_path = db.empty() ? cb::db::default_db_path() : db;
  auto reader = cb::db::Reader::open(db_path);
  if (!reader) return cb::db::report_error(reader.error());
  if (*sessions) return cb::db::print_sessions(**reader, json, std::cout);
  if (*events) {
    if (q_session) q.session = q_session;
    if (!q_action.empty()) q.action = q_action;
    if (!q_decision.empty()) q.decision = q_decision;
    if (!q_path.empty()) q.path_glob = q_path;
    return cb::db::print_events(**reader, q, json, std::cout);
  }
  if (*tree) return cb::db::print_tree(**reader, tree_session, json, std::cout);
  if (*hosts) return cb::db::print_hosts(**reader, hosts_session, json, std::cout);
  return kOwnError;
}
