#include "policy/identity.h"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace cb {
namespace {

FileId file_id(const struct stat& st) {
  return FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                static_cast<int64_t>(st.st_ctim.tv_sec), static_cast<int64_t>(st.st_ctim.tv_nsec)};
}

// Can someone other than root change `path` or replace it (through a
// directory on the way to it)?
bool writable_by_others(const std::string& path, const struct stat& st) {
  if (st.st_uid != 0 || (st.st_mode & 022)) return true;
  std::string dir = path;
  while (dir.size() > 1) {
    size_t slash = dir.rfind('/');
    dir.resize(slash == 0 ? 1 : slash);
    struct stat d;
    if (stat(dir.c_str(), &d) != 0) return true;
    if (d.st_uid != 0) return true;
    // A sticky directory lets others add names, not replace root's.
    if ((d.st_mode & 022) && !(d.st_mode & S_ISVTX)) return true;
  }
  return false;
}

bool add_file(Identities& ids, const std::string& name, const std::string& path) {
  char real[PATH_MAX];
  if (!realpath(path.c_str(), real)) return false;
  struct stat st;
  if (stat(real, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111)) return false;
  if (is_dynamic_loader(real)) return false;  // it runs whatever it is given
  FileId id = file_id(st);
  for (const auto& f : ids.files)
    if (f.name == name && f.id == id) return true;
  ids.files.push_back(IdentityFile{name, real, id, st.st_uid, writable_by_others(real, st)});
  return true;
}

}  // namespace

std::vector<std::string> Identities::names_of(const FileId& id) const {
  std::vector<std::string> out;
  for (const auto& f : files)
    if (f.id == id && std::find(out.begin(), out.end(), f.name) == out.end()) out.push_back(f.name);
  return out;
}

std::string injection_var(std::string_view environ) {
  size_t i = 0;
  while (i < environ.size()) {
    size_t end = environ.find('\0', i);
    if (end == std::string_view::npos) end = environ.size();
    std::string_view kv = environ.substr(i, end - i);
    size_t eq = kv.find('=');
    if (eq != std::string_view::npos && eq + 1 < kv.size()) {
      std::string_view k = kv.substr(0, eq);
      for (auto v : kInjectionVars)
        if (k == v) return std::string(k);
    }
    i = end + 1;
  }
  return {};
}

bool is_dynamic_loader(std::string_view exe) {
  size_t slash = exe.rfind('/');
  std::string_view base = slash == std::string_view::npos ? exe : exe.substr(slash + 1);
  return base.starts_with("ld-linux") || base.starts_with("ld.so") || base.starts_with("ld-musl") ||
         base.starts_with("ld64.so");
}

std::string_view identity_check_name(IdentityCheck c) {
  switch (c) {
    case IdentityCheck::Unknown: return "unknown";
    case IdentityCheck::Trusted: return "trusted";
    case IdentityCheck::NotTrusted: return "not-trusted";
    case IdentityCheck::Disqualified: return "disqualified";
    case IdentityCheck::NotChecked: return "not-checked";
  }
  return "unknown";
}

std::optional<IdentityCheck> parse_identity_check(std::string_view name) {
  for (auto c : {IdentityCheck::Unknown, IdentityCheck::Trusted, IdentityCheck::NotTrusted, IdentityCheck::Disqualified,
                 IdentityCheck::NotChecked})
    if (identity_check_name(c) == name) return c;
  return std::nullopt;
}

std::vector<std::string> identify(const Identities& ids, const ExeFacts& facts, IdentityFacts* out) {
  IdentityFacts f;
  std::vector<std::string> names;
  // The disqualifications come first and whatever the table holds, so that
  // the trail can tell a clean image another policy could trust.
  if (!facts.known) {
    f = {IdentityCheck::Unknown, {}, "its executable could not be read (had the process ended?)"};
  } else if (is_dynamic_loader(facts.exe)) {
    f = {IdentityCheck::Disqualified, facts.id,
         facts.exe + " is the dynamic loader: it runs whatever file it is given"};
  } else if (std::string var = injection_var(facts.environ); !var.empty()) {
    f = {IdentityCheck::Disqualified, facts.id,
         "it was started with " + var + " set: the dynamic loader runs code that is not its file's"};
  } else {
    names = ids.names_of(facts.id);
    if (!names.empty())
      f = {IdentityCheck::Trusted, facts.id, ""};
    else
      f = {IdentityCheck::NotTrusted, facts.id,
           facts.exe + (ids.files.empty() ? " is no file the policy trusts (it trusts none)"
                                          : " is no file the policy trusts")};
  }
  if (out) *out = std::move(f);
  return names;
}

std::vector<std::string> identities_under(const Identities& ids, const std::vector<std::string>& names,
                                          const IdentityFacts& facts, std::string* doubt) {
  std::string why;
  std::vector<std::string> out;
  switch (facts.check) {
    case IdentityCheck::Trusted:
      out = ids.names_of(facts.exe);
      // A name both policies trust that no longer finds this file: the
      // file was replaced or changed since the session (an upgrade).
      for (const auto& n : names) {
        if (std::find(out.begin(), out.end(), n) != out.end()) continue;
        for (const auto& f : ids.files)
          if (f.name == n) {
            why = "it was " + n + " when it ran, and " + n + "'s files have changed since (an upgrade?)";
            break;
          }
        if (!why.empty()) break;
      }
      break;
    case IdentityCheck::NotTrusted:
      out = ids.names_of(facts.exe);
      if (!out.empty())
        why =
            "its code was not checked when it ran (it had no identity then): the identity this policy gives it "
            "holds only if its code was its file's";
      break;
    case IdentityCheck::Disqualified: break;
    case IdentityCheck::Unknown:
    case IdentityCheck::NotChecked:
      if (!ids.files.empty()) why = "its executable was not identified when it ran: it is judged as having no identity";
      break;
  }
  if (doubt) *doubt = std::move(why);
  return out;
}

std::string system_name_of(const std::string& exe, const FileId& id) {
  if (exe.empty() || exe.front() != '/' || id == FileId{}) return {};
  std::string base = exe.substr(exe.rfind('/') + 1);
  if (base.empty()) return {};
  std::string_view dirs = kSystemPath;
  while (!dirs.empty()) {
    size_t colon = dirs.find(':');
    std::string candidate = std::string(dirs.substr(0, colon)) + "/" + base;
    dirs = colon == std::string_view::npos ? std::string_view{} : dirs.substr(colon + 1);
    // resolve_identity_name() takes every file of the name there.
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) && file_id(st) == id)
      return is_dynamic_loader(candidate) ? std::string{} : base;
  }
  return {};
}

size_t resolve_identity_paths(Identities& ids, const std::string& name, const std::vector<std::string>& paths) {
  size_t found = 0;
  for (const auto& p : paths) {
    size_t slash = p.rfind('/');
    std::string base = p.substr(slash + 1);
    if (base.find_first_of("*?[") == std::string::npos) {
      found += add_file(ids, name, p);
      continue;
    }
    std::string dir = slash == 0 ? "/" : p.substr(0, slash);
    DIR* d = opendir(dir.c_str());
    if (!d) continue;
    std::vector<std::string> names;
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.' && fnmatch(base.c_str(), e->d_name, 0) == 0) names.emplace_back(e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) found += add_file(ids, name, (dir == "/" ? "" : dir) + "/" + n);
  }
  return found;
}

size_t resolve_identity_name(Identities& ids, const std::string& name) {
  std::string_view path = kSystemPath;
  size_t found = 0;
  while (!path.empty()) {
    size_t colon = path.find(':');
    std::string dir(path.substr(0, colon));
    path = colon == std::string_view::npos ? std::string_view() : path.substr(colon + 1);
    found += add_file(ids, name, dir + "/" + name);
  }
  return found;
}

}  // namespace cb
