#include "keep/history.h"

#include <fcntl.h>
#include <linux/fs.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <tuple>

namespace cb::keep {
namespace {

bool system_path(std::string_view p) {
  for (std::string_view root : {"/dev", "/proc", "/sys"})
    if (p.substr(0, root.size()) == root && (p.size() == root.size() || p[root.size()] == '/')) return true;
  return false;
}

bool succeeded(const AuditEvent& e) { return e.allowed && e.result_errno <= 0; }

Op attr_op(std::string_view syscall) {
  if (syscall.find("chown") != std::string_view::npos) return Op::Chown;
  if (syscall.find("xattr") != std::string_view::npos) return Op::Xattr;
  if (syscall.find("utime") != std::string_view::npos) return Op::Utimes;
  return Op::Chmod;
}

Snapshot from_event(const AuditEvent& e, uint64_t command, Op op, const std::string& path) {
  Snapshot s;
  s.ts_ns = e.ts_ns;
  s.command = command;
  s.proc = e.proc;
  s.event = e.seq;
  s.op = op;
  s.path = path;
  return s;
}

// One item of the merged order: a record (index into records) or a rename.
struct Item {
  uint64_t event = 0;
  int64_t ts = 0;
  int kind = 0;  // 0 record, 1 rename: a rename follows the records of its own event
  size_t index = 0;
  size_t tie = 0;  // journal seq, or the event's position
};

}  // namespace

CommandTable::CommandTable(const std::vector<AuditProcess>& processes) {
  for (const AuditProcess& p : processes) {
    procs_[p.proc_id] = p;
    if (p.parent == 0 && (root_ == 0 || p.proc_id < root_)) root_ = p.proc_id;
  }
}

const AuditProcess* CommandTable::process(uint64_t proc) const {
  auto it = procs_.find(proc);
  return it == procs_.end() ? nullptr : &it->second;
}

uint64_t CommandTable::command_of(uint64_t proc) const {
  const AuditProcess* p = process(proc);
  if (!p) return 0;
  // Bounded: a table with a cycle in it (a damaged file) ends somewhere.
  for (size_t steps = 0; steps < procs_.size(); ++steps) {
    if (p->proc_id == root_ || p->parent == root_ || p->parent == 0) return p->proc_id;
    const AuditProcess* up = process(p->parent);
    if (!up) return p->proc_id;
    p = up;
  }
  return p->proc_id;
}

History build_history(const Parsed& journal, const std::vector<AuditEvent>& events, const CommandTable& commands) {
  History h;
  h.left = journal.left;
  h.damaged_records = journal.damaged;
  std::vector<Snapshot>& recs = h.records;
  for (const Snapshot& s : journal.snapshots) {
    Snapshot r = s;
    if (commands.knows(r.proc)) r.command = commands.command_of(r.proc);
    recs.push_back(std::move(r));
  }
  size_t journaled = recs.size();

  // What the journal covers: the records of each event and path, and per
  // path the records in the journal's order.
  std::set<std::pair<uint64_t, std::string>> by_event;
  std::map<std::string, std::vector<size_t>> by_path;
  for (size_t i = 0; i < journaled; ++i) {
    by_event.emplace(recs[i].event, recs[i].path);
    by_path[recs[i].path].push_back(i);
  }
  // Paths the session created, with the event that did (for the renames).
  std::map<std::string, std::vector<uint64_t>> created;
  for (size_t i = 0; i < journaled; ++i)
    if (recs[i].op == Op::Create) created[recs[i].path].push_back(recs[i].event);

  // An in-place change is kept once per inode and command: a later write of
  // the same command has no record of its own, and is covered.
  auto covered = [&](const AuditEvent& e, uint64_t command, bool metadata) {
    auto it = by_path.find(e.path);
    if (it == by_path.end()) return false;
    for (size_t i : it->second) {
      const Snapshot& r = recs[i];
      if (r.event == e.seq) return true;
      if (r.command != command || r.op == Op::Entries || (r.event && r.event > e.seq)) continue;
      if (r.op == Op::Create || op_metadata_only(r.op) == metadata) return true;
    }
    return false;
  };

  std::vector<Item> items;
  std::vector<const AuditEvent*> renames;
  for (size_t n = 0; n < events.size(); ++n) {
    const AuditEvent& e = events[n];
    if (!succeeded(e) || e.path.empty()) continue;
    uint64_t cmd = commands.command_of(e.proc);
    switch (e.action) {
      case cb::Action::FileCreate:
      case cb::Action::FileLink:
        if (e.path.back() == '/') break;  // O_TMPFILE: a file without a name
        if (!by_event.count({e.seq, e.path})) {
          recs.push_back(from_event(e, cmd, Op::Create, e.path));
          recs.back().type = FileType::Absent;
          recs.back().kept = Kept::Metadata;
          created[e.path].push_back(e.seq);
        }
        break;
      case cb::Action::FileRename: renames.push_back(&e); break;
      case cb::Action::FileDelete:
        if (!by_event.count({e.seq, e.path})) {
          recs.push_back(from_event(e, cmd, e.is_dir ? Op::Rmdir : Op::Unlink, e.path));
          recs.back().type = e.is_dir ? FileType::Directory : FileType::Regular;
          recs.back().reason = kNoKeepRecord;
        }
        break;
      case cb::Action::FileTruncate:
      case cb::Action::FileWrite:
        if (e.is_dir || system_path(e.path) || covered(e, cmd, false)) break;
        recs.push_back(
            from_event(e, cmd, e.action == cb::Action::FileTruncate ? Op::OpenTrunc : Op::WriteOpen, e.path));
        recs.back().type = FileType::Regular;
        recs.back().reason = kNoKeepRecord;
        break;
      case cb::Action::FileAttr:
        if (system_path(e.path) || covered(e, cmd, true)) break;
        recs.push_back(from_event(e, cmd, attr_op(e.syscall), e.path));
        recs.back().type = e.is_dir ? FileType::Directory : FileType::Regular;
        recs.back().reason = kNoKeepRecord;
        break;
      default: break;
    }
  }

  auto created_before = [&](const std::string& path, uint64_t event) {
    auto it = created.find(path);
    if (it == created.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(), [&](uint64_t c) { return c && c < event; });
  };
  for (const AuditEvent* e : renames) {
    if (e->target.empty()) continue;
    Rename r;
    r.event = e->seq;
    r.ts_ns = e->ts_ns;
    r.proc = e->proc;
    r.command = commands.command_of(e->proc);
    r.from = e->path;
    r.to = e->target;
    r.is_dir = e->is_dir;
    r.exchange = (e->flags & RENAME_EXCHANGE) != 0;
    r.move_back = !created_before(r.from, r.event) && !(r.exchange && created_before(r.to, r.event));
    if (!r.move_back) {
      // What the session made elsewhere took this name: without a keep
      // record of the name's previous state, it is a change not kept.
      for (const std::string* p : {&r.to, r.exchange ? &r.from : nullptr}) {
        if (!p || by_event.count({r.event, *p})) continue;
        recs.push_back(from_event(*e, r.command, Op::RenameOver, *p));
        recs.back().type = r.is_dir ? FileType::Directory : FileType::Regular;
        recs.back().reason = std::string(kNoKeepRecord) + "; it may not have existed before";
      }
    }
    h.renames.push_back(std::move(r));
  }

  // A name a move back frees needs no record of its own: the keeper's note
  // that the rename created it says what the move back undoes.
  std::set<std::pair<uint64_t, std::string>> moved_to;
  for (const Rename& r : h.renames)
    if (r.move_back && !r.exchange) moved_to.emplace(r.event, r.to);
  if (!moved_to.empty()) {
    std::vector<Snapshot> kept_recs;
    size_t n = 0;
    for (size_t i = 0; i < recs.size(); ++i) {
      if (i < journaled && recs[i].op == Op::Create && moved_to.count({recs[i].event, recs[i].path})) continue;
      if (i < journaled) ++n;
      kept_recs.push_back(std::move(recs[i]));
    }
    recs = std::move(kept_recs);
    journaled = n;
  }

  // The session's order: by event where every record has one (the
  // supervisor passes it); else the journal's order, with what the audit
  // trail adds merged in by time.
  bool by_seq = std::all_of(recs.begin(), recs.end(), [](const Snapshot& s) { return s.event != 0; });
  std::vector<Item> journal_items, other_items;
  for (size_t i = 0; i < recs.size(); ++i)
    (i < journaled ? journal_items : other_items)
        .push_back({recs[i].event, recs[i].ts_ns, 0, i, i < journaled ? recs[i].seq : recs[i].event});
  for (size_t i = 0; i < h.renames.size(); ++i)
    other_items.push_back({h.renames[i].event, h.renames[i].ts_ns, 1, i, h.renames[i].event});
  if (by_seq) {
    items = journal_items;
    items.insert(items.end(), other_items.begin(), other_items.end());
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return std::tie(a.event, a.kind, a.tie) < std::tie(b.event, b.kind, b.tie);
    });
  } else {
    std::stable_sort(journal_items.begin(), journal_items.end(),
                     [](const Item& a, const Item& b) { return a.tie < b.tie; });
    std::stable_sort(other_items.begin(), other_items.end(),
                     [](const Item& a, const Item& b) { return std::tie(a.ts, a.tie) < std::tie(b.ts, b.tie); });
    std::merge(journal_items.begin(), journal_items.end(), other_items.begin(), other_items.end(),
               std::back_inserter(items), [](const Item& a, const Item& b) { return a.ts < b.ts; });
  }
  std::vector<Snapshot> ordered;
  ordered.reserve(recs.size());
  uint64_t seq = 0;
  for (const Item& it : items) {
    if (it.kind == 1) {
      h.renames[it.index].seq = ++seq;
    } else {
      ordered.push_back(std::move(recs[it.index]));
      ordered.back().seq = ++seq;
    }
  }
  std::sort(h.renames.begin(), h.renames.end(), [](const Rename& a, const Rename& b) { return a.seq < b.seq; });
  h.records = std::move(ordered);
  return h;
}

}  // namespace cb::keep
