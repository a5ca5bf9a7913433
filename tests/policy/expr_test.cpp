#include "policy/expr.h"

#include <gtest/gtest.h>

#include <string>

namespace cb {
namespace {

const std::map<std::string, std::vector<std::string>> kLists = {
    {"archivers", {"tar", "zip", "7z"}},
    {"uids", {"0", "1000"}},
    {"words", {"x1", "y"}},
};

std::string replace_spaces(std::string s, std::string_view with) {
  std::string out;
  for (char c : s) {
    if (c == ' ')
      out += with;
    else
      out += c;
  }
  return out;
}

// falco's filter_parser tests: every accepted expression is accepted again
// with its spaces turned into newlines, tabs and runs of blanks.
void accept(const std::string& text) {
  for (std::string_view ws : {" ", "\n", "\t", " \t\n ", "\r\n"}) {
    std::string t = replace_spaces(text, ws);
    auto r = parse_expr(t, kLists);
    EXPECT_TRUE(r.expr) << "rejected: [" << t << "] at " << r.error.offset << ": " << r.error.message;
  }
  auto padded = parse_expr("\n\t " + text + " \n", kLists);
  EXPECT_TRUE(padded.expr) << "rejected with padding: " << text;
}

void reject(const std::string& text) {
  auto r = parse_expr(text, kLists);
  EXPECT_FALSE(r.expr) << "accepted: [" << text << "]";
}

void reject_msg(const std::string& text, size_t offset, const std::string& message) {
  auto r = parse_expr(text, kLists);
  ASSERT_FALSE(r.expr) << "accepted: [" << text << "]";
  EXPECT_EQ(r.error.offset, offset) << text;
  EXPECT_EQ(r.error.message, message) << text;
}

std::shared_ptr<ProcessInfo> proc(std::string comm, std::string exe = "") {
  auto p = std::make_shared<ProcessInfo>();
  p->pid = 42;
  p->ppid = 7;
  p->uid = 1000;
  // A plain struct for a real program: its identity is its name.
  p->names = {comm};
  p->comm = std::move(comm);
  p->exe = std::move(exe);
  p->cwd = "/home/u/p";
  return p;
}

bool eval(const std::string& text, const Event& ev, const std::map<std::string, std::string>& vars = {}) {
  auto r = parse_expr(text, kLists, vars);
  EXPECT_TRUE(r.expr) << text << ": " << r.error.message << " at " << r.error.offset;
  return r.expr && eval_expr(*r.expr, ev);
}

TEST(ExprParse, Accepts) {
  accept("path == \"/a\"");
  accept("path != '/a'");
  accept("proc.name == \"tar\" and not path matches \"**/*.o\"");
  accept("(path startswith \"/a\" or path endswith \".c\") and uid == 0");
  accept("not not is_dir");
  accept("is_dir and action == \"file.delete\"");
  accept("proc.deletes > 100 and proc.deletes <= 1000 and flags >= 1 and uid < 5");
  accept("proc.name in (\"tar\", \"zip\")");
  accept("proc.name in @archivers");
  accept("uid in @uids");
  accept("uid in (0, 1000)");
  accept("\"git\" in proc.ancestors");
  accept("proc.ancestors contains \"git\"");
  accept("proc.argv matches \"-*\"");
  accept("proc.argv == \"rm -rf /\"");
  accept("target.pid == 1 or proc.pid == 2 or proc.ppid == 3");
  accept("syscall == \"unlinkat\" and target contains \"x\" and proc.cwd startswith \"/\"");
  accept("proc.exe endswith \"/git\"");
  accept("((((path == \"a\"))))");
  accept("path == \"a \\\" b \\' c \\\\ \\n \\t \\x41\"");
}

TEST(ExprParse, RejectsWithMessages) {
  reject_msg("", 0, "empty expression");
  reject_msg("   ", 0, "empty expression");
  reject_msg("(path == \"a\"", 12, "expected ')' to close '(' at offset 0");
  reject_msg("not (path == \"a\" and", 20, "unexpected end of expression; expected a field, a string or a number");
  reject_msg("proc.nam == \"x\"", 0, "unknown field 'proc.nam'; did you mean 'proc.name'?");
  reject_msg("frobnicate == 1", 0, "unknown field 'frobnicate'");
  reject_msg("path == \"abc", 8, "unterminated string");
  reject_msg("path == 'abc\\'", 8, "unterminated string");
  reject_msg("path matches proc.exe", 13, "'matches' needs a string pattern");
  reject_msg("path matches", 12, "'matches' needs a string pattern");
  reject_msg("path < \"b\"", 5, "cannot order strings with '<'");
  reject_msg("proc.deletes >= proc.name", 13, "cannot order strings with '>='");
  reject_msg("proc.name in @foo", 13, "unknown list '@foo'");
  reject_msg("proc.name in @archiver", 13, "unknown list '@archiver'; did you mean 'archivers'?");
  reject_msg("path == 3", 8, "cannot compare 'path' (a string) with a number");
  reject_msg("uid == \"root\"", 7, "cannot compare 'uid' (a number) with a string");
  reject_msg("path = \"a\"", 5, "unexpected '='; did you mean '=='?");
  reject_msg("path == \"a\" && uid == 0", 12, "unexpected '&'; use 'and'");
  reject_msg("path equals \"a\"", 5,
             "expected an operator (==, !=, <, <=, >, >=, in, startswith, endswith, contains, "
             "matches), found 'equals'");
  reject_msg("path matchs \"a\"", 5,
             "expected an operator (==, !=, <, <=, >, >=, in, startswith, endswith, contains, "
             "matches), found 'matchs'; did you mean 'matches'?");
  reject_msg("path", 0, "'path' is a string, not a condition; compare it with a value");
  reject_msg("proc.deletes and is_dir", 0, "'proc.deletes' is a number, not a condition; compare it with a value");
  reject_msg("\"x\"", 0, "a string alone is not a condition");
  reject_msg("is_dir == 1", 0, "'is_dir' is a boolean; use it alone or with 'not'");
  reject_msg("path == \"a\" path", 12, "expected 'and', 'or' or the end of the expression, found 'path'");
  reject_msg("path == \"a\")", 11, "unexpected ')' without a matching '('");
  reject_msg("path == and", 8, "expected a field, a string or a number, found 'and'");
  reject_msg("and", 0, "expected a field, a string or a number, found 'and'");
  reject_msg("path == )", 8, "expected a field, a string or a number, found ')'");
  reject_msg("path == \"\\q\"", 9, "unknown escape '\\q' in string (use \\\" \\' \\\\ \\n \\t \\$ or \\xHH)");
  reject_msg("path == \"\\x4\"", 9, "'\\x' needs two hex digits");
  reject_msg("uid == 99999999999999999999", 7, "number too large: 99999999999999999999");
  reject_msg("uid == 12ab", 7, "a number cannot be followed by 'a'");
  reject_msg("proc.name in ()", 14, "empty list after 'in'");
  reject_msg("proc.name in (\"a\" \"b\")", 18, "expected ',' or ')' in the list opened at offset 13, found a string");
  reject_msg("proc.name in path", 13,
             "'path' (a string) is not a list; after 'in' write (a, b), @list, proc.argv, "
             "proc.ancestors, net.host, net.names or net.server");
  reject_msg("proc.name in", 12, "expected '(', '@list' or a list field after 'in', found the end of the expression");
  reject_msg("proc.argv in (\"a\")", 0, "'proc.argv' (a list) cannot be tested with 'in'; use 'contains'");
  reject_msg("uid in @archivers", 7, "list '@archivers' has 'tar', which is not a number");
  reject_msg("uid in (\"a\")", 8, "cannot compare 'uid' (a number) with a string");
  reject_msg("path startswith 1", 16, "'startswith' needs a string on the right, not a number");
  reject_msg("proc.argv endswith \"x\"", 0, "'endswith' needs a string on the left, not 'proc.argv' (a list)");
  reject_msg("uid contains \"1\"", 0, "'contains' needs a string or a list on the left, not 'uid' (a number)");
  reject_msg("path matches \"/a/[b\"", 17, "bad pattern for 'matches': unclosed '[' at offset 3");
  reject_msg("action == \"file.delet\"", 10, "unknown action 'file.delet'; did you mean 'file.delete'?");
  reject_msg("action in (\"file.read\", \"proc.exex\")", 24, "unknown action 'proc.exex'; did you mean 'proc.exec'?");
  reject_msg("path == \"a\" # comment", 12, "unexpected character '#'");
  reject_msg("path == @x", 8, "expected a field, a string or a number, found '@x'");
  reject_msg("proc.name in @", 13, "expected a list name after '@'");
  reject("path == \"a\" or");
  reject("not");
  reject("()");
  reject("path == \"\xff\" and \xfe");
}

TEST(ExprParse, WhitespaceIsNotNeededAroundPunctuation) {
  accept("(path==\"a\")or(uid!=0)");
  EXPECT_TRUE(parse_expr("proc.name in(\"a\",\"b\")", kLists).expr);
}

// The depth guard: a hostile policy cannot exhaust the stack.
TEST(ExprParse, DepthIsCapped) {
  auto nested = [](int n) { return std::string(n, '(') + "is_dir" + std::string(n, ')'); };
  EXPECT_TRUE(parse_expr(nested(kMaxExprDepth - 1), kLists).expr);
  auto deep = parse_expr(nested(kMaxExprDepth), kLists);
  ASSERT_FALSE(deep.expr);
  EXPECT_EQ(deep.error.message, "expression nested too deeply (more than 64 levels)");
  EXPECT_EQ(deep.error.offset, static_cast<size_t>(kMaxExprDepth));

  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  auto r = parse_expr(nots + "is_dir", kLists);
  ASSERT_FALSE(r.expr);
  EXPECT_EQ(r.error.message, "expression nested too deeply (more than 64 levels)");
  EXPECT_FALSE(parse_expr(std::string(100000, '(') + "is_dir", kLists).expr);

  // A long flat chain is not deep: and/or are n-ary.
  std::string chain = "is_dir";
  for (int i = 0; i < 20000; ++i) chain += " and is_dir";
  auto flat = parse_expr(chain, kLists);
  ASSERT_TRUE(flat.expr);
  Event ev;
  ev.is_dir = true;
  EXPECT_TRUE(eval_expr(*flat.expr, ev));
}

TEST(ExprEval, StringsAndNumbers) {
  Event ev;
  ev.action = Action::FileDelete;
  ev.syscall = "unlinkat";
  ev.path = "/home/u/p/src/a.c";
  ev.target = "/tmp/x";
  ev.flags = 0x200;
  ev.target_pid = 99;
  ev.proc_deletes = 150;
  ev.proc = proc("rm", "/usr/bin/rm");
  EXPECT_TRUE(eval("action == \"file.delete\"", ev));
  EXPECT_FALSE(eval("action != \"file.delete\"", ev));
  EXPECT_TRUE(eval("syscall == \"unlinkat\" and target == \"/tmp/x\"", ev));
  EXPECT_TRUE(eval("path startswith \"/home/u/\" and path endswith \".c\"", ev));
  EXPECT_TRUE(eval("path contains \"/src/\"", ev));
  EXPECT_FALSE(eval("path contains \"/lib/\"", ev));
  EXPECT_TRUE(eval("path matches \"/home/**/*.c\"", ev));
  EXPECT_FALSE(eval("path matches \"/home/*.c\"", ev));
  EXPECT_TRUE(eval("flags == 512 and target.pid == 99", ev));
  EXPECT_TRUE(eval("proc.deletes > 100 and proc.deletes >= 150 and proc.deletes < 151", ev));
  EXPECT_FALSE(eval("proc.deletes <= 149", ev));
  EXPECT_TRUE(eval("uid == 1000 and proc.pid == 42 and proc.ppid == 7", ev));
  EXPECT_TRUE(eval("proc.name == \"rm\" and proc.exe == \"/usr/bin/rm\"", ev));
  EXPECT_TRUE(eval("proc.cwd == \"/home/u/p\"", ev));
  EXPECT_TRUE(eval("proc.name in (\"tar\", \"rm\")", ev));
  EXPECT_FALSE(eval("proc.name in @archivers", ev));
  EXPECT_TRUE(eval("uid in @uids", ev));
  EXPECT_TRUE(eval("not is_dir", ev));
  EXPECT_TRUE(eval("\"x\" == \"x\" and 3 < 4", ev));
}

TEST(ExprEval, Lists) {
  Event ev;
  auto p = proc("sh");
  p->argv = {"rm", "-rf", "build"};
  p->ancestors = {"bash", "git", "claude"};
  ev.proc = p;
  EXPECT_TRUE(eval("proc.ancestors contains \"git\"", ev));
  EXPECT_TRUE(eval("\"git\" in proc.ancestors", ev));
  EXPECT_FALSE(eval("proc.ancestors contains \"gi\"", ev));  // membership, not substring
  EXPECT_TRUE(eval("proc.argv contains \"-rf\"", ev));
  EXPECT_TRUE(eval("proc.argv matches \"b*\"", ev));
  EXPECT_FALSE(eval("proc.argv matches \"x*\"", ev));
  EXPECT_TRUE(eval("proc.argv == \"rm -rf build\"", ev));
  EXPECT_FALSE(eval("proc.argv == \"rm -rf\"", ev));
  EXPECT_FALSE(eval("proc.argv == \"rm -rf build \"", ev));
  EXPECT_TRUE(eval("proc.argv != \"rm\"", ev));
}

TEST(ExprEval, NullProcessGivesEmptyValues) {
  Event ev;
  ev.path = "/x";
  EXPECT_TRUE(eval("proc.name == \"\" and proc.exe == \"\" and proc.cwd == \"\"", ev));
  EXPECT_TRUE(eval("uid == 0 and proc.pid == 0 and proc.ppid == 0", ev));
  EXPECT_FALSE(eval("proc.ancestors contains \"git\"", ev));
  EXPECT_TRUE(eval("proc.argv == \"\"", ev));
}

TEST(ExprEval, BytesInStrings) {
  Event ev;
  ev.path = std::string("/t/a\nb\xff");
  EXPECT_TRUE(eval("path == \"/t/a\\nb\\xff\"", ev));
  EXPECT_TRUE(eval("path matches \"/t/a?b*\"", ev));
  EXPECT_TRUE(eval("path contains \"\\n\"", ev));
}

TEST(ExprEval, Variables) {
  Event ev;
  ev.path = "/home/u[1]/.cache/x";
  std::map<std::string, std::string> vars = {{"HOME", "/home/u[1]"}};
  EXPECT_TRUE(eval("path startswith \"${HOME}/\"", ev, vars));
  // In a pattern the value is matched literally: "[1]" is not a set.
  EXPECT_TRUE(eval("path matches \"${HOME}/.cache/**\"", ev, vars));
  ev.path = "/home/u1/.cache/x";
  EXPECT_FALSE(eval("path matches \"${HOME}/.cache/**\"", ev, vars));
  EXPECT_TRUE(eval("path != \"\\${HOME}\"", ev, vars));

  auto r = parse_expr("path == \"${HOEM}/x\"", kLists, vars);
  ASSERT_FALSE(r.expr);
  EXPECT_EQ(r.error.offset, 9u);
  EXPECT_EQ(r.error.message, "undefined variable '${HOEM}'; did you mean 'HOME'?");
  r = parse_expr("path == \"${X}\"", kLists, vars);
  EXPECT_EQ(r.error.message, "undefined variable '${X}' (set it with --var X=VALUE)");
  r = parse_expr("path == \"${HOME\"", kLists, vars);
  EXPECT_EQ(r.error.offset, 9u);
  EXPECT_EQ(r.error.message, "expected '${NAME}' (write \\$ for a literal '$')");
  // Without variables, "${" is just bytes.
  EXPECT_TRUE(parse_expr("path == \"${HOME}\"", kLists).expr);
}

TEST(ExprPrint, CanonicalAndStable) {
  auto r = parse_expr(
      "proc.name == 'tar' and not path matches \"**/*.o\" or uid in (0, 1) and is_dir or "
      "proc.name in @archivers or \"git\" in proc.ancestors",
      kLists);
  ASSERT_TRUE(r.expr);
  std::string s = expr_to_string(*r.expr);
  EXPECT_EQ(s,
            "((proc.name == \"tar\" and (not path matches \"**/*.o\")) or (uid in (0, 1) and "
            "is_dir) or proc.name in @archivers or \"git\" in proc.ancestors)");
  auto again = parse_expr(s, kLists);
  ASSERT_TRUE(again.expr) << again.error.message;
  EXPECT_EQ(expr_to_string(*again.expr), s);

  auto q = parse_expr("path == \"a\\\"b\\\\c\\n\\x01\"", kLists);
  ASSERT_TRUE(q.expr);
  EXPECT_EQ(expr_to_string(*q.expr), "path == \"a\\\"b\\\\c\\n\\x01\"");
}

}  // namespace
}  // namespace cb
