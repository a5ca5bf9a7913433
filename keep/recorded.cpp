#include "keep/recorded.h"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>

#include "keep/budget.h"
#include "keep/fsutil.h"
#include "policy/glob.h"

namespace cb::keep {

std::vector<AuditEvent> audit_events(const std::vector<db::StoredEvent>& events) {
  std::vector<AuditEvent> out;
  out.reserve(events.size());
  for (const db::StoredEvent& s : events) {
    const EventRow& r = s.row;
    AuditEvent e;
    e.seq = r.seq;
    e.ts_ns = r.ev.ts_ns;
    e.proc = r.ev.proc ? r.ev.proc->proc_id : 0;
    e.action = r.ev.action;
    e.syscall = r.ev.syscall;
    e.path = r.ev.path;
    e.target = r.ev.target;
    e.flags = r.ev.flags;
    e.is_dir = r.ev.is_dir;
    e.allowed = r.allowed;
    e.result_errno = r.result_errno;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<AuditProcess> audit_processes(const std::vector<db::StoredProcess>& processes) {
  std::vector<AuditProcess> out;
  out.reserve(processes.size());
  for (const db::StoredProcess& s : processes) {
    AuditProcess p;
    p.proc_id = s.row.proc_id;
    p.parent = s.row.parent_proc_id;
    p.pid = s.row.pid;
    p.comm = s.row.comm;
    p.argv = s.row.argv;
    p.started_ns = s.row.started_ns;
    out.push_back(std::move(p));
  }
  return out;
}

Result<RecordedSession> load_session(db::Reader& reader, int64_t id) {
  auto summary = reader.session(id);
  if (!summary) return summary.error();
  auto procs = reader.processes(id);
  if (!procs) return procs.error();
  db::EventQuery q;
  q.session = id;
  q.action = "file.mutate";
  auto events = reader.events(q);
  if (!events) return events.error();

  RecordedSession s;
  s.db_path = reader.path();
  s.summary = std::move(*summary);
  s.commands = CommandTable(audit_processes(*procs));
  s.store_dir = Store::dir_beside(reader.path());
  Parsed journal;
  const std::string& uuid = s.summary.start.uuid;
  if (Store::valid_session(uuid)) {
    auto store = Store::open(s.store_dir, false);
    if (store) {
      auto parsed = store->read_session(uuid);
      if (parsed) {
        journal = std::move(*parsed);
        s.journal = true;
      } else if (parsed.error().err != ENOENT) {
        return parsed.error();
      }
      s.store = std::move(*store);
    } else if (store.error().err != ENOENT) {
      return store.error();
    }
  }
  s.history = build_history(journal, audit_events(*events), s.commands);
  return s;
}

std::vector<std::string> command_argv(const RecordedSession& s, uint64_t command) {
  const AuditProcess* p = s.commands.process(command);
  if (!p) return {};
  if (!p->argv.empty()) return p->argv;
  return {p->comm};
}

std::optional<Candidate> candidate_for(const RecordedSession& s, uint64_t command, const std::string& path) {
  Selection sel;
  sel.commands = {command};
  sel.matches = [&](std::string_view p) { return p == path; };
  for (Candidate& c : select_changes(s.history.records, s.history.left, sel))
    if (c.path == path) return std::move(c);
  return std::nullopt;
}

Result<std::string> read_kept(const RecordedSession& s, const Snapshot& previous, uint64_t limit) {
  if (previous.type != FileType::Regular) return Error{EINVAL, "not a regular file before"};
  if (previous.kept == Kept::NotKept) return Error{ENOENT, "not kept: " + previous.reason};
  if (previous.object.empty()) return Error{ENOENT, "its content was not kept (only its metadata)"};
  if (previous.size > limit) return Error{EFBIG, "larger than " + human_bytes(limit)};
  if (!s.store) return Error{ENOENT, "no keep store at " + s.store_dir};
  auto fd = s.store->open_object(previous.object);
  if (!fd) return fd.error();
  return read_all(fd->get());
}

std::string absolute_glob(std::string_view pattern, std::string_view cwd) {
  std::string g(pattern);
  if (g.empty() || g[0] != '/') g = std::string(cwd) + (cwd.empty() || cwd.back() != '/' ? "/" : "") + g;
  while (g.size() > 1 && g.back() == '/') g.pop_back();
  if (g.find_first_of("*?[{\\") == std::string::npos) g += "/**";  // a path: it and everything below
  return g;
}

Result<Selection> selection_for(const UndoRequest& request) {
  Selection sel;
  if (request.command) sel.commands = {*request.command};
  if (!request.path_glob.empty()) {
    auto g = Glob::compile(request.path_glob);
    if (!g) return Error{EINVAL, "bad --path glob '" + request.path_glob + "': " + g.error().message};
    auto glob = std::make_shared<Glob>(std::move(*g));
    sel.matches = [glob](std::string_view p) { return glob->match(p); };
  }
  return sel;
}

Result<UndoReport> undo_session(const RecordedSession& s, const UndoRequest& request) {
  if (s.summary.state == SessionState::Running)
    return Error{EBUSY, "session " + std::to_string(s.summary.id) + " is still running: undo it once it has ended"};
  auto sel = selection_for(request);
  if (!sel) return sel.error();
  UndoOptions opt;
  opt.selection = std::move(*sel);
  opt.plan.force = request.force;
  opt.plan.created = request.created;
  opt.plan.session_end_ns = s.summary.end ? s.summary.end->ended_ns : 0;
  opt.dry_run = request.dry_run;
  return undo(s.store ? &*s.store : nullptr, s.history, opt);
}

Result<int64_t> record_undo(const RecordedSession& s, const UndoRequest& request, const UndoReport& report) {
  db::UndoRun run;
  run.session = s.summary.id;
  run.ts_ns = now_ns();
  run.uid = getuid();
  if (struct passwd* pw = getpwuid(run.uid)) run.user = pw->pw_name;
  run.command = request.command;
  run.path_glob = request.path_glob;
  run.force = request.force;
  run.created = request.created;
  for (size_t i = 0; i < report.steps.size(); ++i) {
    const Step& st = report.steps[i];
    db::UndoFile f;
    f.path = st.candidate.path;
    if (st.candidate.move_back) f.target = st.candidate.move_to;
    f.action = std::string(action_name(st.action));
    f.forced = st.forced;
    f.reason = st.reason;
    if (i < report.applied.outcomes.size()) {
      const Outcome& o = report.applied.outcomes[i];
      f.done = o.done;
      if (!o.error.empty()) f.reason = o.error;
      f.notes = o.notes;
    }
    run.files.push_back(std::move(f));
  }
  return db::record_undo(s.db_path, run);
}

bool anything_refused(const UndoReport& r) {
  for (const Step& s : r.steps)
    if (s.action == Action::Conflict || s.action == Action::Cannot) return true;
  return r.applied.failed > 0;
}

}  // namespace cb::keep
