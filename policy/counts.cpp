#include "policy/counts.h"

namespace cb {
namespace {

Event as_delete(const Event& ev, const std::string& path, bool is_dir) {
  Event d = ev;
  d.action = Action::FileDelete;
  d.path = path;
  d.target.clear();
  d.aliases.clear();
  d.is_dir = is_dir;
  return d;
}

bool protective(Decision d) { return d == Decision::Ask || d == Decision::Deny; }

}  // namespace

bool guarded_delete(const Policy& p, const Event& ev, const std::string& path, bool is_dir) {
  Event d = as_delete(ev, path, is_dir);
  d.proc_deletes = d.tree_deletes = d.session_deletes = kManyDeletes;
  return protective(decide(p, d).decision);
}

std::optional<Event> prepared_delete(const Policy& p, const Event& rename) {
  if (rename.action != Action::FileRename || rename.target.empty()) return std::nullopt;
  if (!guarded_delete(p, rename, rename.path, rename.is_dir)) return std::nullopt;
  if (guarded_delete(p, rename, rename.target, rename.is_dir)) return std::nullopt;
  Event d = as_delete(rename, rename.path, rename.is_dir);
  if (rename.is_dir) {
    d.proc_deletes = d.tree_deletes = d.session_deletes = kManyDeletes;
  } else {
    d.proc_deletes = rename.proc_deletes + 1;
    d.tree_deletes = rename.tree_deletes + 1;
    d.session_deletes = rename.session_deletes + 1;
  }
  return d;
}

}  // namespace cb
