#include "keep/plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace cb::keep {
namespace {

size_t depth(std::string_view p) { return static_cast<size_t>(std::count(p.begin(), p.end(), '/')); }

std::string type_words(FileType t) {
  switch (t) {
    case FileType::Absent: return "absent";
    case FileType::Regular: return "a file";
    case FileType::Directory: return "a directory";
    case FileType::Symlink: return "a symlink";
    default: return "a " + std::string(file_type_name(t));
  }
}

bool same_metadata(const Fingerprint& now, const Snapshot& before, std::string* why) {
  if (now.type != before.type) {
    if (why) *why = "it is " + type_words(now.type) + " now, it was " + type_words(before.type);
    return false;
  }
  if (now.uid != before.uid || now.gid != before.gid || (now.type != FileType::Symlink && now.mode != before.mode) ||
      now.mtime != before.mtime) {
    if (why) *why = "its metadata differs";
    return false;
  }
  return true;
}

}  // namespace

bool same_state(const Fingerprint& a, const Fingerprint& b, std::string* why) {
  auto differ = [&](std::string w) {
    if (why) *why = std::move(w);
    return false;
  };
  if (a.type != b.type) return differ("it is " + type_words(a.type) + " now, it was " + type_words(b.type));
  if (a.type == FileType::Absent) return true;
  if (a.uid != b.uid || a.gid != b.gid) return differ("its owner changed");
  if (a.type != FileType::Symlink && a.mode != b.mode) return differ("its mode changed");
  switch (a.type) {
    case FileType::Regular:
      if (a.size != b.size) return differ("its size changed");
      if (!a.sha256.empty() && !b.sha256.empty()) return a.sha256 == b.sha256 || differ("its content changed");
      if (a.ino != b.ino || (a.dev && b.dev && a.dev != b.dev)) return differ("it is another file (inode)");
      if (a.mtime != b.mtime) return differ("its mtime changed");
      return true;
    case FileType::Symlink: return a.target == b.target || differ("its target changed");
    case FileType::Directory: return true;
    default: return (a.ino == b.ino && a.dev == b.dev) || differ("it is another file (inode)");
  }
}

namespace {

// One path's candidate from its records recs[lo..hi) (all of the path's
// records, sorted, so that what follows hi is known).
std::optional<Candidate> candidate_of(const std::string& path, const std::vector<const Snapshot*>& recs, size_t lo,
                                      size_t hi, const std::map<std::string, const Left*>& left_by_path,
                                      const Selection& sel) {
  auto selected = [&](const Snapshot& s) { return sel.commands.empty() || sel.commands.count(s.command) > 0; };
  std::vector<size_t> idx;
  for (size_t i = lo; i < hi; ++i)
    if (selected(*recs[i])) idx.push_back(i);
  if (idx.empty()) return std::nullopt;
  size_t first = idx.front(), last = idx.back();

  Candidate c;
  c.path = path;
  c.first_seq = recs[first]->seq;
  for (size_t i : idx)
    if (std::find(c.commands.begin(), c.commands.end(), recs[i]->command) == c.commands.end())
      c.commands.push_back(recs[i]->command);
  for (size_t i = first + 1; i < last && c.interleaved.empty(); ++i)
    if (!selected(*recs[i]))
      c.interleaved = "command " + std::to_string(recs[i]->command) + " changed it between the selected commands";

  c.previous = *recs[first];
  if (c.previous.type != FileType::Absent && op_metadata_only(c.previous.op)) {
    // Only metadata changed at first: the content is the one the next
    // content-changing record kept, if any (nothing changed it in between).
    const Snapshot* content = nullptr;
    for (size_t i = first + 1; i < recs.size() && !content; ++i)
      if (!op_metadata_only(recs[i]->op)) content = recs[i];
    if (content && content->type == c.previous.type) {
      c.previous.kept = content->kept;
      c.previous.object = content->object;
      c.previous.sha256 = content->sha256;
      c.previous.size = content->size;
      c.previous.target = content->target;
      if (content->kept == Kept::NotKept) c.cannot = content->reason;
    } else {
      c.metadata_only = true;
    }
  }
  if (c.previous.kept == Kept::NotKept && c.cannot.empty())
    c.cannot = c.previous.reason.empty() ? "its previous state was not kept" : c.previous.reason;

  if (last + 1 < recs.size()) {
    c.expected = fingerprint_of(*recs[last + 1]);
  } else if (auto it = left_by_path.find(path); it != left_by_path.end()) {
    c.expected = it->second->fp;
  } else if (recs[last]->op == Op::Unlink || recs[last]->op == Op::Rmdir) {
    // A session that ended without its end record (a crash): a delete
    // left nothing there...
    c.expected.known = true;
    c.expected.type = FileType::Absent;
  } else if (recs[last]->op == Op::Entries) {
    // ...and a directory whose entries changed is still that directory
    // (directories compare by type, mode and owner).
    c.expected = fingerprint_of(*recs[last]);
  }
  return c;
}

std::map<std::string, std::vector<const Snapshot*>> records_by_path(const std::vector<Snapshot>& records) {
  std::map<std::string, std::vector<const Snapshot*>> by_path;
  for (const Snapshot& s : records) by_path[s.path].push_back(&s);
  for (auto& [path, recs] : by_path)
    std::stable_sort(recs.begin(), recs.end(), [](const Snapshot* a, const Snapshot* b) { return a->seq < b->seq; });
  return by_path;
}

std::map<std::string, const Left*> left_by_path(const std::vector<Left>& left) {
  std::map<std::string, const Left*> m;
  for (const Left& l : left) m[l.path] = &l;  // the last one wins
  return m;
}

bool rename_selected(const Rename& r, const Selection& sel) {
  if (!sel.commands.empty() && !sel.commands.count(r.command)) return false;
  return !sel.matches || sel.matches(r.from) || sel.matches(r.to);
}

bool at_or_under(std::string_view p, std::string_view dir) {
  return p == dir || (p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 && p[dir.size()] == '/');
}
bool is_ancestor(std::string_view dir, std::string_view p) { return p != dir && at_or_under(p, dir); }

int64_t ns_of(const Timespec& t) { return t.sec * 1000000000 + t.nsec; }

// The rule for a state the session left that nobody recorded (see plan.h).
bool unchanged_since_end(const Fingerprint& f, const PlanOptions& o) {
  return o.session_end_ns > 0 && f.type != FileType::Absent && ns_of(f.mtime) <= o.session_end_ns;
}

Fingerprint absent_fp() {
  Fingerprint f;
  f.known = true;
  return f;
}

}  // namespace

std::string_view action_name(Action a) {
  switch (a) {
    case Action::Restore: return "restore";
    case Action::Remove: return "remove";
    case Action::MoveBack: return "move-back";
    case Action::Nothing: return "nothing";
    case Action::Conflict: return "conflict";
    case Action::Cannot: return "cannot";
    case Action::SkipCreated: return "skip-created";
  }
  return "?";
}

std::string_view undo_name(Undo u) {
  switch (u) {
    case Undo::Restore: return "restore";
    case Undo::MoveBack: return "move-back";
    case Undo::Created: return "created";
    case Undo::Cannot: return "cannot";
  }
  return "?";
}

std::vector<Candidate> select_changes(const std::vector<Snapshot>& records, const std::vector<Left>& left,
                                      const Selection& sel) {
  auto left_map = left_by_path(left);
  std::vector<Candidate> out;
  for (auto& [path, recs] : records_by_path(records)) {
    if (sel.matches && !sel.matches(path)) continue;
    if (auto c = candidate_of(path, recs, 0, recs.size(), left_map, sel)) out.push_back(std::move(*c));
  }
  return out;
}

std::vector<Candidate> select_changes(const History& h, const Selection& sel) {
  auto left_map = left_by_path(h.left);
  auto by_path = records_by_path(h.records);
  auto selected = [&](const Snapshot& s) { return sel.commands.empty() || sel.commands.count(s.command) > 0; };
  std::vector<const Rename*> moves;
  for (const Rename& r : h.renames)
    if (r.move_back && rename_selected(r, sel)) moves.push_back(&r);

  // A path a move back starts or ends at is undone in parts: what came
  // after the rename (undone before the move back), what came before
  // (undone after it).
  std::map<std::string, std::vector<uint64_t>> cuts;
  for (const Rename* r : moves) {
    cuts[r->to].push_back(r->seq);
    cuts[r->from].push_back(r->seq);
  }
  std::vector<Candidate> out;
  for (auto& [path, recs] : by_path) {
    if (sel.matches && !sel.matches(path)) continue;
    std::vector<uint64_t> at;
    if (auto it = cuts.find(path); it != cuts.end()) at = it->second;
    std::sort(at.begin(), at.end());
    size_t lo = 0;
    for (size_t k = 0; k <= at.size(); ++k) {
      size_t hi = lo;
      while (hi < recs.size() && (k == at.size() || recs[hi]->seq < at[k])) ++hi;
      if (auto c = candidate_of(path, recs, lo, hi, left_map, sel)) out.push_back(std::move(*c));
      lo = hi;
    }
  }

  for (const Rename* r : moves) {
    Candidate c;
    c.path = r->to;
    c.move_to = r->from;
    c.move_back = true;
    c.exchange = r->exchange;
    c.first_seq = r->seq;
    c.commands = {r->command};
    c.previous.seq = r->seq;
    c.previous.event = r->event;
    c.previous.command = r->command;
    c.previous.proc = r->proc;
    c.previous.path = r->to;
    c.previous.type = r->is_dir ? FileType::Directory : FileType::Regular;
    c.previous.kept = Kept::Metadata;
    // The state the session left at r->to right after the rename: the next
    // record there, or a later rename moving it on, or the session's end.
    const Snapshot* next = nullptr;
    if (auto it = by_path.find(r->to); it != by_path.end())
      for (const Snapshot* s : it->second)
        if (s->seq > r->seq) {
          next = s;
          break;
        }
    const Rename* away = nullptr;
    for (const Rename& o : h.renames)
      if (o.seq > r->seq && (o.from == r->to || (o.exchange && o.to == r->to))) {
        away = &o;
        break;
      }
    if (away && (!next || away->seq < next->seq)) {
      if (!away->move_back || !rename_selected(*away, sel))
        c.interleaved = "command " + std::to_string(away->command) + " renamed it on to " +
                        (away->from == r->to ? away->to : away->from);
      // Otherwise that move back comes first, and brings it here.
    } else if (next) {
      if (!selected(*next))
        c.interleaved = "command " + std::to_string(next->command) + " changed it after the rename";
      else
        c.expected = fingerprint_of(*next);
    } else if (auto it = left_map.find(r->to); it != left_map.end()) {
      c.expected = it->second->fp;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<ChangeLine> list_changes(const History& h) {
  // Commands in the order of their first change.
  std::vector<std::pair<uint64_t, uint64_t>> firsts;  // (seq, command)
  for (const Snapshot& s : h.records)
    if (s.op != Op::Entries) firsts.emplace_back(s.seq, s.command);
  for (const Rename& r : h.renames)
    if (r.move_back) firsts.emplace_back(r.seq, r.command);
  std::stable_sort(firsts.begin(), firsts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint64_t> commands;
  for (const auto& [seq, cmd] : firsts)
    if (std::find(commands.begin(), commands.end(), cmd) == commands.end()) commands.push_back(cmd);

  std::vector<ChangeLine> out;
  for (uint64_t cmd : commands) {
    Selection sel;
    sel.commands = {cmd};
    for (const Candidate& c : select_changes(h.records, h.left, sel)) {
      ChangeLine line;
      line.command = cmd;
      line.path = c.path;
      uint64_t last_seq = 0;
      Op last_op = Op::Entries;
      for (const Snapshot& s : h.records)
        if (s.command == cmd && s.path == c.path && s.op != Op::Entries) {
          line.ops.push_back(s.op);
          last_seq = s.seq;
          last_op = s.op;
        }
      if (line.ops.empty()) continue;  // only its times moved
      line.before = c.previous.type;
      if (line.before == FileType::Absent) {
        // Created by this command: gone again by the command's end?
        bool gone =
            c.expected.known ? c.expected.type == FileType::Absent : last_op == Op::Unlink || last_op == Op::Rmdir;
        for (const Rename& r : h.renames)
          if (r.command == cmd && r.from == c.path && r.seq > last_seq) gone = true;
        if (gone) continue;
      }
      if (!c.cannot.empty()) {
        line.undo = Undo::Cannot;
        line.reason = c.cannot;
      } else {
        line.undo = line.before == FileType::Absent ? Undo::Created : Undo::Restore;
        line.undoable = true;
      }
      out.push_back(std::move(line));
    }
    for (const Rename& r : h.renames) {
      if (r.command != cmd || !r.move_back) continue;
      ChangeLine line;
      line.command = cmd;
      line.path = r.from;
      line.target = r.to;
      line.before = r.is_dir ? FileType::Directory : FileType::Regular;
      line.undo = Undo::MoveBack;
      line.undoable = true;
      out.push_back(std::move(line));
    }
  }
  return out;
}

std::string_view op_word(Op o) {
  switch (o) {
    case Op::Create: return "created";
    case Op::Unlink:
    case Op::Rmdir: return "deleted";
    case Op::RenameOver:
    case Op::LinkOver: return "replaced";
    case Op::Truncate:
    case Op::OpenTrunc: return "truncated";
    case Op::WriteOpen:
    case Op::Fallocate: return "written";
    case Op::Chmod: return "mode";
    case Op::Chown: return "owner";
    case Op::Utimes: return "times";
    case Op::Xattr: return "xattrs";
    case Op::Entries: return "entries";
  }
  return "?";
}

std::vector<std::string> change_words(const ChangeLine& l) {
  if (l.undo == Undo::MoveBack) return {"renamed"};
  std::vector<std::string> words;
  for (Op o : l.ops) {
    std::string w(op_word(o));
    if (std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
  }
  return words;
}

std::string_view undo_words(Undo u) {
  switch (u) {
    case Undo::Restore: return "kept";
    case Undo::MoveBack: return "moves back";
    case Undo::Created: return "created";
    case Undo::Cannot: return "not kept";
  }
  return "?";
}

std::vector<ChangeLine> list_changes(const std::vector<Snapshot>& records) {
  History h;
  h.records = records;
  return list_changes(h);
}

Step decide(const Candidate& c, const Fingerprint& current, const PlanOptions& opt) {
  Step st;
  st.candidate = c;
  st.current = current;
  auto set = [&](Action a, std::string reason, bool forced = false) {
    st.action = a;
    st.reason = std::move(reason);
    st.forced = forced;
    return st;
  };
  if (!c.cannot.empty()) return set(Action::Cannot, c.cannot);

  std::string why;
  if (c.previous.type == FileType::Absent) {
    if (current.type == FileType::Absent) return set(Action::Nothing, "not there, as before the session");
    if (!opt.created) return set(Action::SkipCreated, "created by the session (--created removes it)");
    if (!c.interleaved.empty())
      return opt.force ? set(Action::Remove, c.interleaved + ": removed by --force", true)
                       : set(Action::Conflict, c.interleaved + " (--force removes it)");
    if (c.expected.known && same_state(current, c.expected, &why)) return set(Action::Remove, "created by the session");
    if (!c.expected.known && unchanged_since_end(current, opt))
      return set(Action::Remove, "created by the session, not changed since it ended");
    if (!c.expected.known) why = "the state the session left was not recorded";
    return opt.force ? set(Action::Remove, why + ": removed by --force", true)
                     : set(Action::Conflict, "changed after the session: " + why + " (--force removes it)");
  }

  if (c.metadata_only) {
    if (same_metadata(current, c.previous, &why)) return set(Action::Nothing, "already as before");
    if (current.type != c.previous.type)
      return set(Action::Conflict, why + "; only its metadata was kept, so --force cannot help");
  } else if (same_state(current, fingerprint_of(c.previous))) {
    return set(Action::Nothing, "already as before");
  }
  if (!c.interleaved.empty())
    return opt.force ? set(Action::Restore, c.interleaved + ": restored by --force", true)
                     : set(Action::Conflict, c.interleaved + " (--force restores it)");
  if (!c.expected.known) {
    if (unchanged_since_end(current, opt))
      return set(Action::Restore, "changed by the session, not changed since it ended");
    return opt.force ? set(Action::Restore, "the state the session left was not recorded: restored by --force", true)
                     : set(Action::Conflict, "the state the session left was not recorded (--force restores it)");
  }
  if (same_state(current, c.expected, &why))
    return set(Action::Restore, c.metadata_only ? "metadata changed by the session" : "changed by the session");
  return opt.force ? set(Action::Restore, "changed after the session (" + why + "): overwritten by --force", true)
                   : set(Action::Conflict, "changed after the session: " + why + " (--force overwrites it)");
}

namespace {

// A move back.  `first` is true when a step before it puts c.path in place;
// `blocked` says why such a step was refused; `dest_freed` is true when a
// step before it clears c.move_to.
Step decide_move(const Candidate& c, const Fingerprint& at, const Fingerprint& dest, const PlanOptions& opt, bool first,
                 const std::string& blocked, bool dest_freed) {
  Step st;
  st.candidate = c;
  st.current = at;
  st.current_dest = dest;
  st.after_earlier = first;
  auto set = [&](Action a, std::string reason, bool forced = false) {
    st.action = a;
    st.reason = std::move(reason);
    st.forced = forced;
    return st;
  };
  const std::string& to = c.move_to;
  bool dir = c.previous.type == FileType::Directory;
  if (!blocked.empty()) return set(Action::Conflict, blocked);
  if (!c.interleaved.empty() && !opt.force) return set(Action::Conflict, c.interleaved + " (--force moves it back)");
  bool forced = false;
  std::string why;
  if (!first) {
    if (at.type == FileType::Absent) {
      if (dest.type != FileType::Absent && !c.exchange) return set(Action::Nothing, "it is at " + to + " again");
      return set(Action::Conflict, "it is no longer at " + c.path);
    }
    // Moved back already (an earlier undo; what the rename replaced is back
    // here): what the session left here is at `to` again, and this is not it.
    if (!c.exchange && c.expected.known && c.interleaved.empty() && same_state(dest, c.expected) &&
        !same_state(at, c.expected))
      return set(Action::Nothing, "it is at " + to + " again");
    if ((at.type == FileType::Directory) != dir)
      return set(Action::Conflict,
                 "it is " + type_words(at.type) + " now; the session moved " + (dir ? "a directory" : "a file"));
    bool ok;
    if (!c.interleaved.empty()) {
      ok = false;
      why = c.interleaved;
    } else if (c.expected.known) {
      ok = same_state(at, c.expected, &why);
      if (!ok) why = "changed after the session: " + why;
    } else {
      ok = unchanged_since_end(at, opt);
      if (!ok) why = "the state the session left there was not recorded";
    }
    if (!ok && !opt.force) return set(Action::Conflict, why + " (--force moves it back as it is)");
    forced = !ok;
  }
  if (c.exchange) {
    if (dest.type == FileType::Absent) return set(Action::Conflict, to + " is gone: nothing to swap back");
  } else if (dest.type != FileType::Absent && !dest_freed) {
    if (dest.type == FileType::Directory) return set(Action::Conflict, "a directory is at " + to + " now");
    if (!opt.force) return set(Action::Conflict, "something is at " + to + " now (--force replaces it)");
    forced = true;
    why = why.empty() ? "replaces what is at " + to + " now" : why + "; replaces what is at " + to + " now";
  }
  if (forced) return set(Action::MoveBack, why + ": moved back by --force", true);
  return set(Action::MoveBack, "renamed by the session");
}

// The phase-1 order of path steps: directories to bring back (shallow
// first), other restores, removals (deepest first); the rest aside.
void append_ordered(std::vector<Step>& steps, std::vector<Step>& out, std::vector<Step>& rest) {
  std::vector<Step> dirs, files, removals;
  for (Step& s : steps) {
    if (s.action == Action::Restore && s.candidate.previous.type == FileType::Directory)
      dirs.push_back(std::move(s));
    else if (s.action == Action::Restore)
      files.push_back(std::move(s));
    else if (s.action == Action::Remove)
      removals.push_back(std::move(s));
    else
      rest.push_back(std::move(s));
  }
  auto by_depth = [](const Step& a, const Step& b) {
    size_t da = depth(a.candidate.path), db = depth(b.candidate.path);
    return da != db ? da < db : a.candidate.path < b.candidate.path;
  };
  std::stable_sort(dirs.begin(), dirs.end(), by_depth);
  std::stable_sort(removals.begin(), removals.end(), [&](const Step& a, const Step& b) { return by_depth(b, a); });
  for (auto* group : {&dirs, &files, &removals})
    for (Step& s : *group) out.push_back(std::move(s));
}

}  // namespace

std::vector<Step> plan(const std::vector<Candidate>& candidates, const std::vector<Fingerprint>& current,
                       const PlanOptions& options, const std::vector<Fingerprint>& current_dest) {
  auto now = [&](size_t i) { return i < current.size() ? current[i] : Fingerprint{}; };
  std::vector<size_t> moves;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].move_back) moves.push_back(i);
  std::sort(moves.begin(), moves.end(),
            [&](size_t a, size_t b) { return candidates[a].first_seq > candidates[b].first_seq; });

  // What changed at or below a rename's ends, or in a directory above its
  // source, after the rename: undone before the moves back.
  auto after_a_move = [&](const Candidate& c) {
    for (size_t m : moves) {
      const Candidate& M = candidates[m];
      if (c.first_seq <= M.first_seq) continue;
      if (at_or_under(c.path, M.path) || at_or_under(c.path, M.move_to) || is_ancestor(c.path, M.move_to) ||
          (M.exchange && is_ancestor(c.path, M.path)))
        return true;
    }
    return false;
  };
  std::vector<Step> early;
  std::vector<size_t> late;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].move_back) continue;
    if (after_a_move(candidates[i]))
      early.push_back(decide(candidates[i], now(i), options));
    else
      late.push_back(i);
  }

  std::vector<Step> moved;
  std::set<std::string> freed, placed;
  for (size_t m : moves) {
    const Candidate& M = candidates[m];
    bool first = placed.count(M.path) > 0;
    std::string blocked;
    bool dest_freed = freed.count(M.move_to) > 0;
    for (const Step& e : early) {
      if (e.candidate.path == M.path) {
        if (e.action == Action::Restore) first = true;
        if (e.action == Action::Conflict || e.action == Action::Cannot)
          blocked = "its later change is not undone first (" + e.reason + ")";
      }
      if (e.candidate.path == M.move_to && e.action == Action::Remove) dest_freed = true;
    }
    Step s = decide_move(M, now(m), m < current_dest.size() ? current_dest[m] : Fingerprint{}, options, first, blocked,
                         dest_freed);
    if (s.action == Action::MoveBack) {
      if (!M.exchange) freed.insert(M.path);
      placed.insert(M.move_to);
    }
    moved.push_back(std::move(s));
  }

  // What came before a rename: undone after its move back, which changed
  // what is at its ends.
  std::vector<Step> after;
  for (size_t i : late) {
    Candidate c = candidates[i];
    Fingerprint cur = now(i);
    const Step* move = nullptr;  // the first rename after this part of the path's history
    for (const Step& s : moved) {
      const Candidate& M = s.candidate;
      if ((c.path == M.path || c.path == M.move_to) && M.first_seq > c.first_seq &&
          (!move || M.first_seq < move->candidate.first_seq))
        move = &s;
    }
    bool simulated = false;
    if (move && move->action != Action::MoveBack) {
      Step refused = decide(c, cur, options);
      if (refused.action == Action::Restore || refused.action == Action::Remove) {
        refused.action = Action::Conflict;
        refused.forced = false;
        refused.reason = "the rename " + move->candidate.move_to + " -> " + move->candidate.path + " is not undone (" +
                         move->reason + ")";
      }
      after.push_back(std::move(refused));
      continue;
    }
    if (move && !move->candidate.exchange) {
      simulated = true;
      if (c.path == move->candidate.path) {
        cur = absent_fp();  // moved back away from here
      } else {
        cur = move->current;  // what the move back brings here
        for (const Step& e : early)
          if (e.candidate.path == move->candidate.path && e.action == Action::Restore)
            cur = fingerprint_of(e.candidate.previous);
      }
      c.expected = cur;
      c.interleaved.clear();
    }
    Step s = decide(c, cur, options);
    s.after_earlier = simulated;
    after.push_back(std::move(s));
  }

  std::vector<Step> out, rest;
  append_ordered(early, out, rest);
  for (Step& s : moved) (s.action == Action::MoveBack ? out : rest).push_back(std::move(s));
  append_ordered(after, out, rest);
  for (Step& s : rest) out.push_back(std::move(s));
  return out;
}

}  // namespace cb::keep
