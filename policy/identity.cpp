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

std::vector<std::string> identify(const Identities& ids, const ExeFacts& facts) {
  if (!facts.known || ids.files.empty()) return {};
  if (is_dynamic_loader(facts.exe)) return {};
  if (!injection_var(facts.environ).empty()) return {};
  return ids.names_of(facts.id);
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
