// The `when:` expression language.
//
// Grammar (EBNF; keywords are case-sensitive, whitespace separates tokens):
//
//   Expr     ::= OrExpr
//   OrExpr   ::= AndExpr ( "or" AndExpr )*
//   AndExpr  ::= NotExpr ( "and" NotExpr )*
//   NotExpr  ::= "not" NotExpr | Primary
//   Primary  ::= "(" Expr ")" | Compare
//   Compare  ::= Value ( Op Value | "in" List )?      -- a bare Value must be a boolean field
//              | "read" "(" "@" Name ")"            -- a taint test, a boolean
//   Op       ::= "==" | "!=" | "<" | "<=" | ">" | ">="
//              | "startswith" | "endswith" | "contains" | "matches"
//   List     ::= "(" Value ( "," Value )* ")" | "@" Name | Field   -- a list field: proc.argv, proc.ancestors,
//                                                                    net.host, net.names, net.server
//   Value    ::= Field | String | Number
//   Field    ::= "action" | "syscall" | "path" | "target" | "flags" | "is_dir" | "uid"
//              | "proc.name" | "proc.exe" | "proc.argv" | "proc.pid" | "proc.ppid"
//              | "proc.ancestors" | "proc.cwd" | "proc.deletes" | "target.pid"
//              | "proc.comm" | "tree.deletes" | "session.deletes"
//              | "net.proto" | "net.addr" | "net.port" | "net.host" | "net.names" | "net.resolved"
//              | "net.server"
//   String   ::= '"' chars '"' | "'" chars "'"    -- backslash escapes \" \' \\ \n \t \xHH
//   Number   ::= [0-9]+
//
// The network fields (empty, 0 or false for other events): net.proto ("tcp",
// "udp", "unix"), net.addr (the IP address as text, IPv4-mapped addresses
// as IPv4), net.port, net.host (the names a process of this session asked
// its resolver for and got this address), net.names (those and the names on
// the CNAME chains between), net.resolved (net.host is not empty),
// net.server (a list: on a connect to a unix socket, the executables of the
// processes outside the session that listen on it, found from the socket
// itself whatever its name; empty when the session serves it or nobody can
// be seen to).
// read(@list) is true when the process, or what it got data from in this
// session, read a file matching a pattern of `list` before this event
// (Event::read_taint; the supervisor supplies it).
//
// proc.name is the process's identity (policy/identity.h): the trusted
// program the kernel ran, never a name the process chose; "" for any other.
// proc.ancestors lists the ancestors' identities.  proc.comm is the command
// name the process set itself: free for it to forge, never a ground for trust.
// proc.deletes and tree.deletes count file.delete events (this one
// included) of the process and of its command tree (a child of the
// session's first process and everything below it); session.deletes counts
// the session's deletions the policy guards (policy/counts.h).
//
// Semantics: on a list field (proc.argv, proc.ancestors) `contains X` and
// `X in field` test membership, `matches G` is true when any element matches;
// on strings `contains` is a substring test and `matches` a path glob
// (policy/glob.h).  `==`/`!=` on a list compare against the whole list joined
// by spaces.  Comparing a string field with a number, or ordering strings, is
// a compile error.  Recursion is capped (kMaxDepth) so a hostile policy cannot
// exhaust the stack.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/event.h"

namespace cb {

class Expr;  // opaque AST node

struct ExprError {
  size_t offset = 0;    // 0-based byte offset into the expression text
  std::string message;  // e.g. "expected ')' to close '(' at offset 3"
};

struct ExprParseResult {
  std::shared_ptr<const Expr> expr;  // null on error
  ExprError error;
};

constexpr int kMaxExprDepth = 64;

// `lists` resolves @name references (already expanded from the policy's lists).
ExprParseResult parse_expr(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists);
// Same, and ${NAME} inside string literals is replaced from `vars` (an unknown
// name is an error at its '$').  In a `matches` pattern the value is escaped
// so that it matches literally: `path matches "${HOME}/.cache/**"`.
ExprParseResult parse_expr(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists,
                           const std::map<std::string, std::string>& vars);
// Same, and read(@name) is allowed: `taint_lists` holds the names so used
// (the policy's, across all its expressions); a new name is appended, and
// the test reads bit i of Event::read_taint for the name at index i.
constexpr size_t kMaxTaintLists = 64;
ExprParseResult parse_expr(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists,
                           const std::map<std::string, std::string>& vars, std::vector<std::string>* taint_lists);

bool eval_expr(const Expr& e, const Event& ev);

// One comparison of an expression as eval_expr_traced() evaluated it.
struct ExprStep {
  std::string condition;  // canonical text: proc.deletes > 100
  // Each field the comparison read, with its value in the expression
  // language's notation: {"proc.deletes", "141"}, {"path", "\"/tmp/x\""}.
  std::vector<std::pair<std::string, std::string>> values;
  bool result = false;
  int depth = 0;  // nesting below the top (and/or/not)
};
// eval_expr() with a record: the same result and the same short-circuits
// (the comparisons are the same functions), plus every comparison it
// evaluated, in order.  For explanations, never on the hot path.
bool eval_expr_traced(const Expr& e, const Event& ev, std::vector<ExprStep>& steps);

// The string literals compared with `field` (==, !=, contains, in): the
// names `proc.name == "git"` or `"git" in proc.ancestors` refer to.
std::vector<std::string> expr_literals(const Expr& e, std::string_view field);

// The names of the fields an expression reads ("proc.deletes", "path").
std::vector<std::string> expr_fields(const Expr& e);

// Canonical text of a parsed expression (fully parenthesized), for `check`.
std::string expr_to_string(const Expr& e);

}  // namespace cb
