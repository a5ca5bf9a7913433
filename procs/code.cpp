#include "procs/code.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <cstdlib>

#include "procs/procs.h"

namespace cb {
namespace {

std::string_view next_token(std::string_view& s) {
  size_t b = s.find_first_not_of(' ');
  if (b == std::string_view::npos) {
    s = {};
    return {};
  }
  s.remove_prefix(b);
  size_t e = s.find(' ');
  std::string_view t = s.substr(0, e);
  s.remove_prefix(e == std::string_view::npos ? s.size() : e);
  return t;
}

bool is_hex(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

std::vector<CodeMapping> executable_mappings(std::string_view smaps) {
  std::vector<CodeMapping> out;
  bool in_exec = false;
  while (!smaps.empty()) {
    size_t nl = smaps.find('\n');
    std::string_view line = smaps.substr(0, nl);
    smaps.remove_prefix(nl == std::string_view::npos ? smaps.size() : nl + 1);
    std::string_view rest = line;
    std::string_view range = next_token(rest);
    size_t dash = range.find('-');
    if (dash != std::string_view::npos && is_hex(range.substr(0, dash)) && is_hex(range.substr(dash + 1))) {
      // A mapping's header: range perms offset dev inode [path]
      std::string_view perms = next_token(rest);
      next_token(rest);  // offset
      std::string_view dev = next_token(rest);
      std::string_view inode = next_token(rest);
      in_exec = perms.size() == 4 && perms[2] == 'x';
      if (!in_exec) continue;
      CodeMapping m;
      size_t colon = dev.find(':');
      if (colon != std::string_view::npos) {
        m.dev_major = static_cast<uint32_t>(strtoul(std::string(dev.substr(0, colon)).c_str(), nullptr, 16));
        m.dev_minor = static_cast<uint32_t>(strtoul(std::string(dev.substr(colon + 1)).c_str(), nullptr, 16));
      }
      m.inode = strtoull(std::string(inode).c_str(), nullptr, 10);
      size_t p = rest.find_first_not_of(' ');
      if (p != std::string_view::npos) m.path = std::string(rest.substr(p));
      out.push_back(std::move(m));
      continue;
    }
    // Not Private_Dirty: a file just written (page cache not yet flushed)
    // shows dirty pages without anyone changing the mapping.
    if (in_exec && line.starts_with("Anonymous:")) {
      std::string_view v = line.substr(10);
      out.back().anonymous_kb = strtoull(std::string(next_token(v)).c_str(), nullptr, 10);
    }
  }
  return out;
}

std::string foreign_code(const CodeMapping& m, const MappedFile& file, int64_t since_ns) {
  if (m.path.empty()) return "code in anonymous memory";
  if (m.path.front() == '[') {
    if (m.path == "[vdso]" || m.path == "[vsyscall]") return "";
    return "code in " + m.path;
  }
  if (m.anonymous_kb > 0 && !m.path.empty()) return "the code of " + m.path + " was changed in memory";
  if (m.path.ends_with(" (deleted)")) return "code from a file no longer there: " + m.path;
  if (!file.exists) return "code from a file it cannot show: " + m.path;
  // Another inode on the same device: replaced.  (A stacking file system
  // such as overlayfs shows the mapping's underlying device, not its own:
  // there the change time below is the test.)
  if (file.dev_major == m.dev_major && file.dev_minor == m.dev_minor && file.inode != m.inode)
    return "code from a file since replaced: " + m.path;
  if (since_ns > 0 && file.ctime_ns >= since_ns) return "code from a file made or changed in this session: " + m.path;
  // A library another user can change could have been planted before the
  // session.  (The executable itself is the identity's, checked apart.)
  if (!file.is_exe && (file.uid != 0 || (file.mode & 022)))
    return "code from a file someone other than root can change: " + m.path;
  return "";
}

std::string foreign_code_of(pid_t pid, int64_t since_ns) {
  char exe_link[64];
  snprintf(exe_link, sizeof exe_link, "/proc/%d/exe", pid);
  struct stat exe {};
  bool have_exe = stat(exe_link, &exe) == 0;
  std::string smaps = read_proc_file(pid, "smaps", 4 << 20);
  // Every live process has code: none readable is no proof of anything.
  if (smaps.empty()) return "its memory map cannot be read";
  char root[64];
  snprintf(root, sizeof root, "/proc/%d/root", pid);
  for (const CodeMapping& m : executable_mappings(smaps)) {
    MappedFile f;
    if (!m.path.empty() && m.path.front() == '/') {
      struct stat st {};
      if (stat((root + m.path).c_str(), &st) == 0) {
        f.exists = true;
        f.dev_major = major(st.st_dev);
        f.dev_minor = minor(st.st_dev);
        f.inode = st.st_ino;
        f.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
        f.uid = st.st_uid;
        f.mode = st.st_mode;
        f.is_exe = have_exe && st.st_dev == exe.st_dev && st.st_ino == exe.st_ino;
      }
    }
    if (std::string why = foreign_code(m, f, since_ns); !why.empty()) return why;
  }
  return "";
}

}  // namespace cb
