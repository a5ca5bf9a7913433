// libFuzzer target for the `when:` expression parser.  Besides "no crash,
// no sanitizer report" it checks: an error's offset lies inside the text;
// a parsed expression prints to text that parses again to the same text
// (the form `cottonbox check` and explanations show), and evaluates.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "policy/expr.h"
#include "policy/policy.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "expr_fuzz: broken invariant: %s\n", what);
  abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::map<std::string, std::vector<std::string>> lists = {{"builds", {"/b/**", "*.o"}}, {"tools", {"git"}}};
  const std::map<std::string, std::string> vars = {{"HOME", "/home/u"}};
  std::vector<std::string> taints;
  auto r = cb::parse_expr(text, lists, vars, &taints);
  if (!r.expr) {
    check(r.error.offset <= size, "the error offset lies in the text");
    check(!r.error.message.empty(), "an error has a message");
    return 0;
  }
  std::string printed = cb::expr_to_string(*r.expr);
  std::vector<std::string> taints2;
  auto again = cb::parse_expr(printed, lists, vars, &taints2);
  check(again.expr != nullptr, "the printed form parses");
  check(cb::expr_to_string(*again.expr) == printed, "the printed form prints the same");
  cb::Event ev;
  ev.action = cb::Action::FileDelete;
  ev.path = "/home/u/x.o";
  std::vector<cb::ExprStep> steps;
  check(cb::eval_expr(*r.expr, ev) == cb::eval_expr_traced(*r.expr, ev, steps), "traced and plain agree");
  return 0;
}
