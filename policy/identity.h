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
#include <optional>
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

// How a process image came by its identities, or why it has none.  The
// audit trail keeps it with the image, so that `why` can say it and
// `replay` can judge the image again under a policy that trusts other files.
enum class IdentityCheck : uint8_t {
  Unknown,       // its file could not be read, or nobody looked (a trail from before)
  Trusted,       // its file is one the policy trusts, and its code is that file's
  NotTrusted,    // a clean start, but its file is none the policy trusts (its code was not checked)
  Disqualified,  // it runs code that is not its file's: no policy gives it one
  NotChecked,    // there was no policy to look its file up in
};
std::string_view identity_check_name(IdentityCheck c);  // "trusted", "not-trusted", ...
std::optional<IdentityCheck> parse_identity_check(std::string_view name);

struct IdentityFacts {
  IdentityCheck check = IdentityCheck::Unknown;
  FileId exe;       // the file the kernel ran, as it was identified (zero: not read)
  std::string why;  // why it has no identity ("" when it has one, or nobody looked)
  bool operator==(const IdentityFacts&) const = default;
};

// The identities a process image has: empty when it is unknown, tainted or
// no policy file matches.  `out` (optional) gets how that was found.
std::vector<std::string> identify(const Identities& ids, const ExeFacts& facts, IdentityFacts* out = nullptr);

// The identities another policy's table gives an image recorded with
// `names` and `facts` (what identify() found under the policy it ran
// with).  Exact for a Trusted or Disqualified image; `doubt` (when not
// null) says why it may not be for the others ("" when it is exact).
std::vector<std::string> identities_under(const Identities& ids, const std::vector<std::string>& names,
                                          const IdentityFacts& facts, std::string* doubt);

// I/O: the name a rule's `process:` could give the file `exe` (a path, as
// the image recorded it) when the policy does not name it yet: its base
// name, when looking that up in kSystemPath finds this very file (device,
// inode and change time `id`).  "" when no name would mean this file.
std::string system_name_of(const std::string& exe, const FileId& id);

// I/O: stat()s `paths` (globs with '*' or '?' in the last component are
// listed) for `name`; appends what it finds.  Returns the number found.
size_t resolve_identity_paths(Identities& ids, const std::string& name, const std::vector<std::string>& paths);
// I/O: looks `name` up in kSystemPath.
size_t resolve_identity_name(Identities& ids, const std::string& name);

}  // namespace cb
