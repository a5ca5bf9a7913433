// libFuzzer target for the policy loader: the YAML a user (or an agent that
// got to write a rules file) hands to `cottonbox run --policy`.  Besides "no
// crash, no sanitizer report" it checks what a user relies on: a refused
// policy says where (a line and column inside the text, a message), and an
// accepted one decides any event without throwing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "policy/policy.h"

namespace {

void check(bool ok) {
  if (!ok) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  cb::LoadOptions o;
  o.vars = {{"CWD", "/home/u/p"}, {"HOME", "/home/u"}, {"USER", "u"}};
  auto r = cb::load_policy_text({{"fuzz.yaml", text}}, o);
  if (!r.policy) {
    check(!r.errors.empty());
    size_t lines = 1;
    for (char c : text) lines += c == '\n';
    for (const auto& d : r.errors) {
      check(!d.message.empty());
      check(d.loc.file == "fuzz.yaml" || d.loc.file.empty());
      check(d.loc.line <= static_cast<int>(lines) + 1);
      check(!cb::format_diagnostic(d).empty());
    }
    return 0;
  }
  for (auto a : {cb::Action::FileDelete, cb::Action::FileWrite, cb::Action::ProcExec}) {
    cb::Event ev;
    ev.action = a;
    ev.path = "/home/u/p/.git/HEAD";
    (void)cb::decide(*r.policy, ev);
  }
  return 0;
}
