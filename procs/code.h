// What code a process runs: its executable mappings.  A trusted program's
// identity (policy/identity.h) holds only while the code in its memory is
// the files it was started from: a library the session slipped in (by
// LD_PRELOAD whose trace was then scrubbed from /proc/PID/environ, by a
// library path, by a file planted or changed during the session), code in
// anonymous memory, or a file's code patched in memory (copied-on-write, so
// anonymous pages inside an executable file mapping) takes it away.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct CodeMapping {
  std::string path;  // "" anonymous; "[vdso]" and the like for the kernel's
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;
  uint64_t inode = 0;
  uint64_t anonymous_kb = 0;  // pages copied on write: changed in memory
};

// The executable mappings of a /proc/PID/smaps text.
std::vector<CodeMapping> executable_mappings(std::string_view smaps);

// What one mapping's file is now, as stat() sees it through the process's
// root; `exists` false when it cannot be stat()ed.
struct MappedFile {
  bool exists = false;
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;
  uint64_t inode = 0;
  int64_t ctime_ns = 0;
  uint32_t uid = 0;
  uint32_t mode = 0;
  bool is_exe = false;  // the process's executable: its identity is checked already
};

// Why the mapping is not code of a file that was there, unchanged, before
// `since_ns`, that only root can change ("" when it is); `file` is its
// path's file now.
std::string foreign_code(const CodeMapping& m, const MappedFile& file, int64_t since_ns);

// I/O: the first reason any of the process's code is foreign ("" when none
// is, or when its mappings cannot be read: the process is gone).
std::string foreign_code_of(pid_t pid, int64_t since_ns);

}  // namespace cb
