// The terminal's line for a refusal: once per rule, naming the rule, what
// it refused and by whom, and how to allow it where a rule can.
#include "record/refusal_notice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

namespace cb {
namespace {

EventRow refused(Action a, const std::string& path, const std::string& rule, bool builtin, std::string message = "") {
  EventRow r;
  auto p = std::make_shared<ProcessInfo>();
  p->comm = "bwrap";
  p->pid = 42;
  r.ev.proc = p;
  r.ev.pid = 42;
  r.ev.action = a;
  r.ev.path = path;
  r.verdict = Verdict{Decision::Deny, rule, std::move(message), builtin};
  r.allowed = false;
  return r;
}

TEST(RefusalNotice, NamesTheRuleAndHowToAllowIt) {
  std::string s = refusal_notice(refused(Action::FileDelete, "/p/.git/HEAD", "git-internals", false, "only git"));
  EXPECT_NE(s.find("refused file.delete \"/p/.git/HEAD\" by bwrap (rule git-internals: only git)"), std::string::npos)
      << s;
  EXPECT_NE(s.find("{id: allow-it, action: file.delete, path: \"/p/.git/HEAD\", decision: allow}"), std::string::npos)
      << s;
  // A guard can be allowed by a rule; cottonbox's own protections cannot.
  EXPECT_NE(refusal_notice(refused(Action::SysIoUring, "io_uring", "cottonbox:guard-io_uring", true)).find("allow-it"),
            std::string::npos);
  std::string own = refusal_notice(refused(Action::SysMount, "/db", "cottonbox:self-protect-trail", true));
  EXPECT_EQ(own.find("allow-it"), std::string::npos) << own;
  EXPECT_NE(own.find("no rule can allow"), std::string::npos) << own;
  // What was allowed, or only observed, is no refusal.
  EventRow ok = refused(Action::FileDelete, "/x", "r", false);
  ok.allowed = true;
  EXPECT_EQ(refusal_notice(ok), "");
  // A quote or a control character in a path cannot break the line or the rule.
  std::string odd = refusal_notice(refused(Action::FileDelete, "/a\"b\nc", "r", false));
  EXPECT_NE(odd.find("\"/a\\\"b?c\""), std::string::npos) << odd;
}

TEST(RefusalNotice, SaysItOncePerRule) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  ASSERT_TRUE(out);
  {
    RefusalNotices n(out);
    // Said as the call is refused, and not again as the row is recorded.
    n.refusing(refused(Action::FileDelete, "/p/a", "protect", false));
    n.event(refused(Action::FileDelete, "/p/a", "protect", false));
    n.event(refused(Action::FileDelete, "/p/b", "protect", false));
    n.event(refused(Action::SysMount, "/db", "cottonbox:layers", true, "it would uncover (no rule can allow that)"));
  }
  fclose(out);
  std::string text(buf, len);
  free(buf);
  EXPECT_NE(text.find("\"/p/a\""), std::string::npos) << text;
  EXPECT_EQ(text.find("\"/p/b\""), std::string::npos) << text;
  EXPECT_NE(text.find("cottonbox:layers"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
}

}  // namespace
}  // namespace cb
