#include "keep/plan.h"

#include <algorithm>
#include <map>

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

std::string_view action_name(Action a) {
  switch (a) {
    case Action::Restore: return "restore";
    case Action::Remove: return "remove";
    case Action::Nothing: return "nothing";
    case Action::Conflict: return "conflict";
    case Action::Cannot: return "cannot";
    case Action::SkipCreated: return "skip-created";
  }
  return "?";
}

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

std::vector<Candidate> select_changes(const std::vector<Snapshot>& records, const std::vector<Left>& left,
                                      const Selection& sel) {
  std::map<std::string, std::vector<const Snapshot*>> by_path;
  for (const Snapshot& s : records) by_path[s.path].push_back(&s);
  std::map<std::string, const Left*> left_by_path;
  for (const Left& l : left) left_by_path[l.path] = &l;  // the last one wins
  auto selected = [&](const Snapshot& s) { return sel.commands.empty() || sel.commands.count(s.command) > 0; };

  std::vector<Candidate> out;
  for (auto& [path, recs] : by_path) {
    if (sel.matches && !sel.matches(path)) continue;
    std::sort(recs.begin(), recs.end(), [](const Snapshot* a, const Snapshot* b) { return a->seq < b->seq; });
    std::vector<size_t> idx;
    for (size_t i = 0; i < recs.size(); ++i)
      if (selected(*recs[i])) idx.push_back(i);
    if (idx.empty()) continue;
    size_t first = idx.front(), last = idx.back();

    Candidate c;
    c.path = path;
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
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<ChangeLine> list_changes(const std::vector<Snapshot>& records) {
  std::vector<uint64_t> commands;
  for (const Snapshot& s : records)
    if (s.op != Op::Entries && std::find(commands.begin(), commands.end(), s.command) == commands.end())
      commands.push_back(s.command);
  std::vector<ChangeLine> out;
  for (uint64_t cmd : commands) {
    Selection sel;
    sel.commands = {cmd};
    for (const Candidate& c : select_changes(records, {}, sel)) {
      ChangeLine line;
      line.command = cmd;
      line.path = c.path;
      for (const Snapshot& s : records)
        if (s.command == cmd && s.path == c.path && s.op != Op::Entries) line.ops.push_back(s.op);
      if (line.ops.empty()) continue;  // only its times moved
      line.before = c.previous.type;
      line.undoable = c.cannot.empty();
      line.reason = c.cannot;
      out.push_back(std::move(line));
    }
  }
  return out;
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
                       : set(Action::Conflict, c.interleaved);
    if (c.expected.known && same_state(current, c.expected, &why)) return set(Action::Remove, "created by the session");
    if (!c.expected.known) why = "the state the session left was not recorded";
    return opt.force ? set(Action::Remove, why + ": removed by --force", true)
                     : set(Action::Conflict, "changed after the session: " + why);
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
                     : set(Action::Conflict, c.interleaved);
  if (!c.expected.known)
    return opt.force ? set(Action::Restore, "the state the session left was not recorded: restored by --force", true)
                     : set(Action::Conflict, "the state the session left was not recorded (--force restores it)");
  if (same_state(current, c.expected, &why))
    return set(Action::Restore, c.metadata_only ? "metadata changed by the session" : "changed by the session");
  return opt.force ? set(Action::Restore, "changed after the session (" + why + "): overwritten by --force", true)
                   : set(Action::Conflict, "changed after the session: " + why);
}

std::vector<Step> plan(const std::vector<Candidate>& candidates, const std::vector<Fingerprint>& current,
                       const PlanOptions& options) {
  std::vector<Step> dirs, files, removals, rest;
  for (size_t i = 0; i < candidates.size(); ++i) {
    Step s = decide(candidates[i], i < current.size() ? current[i] : Fingerprint{}, options);
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
  std::sort(dirs.begin(), dirs.end(), by_depth);
  std::sort(removals.begin(), removals.end(), [&](const Step& a, const Step& b) { return by_depth(b, a); });
  std::vector<Step> out;
  for (auto* group : {&dirs, &files, &removals, &rest})
    for (Step& s : *group) out.push_back(std::move(s));
  return out;
}

}  // namespace cb::keep
