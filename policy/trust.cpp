#include "policy/trust.h"

#include <algorithm>

namespace cb {

std::vector<std::string> trust_warnings(const Policy& p) {
  std::vector<std::string> out;
  struct Forgeable {
    const char* field;
    const char* why;
  };
  static constexpr Forgeable kForgeable[] = {
      {"proc.comm", "the command name, which a process sets itself (prctl, /proc/self/comm, a file's name)"},
      {"proc.exe", "the executable's path, which a copy of any program at a matching path has"},
      {"proc.argv", "the command line, which the caller chooses (exec -a)"},
  };
  for (const auto& r : p.rules) {
    if (r.builtin() || !r.when || (r.decision != Decision::Allow && r.decision != Decision::Log)) continue;
    auto fields = expr_fields(*r.when);
    for (const auto& f : kForgeable)
      if (std::find(fields.begin(), fields.end(), f.field) != fields.end()) {
        std::string where = r.loc.line > 0 ? r.loc.file + ":" + std::to_string(r.loc.line) + ": " : "";
        out.push_back(where + "rule '" + r.id + "' " + decision_name(r.decision).data() + "s by " + f.field + ", " +
                      f.why + ": a session can acquire this exception (use process: or proc.name, an identity)");
      }
  }
  for (const auto& f : p.identities.files)
    if (f.writable)
      out.push_back("identity '" + f.name + "' is the file " + f.path +
                    ", which someone other than root can change or replace: a session running as that user "
                    "could have planted it before this policy loaded");
  for (const auto& n : p.identities.unresolved)
    out.push_back("'" + n +
                  "' names no executable in the system's directories and none is declared under 'identities': "
                  "no process has this identity");
  return out;
}

}  // namespace cb
