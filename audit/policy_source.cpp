#include "audit/policy_source.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace cb::audit {
namespace {

std::string home_dir() {
  if (const char* h = getenv("HOME"); h && *h) return h;
  if (passwd* pw = getpwuid(getuid())) return pw->pw_dir;
  return "/";
}

std::string user_name() {
  if (passwd* pw = getpwuid(getuid())) return pw->pw_name;
  return std::to_string(getuid());
}

Error diagnostics(const std::vector<Diagnostic>& errors) {
  std::string msg;
  for (const auto& d : errors) msg += (msg.empty() ? "" : "\n") + format_diagnostic(d);
  return Error{EINVAL, msg.empty() ? "the policy does not load" : msg};
}

Result<Policy> finish(LoadResult r, const SelfProtection& sp) {
  if (!r.policy) return diagnostics(r.errors);
  add_self_protection(*r.policy, sp);
  return std::move(*r.policy);
}

}  // namespace

std::map<std::string, std::string> default_vars(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> v;
  char cwd[PATH_MAX];
  v["CWD"] = getcwd(cwd, sizeof cwd) ? cwd : "/";
  v["HOME"] = home_dir();
  v["USER"] = user_name();
  for (const auto& [k, x] : extra) v[k] = x;
  return v;
}

SelfProtection session_protection(const std::string& db_path, const std::vector<std::string>& policy_files) {
  SelfProtection sp;
  std::string db = db_path;
  char cwd[PATH_MAX];
  if (!db.empty() && db[0] != '/' && getcwd(cwd, sizeof cwd)) db = std::string(cwd) + "/" + db;
  sp.add_trail(db);
  for (const auto& f : policy_files) sp.protected_files.push_back(f);
  if (const char* rt = getenv("XDG_RUNTIME_DIR"); rt && *rt)
    sp.protected_dirs.push_back(std::string(rt) + "/cottonbox");
  return sp;
}

SelfProtection snapshot_protection(const PolicySnapshot& snap, const std::vector<std::string>& policy_files) {
  SelfProtection sp;
  for (const auto& f : snap.protected_files) {
    bool was_policy = std::any_of(snap.files.begin(), snap.files.end(), [&](const auto& nt) { return nt.first == f; });
    if (was_policy) continue;
    sp.protected_files.push_back(f);
    sp.trail_files.push_back(f);  // the database and its companions
  }
  for (const auto& f : policy_files) sp.protected_files.push_back(f);
  sp.protected_dirs = snap.protected_dirs;
  return sp;
}

Result<Policy> compile_snapshot(const PolicySnapshot& snap, const std::string& expected_hash) {
  LoadOptions lo;
  lo.vars = snap.vars;
  LoadResult r = load_policy_text(snap.files, lo);
  if (!r.policy) return diagnostics(r.errors);
  if (!expected_hash.empty() && r.policy->hash != expected_hash)
    return Error{0,
                 "the recorded policy texts load to sha256 " + r.policy->hash + ", not the session's " + expected_hash};
  SelfProtection sp = snapshot_protection(snap, {});
  for (const auto& [name, text] : snap.files) sp.protected_files.push_back(name);
  add_self_protection(*r.policy, sp);
  return std::move(*r.policy);
}

Result<Policy> compile_files(const std::vector<std::string>& files, const std::map<std::string, std::string>& vars,
                             const std::string& db_path, const PolicySnapshot* protection) {
  std::vector<std::string> abs;
  char cwd[PATH_MAX];
  std::string here = getcwd(cwd, sizeof cwd) ? cwd : "";
  for (const auto& f : files) abs.push_back(f.empty() || f[0] == '/' ? f : here + "/" + f);
  LoadOptions lo;
  lo.vars = vars;
  SelfProtection sp = protection ? snapshot_protection(*protection, abs) : session_protection(db_path, abs);
  return finish(load_policy_files(abs, lo), sp);
}

Result<Policy> compile_texts(const std::vector<std::pair<std::string, std::string>>& texts,
                             const std::map<std::string, std::string>& vars, const std::string& db_path,
                             const PolicySnapshot* protection) {
  LoadOptions lo;
  lo.vars = vars;
  std::vector<std::string> names;
  for (const auto& [n, t] : texts) names.push_back(n);
  SelfProtection sp = protection ? snapshot_protection(*protection, names) : session_protection(db_path, names);
  return finish(load_policy_text(texts, lo), sp);
}

}  // namespace cb::audit
