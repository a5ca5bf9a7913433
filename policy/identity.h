// Process identity: which trusted program a process is.
//
// A process's identity is the executable the kernel itself opened at exec
// (the file behind /proc/PID/exe), checked by device, inode and change time
// against the files the policy names, each stat()ed once when the policy
// loads.  Nothing the process controls enters into it: not its command name
// (prctl, /proc/self/comm), not argv[0] (exec -a), not the name of a copy, a
// link or a rename of some other binary, not a script's name (its executable
// is the interpreter), not a memfd (no file of the policy's).  A trusted file
// changed in place after the load has a new change time and confers nothing.
// A process started with loader-injection variables in its environment
// (LD_PRELOAD, LD_LIBRARY_PATH, ...), or whose executable is the dynamic
// loader itself, runs code that is not the trusted file's: it has no identity.
//
// The policy names trusted files in `identities:` (name -> paths, `*` allowed
// in the last component) or, for a name used in a rule but not declared
// there, by looking the name up in the system's directories (kSystemPath),
// never in the user's PATH.  The table is data; matching is pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

// What names one file on one file system, as it was when it was stat()ed.
struct FileId {
  uint64_t dev = 0;
  uint64_t ino = 0;
  int64_t ctime_sec = 0;
  int64_t ctime_nsec = 0;
  bool operator==(const FileId&) const = default;
};

struct IdentityFile {
  std::string name;  // the identity it confers ("git")
  std::string path;  // its real path when the policy loaded
  FileId id;
  uint32_t uid = 0;       // owner, and whether someone other than root can
  bool writable = false;  // change it or its directories: for `check`
};

struct Identities {
  std::vector<IdentityFile> files;
  // Names a rule uses for which no file was found: no process has them.
  std::vector<std::string> unresolved;
  // Names the file confers, in policy order (usually one).
  std::vector<std::string> names_of(const FileId& id) const;
};

// Where an undeclared name is looked up.
inline constexpr std::string_view kSystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Environment variables that make the dynamic loader run code other than
// the executable's.
inline constexpr std::string_view kInjectionVars[] = {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH"};

// What the supervisor learnt about one process image.
struct ExeFacts {
  bool known = false;  // the executable could be stat()ed
  FileId id;
  std::string exe;      // its path (for the loader check)
  std::string environ;  // NUL-separated, as /proc/PID/environ gives it
};

// The first injection variable set (non-empty) in a NUL-separated
// environment, or empty.
std::string injection_var(std::string_view environ);
// Is this executable the dynamic loader (ld-linux-*.so*, ld.so, ld-musl-*)?
bool is_dynamic_loader(std::string_view exe);

// The identities a process image has: empty when it is unknown, tainted or
// no policy file matches.
std::vector<std::string> identify(const Identities& ids, const ExeFacts& facts);

// I/O: stat()s `paths` (globs with '*' or '?' in the last component are
// listed) for `name`; appends what it finds.  Returns the number found.
size_t resolve_identity_paths(Identities& ids, const std::string& name, const std::vector<std::string>& paths);
// I/O: looks `name` up in kSystemPath.
size_t resolve_identity_name(Identities& ids, const std::string& name);

}  // namespace cb
