#include "commands/undo.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "db/json.h"
#include "db/report.h"
#include "keep/budget.h"
#include "keep/gc.h"

namespace cb {
namespace {

using UAction = keep::Action;
using keep::ChangeLine;
using keep::Op;
using keep::Undo;

constexpr int kRefused = 1;

int fail(const std::string& message) { return db::report_error(Error{0, message}); }

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

std::string command_title(const keep::RecordedSession& s, uint64_t command) {
  if (command == 0) return "command 0 (a process not recorded)";
  const keep::AuditProcess* p = s.commands.process(command);
  std::string title = "command " + std::to_string(command);
  if (p) {
    title += " (";
    if (command == s.commands.root()) title += "the session's first process itself, ";
    title += "pid " + std::to_string(p->pid) +
             "): " + db::escape_for_terminal(db::shell_join(keep::command_argv(s, command)));
  }
  return title;
}

// A command the session has (a child of its root, or the root).
bool is_command(const keep::RecordedSession& s, uint64_t command) {
  return s.commands.knows(command) && s.commands.command_of(command) == command;
}

Result<keep::RecordedSession> load(const std::string& db_path, int64_t session) {
  auto reader = db::Reader::open(db_path);
  if (!reader) return reader.error();
  return keep::load_session(**reader, session);
}

void print_notes(const keep::RecordedSession& s, std::ostream& err) {
  if (!s.journal)
    err << "note: session " << s.summary.id << " has no keep journal in " << s.store_dir
        << ": nothing it changed was kept\n";
  if (s.history.damaged_records)
    err << "note: " << s.history.damaged_records << " damaged records of the keep journal were skipped\n";
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view s) {
  double n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || n < 0 || !std::isfinite(n)) return std::nullopt;
  std::string unit(end, s.data() + s.size());
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();  // "GB", "GIB"
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  static const std::map<std::string, int> shifts = {{"", 0}, {"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}};
  auto it = shifts.find(unit);
  if (it == shifts.end()) return std::nullopt;
  double bytes = std::ldexp(n, it->second);
  if (bytes > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

int run_changes(const std::string& db_path, int64_t session, std::optional<uint64_t> command, bool json,
                std::ostream& out) {
  auto s = load(db_path, session);
  if (!s) return db::report_error(s.error());
  if (command && !is_command(*s, *command))
    return fail("session " + std::to_string(session) + " has no command " + std::to_string(*command) +
                " (see `cottonbox changes --session " + std::to_string(session) + "`)");
  auto lines = keep::list_changes(s->history);
  if (command)
    lines.erase(std::remove_if(lines.begin(), lines.end(), [&](const ChangeLine& l) { return l.command != *command; }),
                lines.end());

  if (json) {
    for (const ChangeLine& l : lines) {
      nlohmann::json j;
      j["session"] = session;
      j["command"] = l.command;
      const keep::AuditProcess* p = s->commands.process(l.command);
      j["pid"] = p ? nlohmann::json(p->pid) : nlohmann::json(nullptr);
      db::put_bytes_array(j, "argv", keep::command_argv(*s, l.command));
      db::put_bytes(j, "path", l.path);
      if (!l.target.empty()) db::put_bytes(j, "target", l.target);
      j["changes"] = keep::change_words(l);
      auto ops = nlohmann::json::array();
      for (Op o : l.ops) ops.push_back(std::string(keep::op_name(o)));
      j["ops"] = ops;
      j["before"] = std::string(keep::file_type_name(l.before));
      j["undo"] = std::string(keep::undo_name(l.undo));
      j["undoable"] = l.undoable;
      j["reason"] = l.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.reason);
      out << j.dump() << "\n";
    }
    print_notes(*s, std::cerr);
    return 0;
  }

  out << "session " << session << ": " << db::escape_for_terminal(db::shell_join(s->summary.start.argv)) << "\n";
  if (lines.empty()) out << "no changes to files recorded\n";
  size_t wc = 0, wu = 0;
  for (const ChangeLine& l : lines) {
    wc = std::max(wc, join(keep::change_words(l), ", ").size());
    wu = std::max(wu, keep::undo_words(l.undo).size());
  }
  std::map<Undo, size_t> counts;
  uint64_t current = ~uint64_t{0};
  for (const ChangeLine& l : lines) {
    if (l.command != current) {
      current = l.command;
      out << command_title(*s, l.command) << "\n";
    }
    ++counts[l.undo];
    std::string c = join(keep::change_words(l), ", ");
    std::string u(keep::undo_words(l.undo));
    out << "  " << c << std::string(wc - c.size() + 2, ' ') << u << std::string(wu - u.size() + 2, ' ')
        << db::escape_for_terminal(l.path);
    if (!l.target.empty()) out << " -> " << db::escape_for_terminal(l.target);
    if (!l.reason.empty()) out << ": " << l.reason;
    out << "\n";
  }
  if (!lines.empty()) {
    out << lines.size() << (lines.size() == 1 ? " change: " : " changes: ") << counts[Undo::Restore] << " kept, "
        << counts[Undo::MoveBack] << (counts[Undo::MoveBack] == 1 ? " rename" : " renames") << " to move back, "
        << counts[Undo::Created] << " created (undo --created removes them), " << counts[Undo::Cannot] << " not kept\n";
  }
  print_notes(*s, std::cerr);
  return 0;
}

int run_undo(const std::string& db_path, int64_t session, keep::UndoRequest request, std::ostream& out) {
  auto s = load(db_path, session);
  if (!s) return db::report_error(s.error());
  if (request.command && !is_command(*s, *request.command))
    return fail("session " + std::to_string(session) + " has no command " + std::to_string(*request.command) +
                " (see `cottonbox changes --session " + std::to_string(session) + "`)");
  if (!request.path_glob.empty()) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return fail("cannot read the working directory for --path");
    request.path_glob = keep::absolute_glob(request.path_glob, cwd);
  }
  auto report = keep::undo_session(*s, request);
  if (!report) return db::report_error(report.error());
  print_notes(*s, std::cerr);

  out << "undo of session " << session;
  if (request.command) out << ", command " << *request.command;
  if (!request.path_glob.empty()) out << ", paths " << db::escape_for_terminal(request.path_glob);
  out << (request.dry_run ? " (dry run: nothing changed)" : "") << "\n";
  size_t nothing = 0, skipped = 0;
  std::map<std::string, size_t> counts;
  for (size_t i = 0; i < report->steps.size(); ++i) {
    const keep::Step& st = report->steps[i];
    const keep::Outcome* o = i < report->applied.outcomes.size() ? &report->applied.outcomes[i] : nullptr;
    std::string word;
    std::string why;
    switch (st.action) {
      case UAction::Nothing: ++nothing; continue;
      case UAction::SkipCreated:
        ++skipped;
        word = "left";
        why = st.reason;
        break;
      case UAction::Restore:
      case UAction::Remove:
      case UAction::MoveBack:
        word = st.action == UAction::Restore ? "restored" : st.action == UAction::Remove ? "removed" : "moved back";
        if (request.dry_run) {
          word = st.action == UAction::Restore ? "restore" : st.action == UAction::Remove ? "remove" : "move back";
        } else if (o && !o->done) {
          word = "failed";
          why = o->error;
        }
        if (st.forced && why.empty()) why = st.reason;
        break;
      case UAction::Conflict:
        word = "conflict";
        why = st.reason;
        break;
      case UAction::Cannot:
        word = "not kept";
        why = st.reason;
        break;
    }
    ++counts[word];
    out << "  " << word << std::string(word.size() < 11 ? 11 - word.size() : 1, ' ')
        << db::escape_for_terminal(st.candidate.path);
    if (st.candidate.move_back) out << " -> " << db::escape_for_terminal(st.candidate.move_to);
    if (!why.empty()) out << ": " << why;
    out << "\n";
    if (o)
      for (const std::string& n : o->notes) out << "             note: " << n << "\n";
  }
  std::vector<std::string> parts;
  for (const char* word :
       {"restored", "removed", "moved back", "restore", "remove", "move back", "conflict", "not kept", "failed"})
    if (counts[word]) parts.push_back(std::to_string(counts[word]) + " " + word);
  if (skipped) parts.push_back(std::to_string(skipped) + " created by the session left (--created removes them)");
  if (nothing) parts.push_back(std::to_string(nothing) + " already as before");
  out << (parts.empty() ? "nothing to undo" : join(parts, ", ")) << "\n";

  if (!request.dry_run) {
    auto id = keep::record_undo(*s, request, *report);
    if (!id) {
      std::cerr << "cottonbox: the undo was carried out but not recorded in " << db_path << ": " << id.error().message
                << "\n";
      return db::kExitFailure;
    }
  }
  return keep::anything_refused(*report) ? kRefused : 0;
}

int run_gc(const std::string& db_path, double max_age_days, const std::string& max_size, std::ostream& out) {
  auto bytes = parse_size(max_size);
  if (!bytes) return fail("--max-size: not a size: '" + max_size + "' (e.g. 10G, 512M, 4096)");
  if (max_age_days < 0 || !std::isfinite(max_age_days)) return fail("--max-age: not a number of days");
  std::string dir = keep::Store::dir_beside(db_path);
  auto store = keep::Store::open(dir, false);
  if (!store) {
    if (store.error().err == ENOENT) {
      out << "no keep store at " << dir << ": nothing to collect\n";
      return 0;
    }
    return db::report_error(store.error());
  }
  keep::GcOptions opt;
  opt.max_age_ns = static_cast<int64_t>(max_age_days * 86400.0 * 1e9);
  opt.max_bytes = *bytes;
  auto r = keep::gc(*store, opt);
  if (!r) return db::report_error(r.error());

  // Sessions by the audit database's number where it knows them.
  std::map<std::string, int64_t> ids;
  if (auto reader = db::Reader::open(db_path))
    if (auto sessions = (*reader)->sessions())
      for (const db::SessionSummary& s : *sessions) ids[s.start.uuid] = s.id;
  auto name = [&](const std::string& uuid) {
    auto it = ids.find(uuid);
    return it == ids.end() ? uuid : "session " + std::to_string(it->second) + " (" + uuid + ")";
  };
  for (const std::string& s : r->removed) out << "removed  " << name(s) << "\n";
  for (const std::string& s : r->live) out << "live     " << name(s) << " (its session runs: left alone)\n";
  out << "keep store " << dir << ": " << keep::human_bytes(r->bytes_before) << " before, "
      << keep::human_bytes(r->bytes_after) << " after; " << r->removed.size() << " sessions and " << r->objects_removed
      << " objects removed, " << r->settled << " staged objects settled\n";
  if (r->damaged_records) out << "note: " << r->damaged_records << " damaged journal records skipped\n";
  return 0;
}

}  // namespace cb
