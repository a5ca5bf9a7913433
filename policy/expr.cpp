// The `when:` expression language: a recursive-descent parser and an
// evaluator that reads the Event in place.
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
// When the caller passes variables, ${NAME} inside a string is replaced by its
// value and \$ is a literal '$'.
//
// Types are checked at parse time, so evaluation cannot fail: it only compares
// string_views into the Event and integers, and allocates nothing.
#include "policy/expr.h"

#include <algorithm>
#include <optional>

#include "policy/glob.h"
#include "policy/suggest.h"

namespace cb {
namespace expr_detail {

enum class Type : uint8_t { String, Number, Bool, List };

enum class Field : uint8_t {
  Action,
  Syscall,
  Path,
  Target,
  Flags,
  IsDir,
  Uid,
  TargetPid,
  ProcName,
  ProcExe,
  ProcArgv,
  ProcPid,
  ProcPpid,
  ProcAncestors,
  ProcCwd,
  ProcDeletes,
  ProcComm,
  TreeDeletes,
  SessionDeletes,
  NetProto,
  NetAddr,
  NetPort,
  NetHost,
  NetNames,
  NetResolved,
  NetServer,
  ReadTaint,  // read(@list): the operand's num is the bit, str the list's name
};

struct FieldInfo {
  std::string_view name;
  Field field;
  Type type;
};

constexpr FieldInfo kFields[] = {
    {"action", Field::Action, Type::String},
    {"syscall", Field::Syscall, Type::String},
    {"path", Field::Path, Type::String},
    {"target", Field::Target, Type::String},
    {"flags", Field::Flags, Type::Number},
    {"is_dir", Field::IsDir, Type::Bool},
    {"uid", Field::Uid, Type::Number},
    {"target.pid", Field::TargetPid, Type::Number},
    {"proc.name", Field::ProcName, Type::String},
    {"proc.exe", Field::ProcExe, Type::String},
    {"proc.argv", Field::ProcArgv, Type::List},
    {"proc.pid", Field::ProcPid, Type::Number},
    {"proc.ppid", Field::ProcPpid, Type::Number},
    {"proc.ancestors", Field::ProcAncestors, Type::List},
    {"proc.cwd", Field::ProcCwd, Type::String},
    {"proc.deletes", Field::ProcDeletes, Type::Number},
    {"proc.comm", Field::ProcComm, Type::String},
    {"tree.deletes", Field::TreeDeletes, Type::Number},
    {"session.deletes", Field::SessionDeletes, Type::Number},
    {"net.proto", Field::NetProto, Type::String},
    {"net.addr", Field::NetAddr, Type::String},
    {"net.port", Field::NetPort, Type::Number},
    {"net.host", Field::NetHost, Type::List},
    {"net.names", Field::NetNames, Type::List},
    {"net.resolved", Field::NetResolved, Type::Bool},
    {"net.server", Field::NetServer, Type::List},
    // Never looked up by this name: read(@list) is parsed on its own.
    {"read(@list)", Field::ReadTaint, Type::Bool},
};

const FieldInfo& field_info(Field f) {
  for (const auto& i : kFields)
    if (i.field == f) return i;
  return kFields[0];
}

enum class Op : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, StartsWith, EndsWith, Contains, Matches };

constexpr std::string_view op_name(Op op) {
  switch (op) {
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::StartsWith: return "startswith";
    case Op::EndsWith: return "endswith";
    case Op::Contains: return "contains";
    case Op::Matches: return "matches";
  }
  return "?";
}

struct Operand {
  enum class Kind : uint8_t { Field, String, Number };
  Kind kind = Kind::String;
  Field field = Field::Path;
  Type type = Type::String;
  std::string str;
  int64_t num = 0;
  size_t offset = 0;  // where it was written, for messages
};

}  // namespace expr_detail

using namespace expr_detail;

class Expr {
 public:
  enum class Kind : uint8_t { And, Or, Not, BoolField, Compare, InValues, InListField };
  Kind kind = Kind::And;
  std::vector<std::unique_ptr<const Expr>> children;  // And, Or, Not
  Operand lhs;                                        // Compare, In*; the field of BoolField
  Operand rhs;                                        // Compare; the list field of InListField
  Op op = Op::Eq;
  std::vector<Operand> values;  // InValues
  std::string list_name;        // InValues written as @name
  std::optional<Glob> glob;     // Matches
};

namespace {

std::string operand_text(const Operand& o);

// ---------------------------------------------------------------- lexer

struct Token {
  enum class Kind : uint8_t { End, Ident, String, Number, LParen, RParen, Comma, List, Op };
  Kind kind = Kind::End;
  size_t offset = 0;
  std::string text;  // as written (identifiers, operators); the name for List
  std::string str;   // String: the decoded bytes
  std::string glob;  // String: the same with variable values glob-escaped
  int64_t num = 0;
  Op op = Op::Eq;
};

struct ParseFailure {
  ExprError error;
};

[[noreturn]] void fail(size_t offset, std::string message) {
  throw ParseFailure{ExprError{offset, std::move(message)}};
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || is_digit(c) || c == '.'; }
bool is_list_name(char c) { return is_ident(c) || c == '-'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::End: return "the end of the expression";
    case Token::Kind::String: return "a string";
    case Token::Kind::Number: return "the number " + t.text;
    case Token::Kind::List: return "'@" + t.text + "'";
    default: return "'" + t.text + "'";
  }
}

using Vars = std::map<std::string, std::string>;

class Lexer {
 public:
  Lexer(std::string_view text, const Vars* vars) : text_(text), vars_(vars) {}

  Token next() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
    Token t;
    t.offset = pos_;
    if (pos_ >= text_.size()) return t;
    char c = text_[pos_];
    if (c == '"' || c == '\'') return string(c);
    if (is_digit(c)) return number();
    if (is_ident_start(c)) {
      size_t end = pos_;
      while (end < text_.size() && is_ident(text_[end])) ++end;
      t.kind = Token::Kind::Ident;
      t.text = std::string(text_.substr(pos_, end - pos_));
      pos_ = end;
      return t;
    }
    if (c == '@') {
      size_t end = pos_ + 1;
      while (end < text_.size() && is_list_name(text_[end])) ++end;
      if (end == pos_ + 1) fail(pos_, "expected a list name after '@'");
      t.kind = Token::Kind::List;
      t.text = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end;
      return t;
    }
    auto two = text_.substr(pos_, 2);
    auto op = [&](Op o, size_t len) {
      t.kind = Token::Kind::Op;
      t.op = o;
      t.text = std::string(text_.substr(pos_, len));
      pos_ += len;
      return t;
    };
    if (two == "==") return op(Op::Eq, 2);
    if (two == "!=") return op(Op::Ne, 2);
    if (two == "<=") return op(Op::Le, 2);
    if (two == ">=") return op(Op::Ge, 2);
    if (c == '<') return op(Op::Lt, 1);
    if (c == '>') return op(Op::Gt, 1);
    auto punct = [&](Token::Kind k) {
      t.kind = k;
      t.text = std::string(1, c);
      ++pos_;
      return t;
    };
    if (c == '(') return punct(Token::Kind::LParen);
    if (c == ')') return punct(Token::Kind::RParen);
    if (c == ',') return punct(Token::Kind::Comma);
    if (c == '=') fail(pos_, "unexpected '='; did you mean '=='?");
    if (c == '!') fail(pos_, "unexpected '!'; use 'not' or '!='");
    if (c == '&') fail(pos_, "unexpected '&'; use 'and'");
    if (c == '|') fail(pos_, "unexpected '|'; use 'or'");
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      fail(pos_, "unexpected byte 0x" + hex_byte(c));
    fail(pos_, std::string("unexpected character '") + c + "'");
  }

 private:
  static std::string hex_byte(char c) {
    static constexpr char kHex[] = "0123456789abcdef";
    auto b = static_cast<unsigned char>(c);
    return {kHex[b >> 4], kHex[b & 15]};
  }

  Token string(char quote) {
    Token t;
    t.kind = Token::Kind::String;
    t.offset = pos_;
    size_t i = pos_ + 1;
    for (;;) {
      if (i >= text_.size()) fail(t.offset, "unterminated string");
      char c = text_[i];
      if (c == quote) break;
      if (c == '$' && vars_ && i + 1 < text_.size() && text_[i + 1] == '{') {
        i = variable(i, t);
        continue;
      }
      if (c != '\\') {
        t.str += c;
        t.glob += c;
        ++i;
        continue;
      }
      if (i + 1 >= text_.size()) fail(t.offset, "unterminated string");
      char e = text_[i + 1];
      switch (e) {
        case '"':
        case '\'':
        case '\\':
          t.str += e;
          i += 2;
          break;
        case 'n':
          t.str += '\n';
          i += 2;
          break;
        case 't':
          t.str += '\t';
          i += 2;
          break;
        case '$':
          t.str += '$';
          i += 2;
          break;
        case 'x': {
          int hi = i + 2 < text_.size() ? hex_value(text_[i + 2]) : -1;
          int lo = i + 3 < text_.size() ? hex_value(text_[i + 3]) : -1;
          if (hi < 0 || lo < 0) fail(i, "'\\x' needs two hex digits");
          t.str += static_cast<char>(hi * 16 + lo);
          i += 4;
          break;
        }
        default:
          fail(i, std::string("unknown escape '\\") + e + "' in string (use \\\" \\' \\\\ \\n \\t \\$ or \\xHH)");
      }
      t.glob += t.str.back();  // as decoded: "\\*" is then a literal star in a pattern
    }
    t.text = std::string(text_.substr(pos_, i + 1 - pos_));
    pos_ = i + 1;
    return t;
  }

  // ${NAME} at text_[dollar]; returns the index after the '}'.
  size_t variable(size_t dollar, Token& t) {
    size_t close = dollar + 2;
    while (close < text_.size() && (is_ident_start(text_[close]) || is_digit(text_[close]))) ++close;
    if (close >= text_.size() || text_[close] != '}' || close == dollar + 2)
      fail(dollar, "expected '${NAME}' (write \\$ for a literal '$')");
    std::string name(text_.substr(dollar + 2, close - dollar - 2));
    auto it = vars_->find(name);
    if (it == vars_->end()) {
      std::vector<std::string_view> names;
      for (const auto& [k, v] : *vars_) names.push_back(k);
      std::string hint = did_you_mean(name, names);
      if (hint.empty()) hint = " (set it with --var " + name + "=VALUE)";
      fail(dollar, "undefined variable '${" + name + "}'" + hint);
    }
    t.str += it->second;
    t.glob += Glob::escape(it->second);
    return close + 1;
  }

  Token number() {
    Token t;
    t.kind = Token::Kind::Number;
    t.offset = pos_;
    size_t end = pos_;
    while (end < text_.size() && is_digit(text_[end])) ++end;
    if (end < text_.size() && is_ident(text_[end]))
      fail(pos_, "a number cannot be followed by '" + std::string(1, text_[end]) + "'");
    t.text = std::string(text_.substr(pos_, end - pos_));
    for (char d : t.text) {
      if (t.num > (INT64_MAX - (d - '0')) / 10) fail(pos_, "number too large: " + t.text);
      t.num = t.num * 10 + (d - '0');
    }
    pos_ = end;
    return t;
  }

  std::string_view text_;
  const Vars* vars_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------- parser

const std::vector<std::string_view>& field_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto& f : kFields) v.push_back(f.name);
    return v;
  }();
  return names;
}

const std::vector<std::string_view>& op_words() {
  static const std::vector<std::string_view> words = {"in",      "startswith", "endswith", "contains",
                                                      "matches", "and",        "or",       "not"};
  return words;
}

bool is_keyword(std::string_view w) {
  for (auto k : op_words())
    if (k == w) return true;
  return false;
}

std::string_view type_word(Type t) {
  switch (t) {
    case Type::String: return "a string";
    case Type::Number: return "a number";
    case Type::Bool: return "a boolean";
    case Type::List: return "a list";
  }
  return "a value";
}

// "'path' (a string)" / "a number": the operand as a message names it.
std::string describe(const Operand& o) {
  if (o.kind != Operand::Kind::Field) return std::string(type_word(o.type));
  return "'" + std::string(field_info(o.field).name) + "' (" + std::string(type_word(o.type)) + ")";
}

std::optional<int64_t> parse_number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t n = 0;
  for (char d : s) {
    if (!is_digit(d) || n > (INT64_MAX - (d - '0')) / 10) return std::nullopt;
    n = n * 10 + (d - '0');
  }
  return n;
}

class Parser {
 public:
  Parser(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists, const Vars* vars,
         std::vector<std::string>* taints)
      : lexer_(text, vars), lists_(lists), taints_(taints) {
    cur_ = lexer_.next();
  }

  std::unique_ptr<const Expr> parse() {
    if (cur_.kind == Token::Kind::End) fail(0, "empty expression");
    auto e = parse_or();
    if (cur_.kind == Token::Kind::RParen) fail(cur_.offset, "unexpected ')' without a matching '('");
    if (cur_.kind != Token::Kind::End)
      fail(cur_.offset, "expected 'and', 'or' or the end of the expression, found " + describe(cur_));
    return e;
  }

 private:
  // Counts nesting while alive.  It must be a named local: an unnamed
  // temporary would be destroyed at the end of its own statement and the
  // limit would never hold (falco's recursion-depth bug).
  class DepthGuard {
   public:
    explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    int& depth_;
  };

  void advance() { cur_ = lexer_.next(); }
  bool at_word(std::string_view w) const { return cur_.kind == Token::Kind::Ident && cur_.text == w; }

  std::unique_ptr<const Expr> parse_or() {
    return parse_chain(Expr::Kind::Or, "or", [this] { return parse_and(); });
  }
  std::unique_ptr<const Expr> parse_and() {
    return parse_chain(Expr::Kind::And, "and", [this] { return parse_not(); });
  }

  // and/or chains are n-ary nodes, so a long chain costs no stack depth.
  template <typename Next>
  std::unique_ptr<const Expr> parse_chain(Expr::Kind kind, std::string_view word, Next next) {
    auto first = next();
    if (!at_word(word)) return first;
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->children.push_back(std::move(first));
    while (at_word(word)) {
      advance();
      e->children.push_back(next());
    }
    return e;
  }

  // Every recursion (a "not", a parenthesis) passes through here.
  std::unique_ptr<const Expr> parse_not() {
    DepthGuard guard{depth_};
    if (depth_ > kMaxExprDepth)
      fail(cur_.offset, "expression nested too deeply (more than " + std::to_string(kMaxExprDepth) + " levels)");
    if (at_word("not")) {
      advance();
      auto e = std::make_unique<Expr>();
      e->kind = Expr::Kind::Not;
      e->children.push_back(parse_not());
      return e;
    }
    return parse_primary();
  }

  std::unique_ptr<const Expr> parse_primary() {
    if (cur_.kind != Token::Kind::LParen) return parse_compare();
    size_t open = cur_.offset;
    advance();
    auto e = parse_or();
    if (cur_.kind != Token::Kind::RParen)
      fail(cur_.offset, "expected ')' to close '(' at offset " + std::to_string(open));
    advance();
    return e;
  }

  Operand parse_value() {
    Operand o;
    o.offset = cur_.offset;
    switch (cur_.kind) {
      case Token::Kind::String:
        o.kind = Operand::Kind::String;
        o.type = Type::String;
        o.str = cur_.str;
        break;
      case Token::Kind::Number:
        o.kind = Operand::Kind::Number;
        o.type = Type::Number;
        o.num = cur_.num;
        break;
      case Token::Kind::Ident: {
        if (cur_.text == "read") return parse_read();
        if (is_keyword(cur_.text))
          fail(cur_.offset, "expected a field, a string or a number, found '" + cur_.text + "'");
        const FieldInfo* info = nullptr;
        for (const auto& f : kFields)
          if (f.name == cur_.text) info = &f;
        if (!info) fail(cur_.offset, "unknown field '" + cur_.text + "'" + did_you_mean(cur_.text, field_names()));
        o.kind = Operand::Kind::Field;
        o.field = info->field;
        o.type = info->type;
        break;
      }
      case Token::Kind::End: fail(cur_.offset, "unexpected end of expression; expected a field, a string or a number");
      default: fail(cur_.offset, "expected a field, a string or a number, found " + describe(cur_));
    }
    advance();
    return o;
  }

  // read(@list), with cur_ at "read".
  Operand parse_read() {
    Operand o;
    o.offset = cur_.offset;
    advance();
    if (cur_.kind != Token::Kind::LParen)
      fail(cur_.offset, "expected '(' after 'read', as in read(@secrets), found " + describe(cur_));
    advance();
    if (cur_.kind != Token::Kind::List)
      fail(cur_.offset, "read(...) takes a list of path patterns, as in read(@secrets); found " + describe(cur_));
    if (!lists_.count(cur_.text)) {
      std::vector<std::string_view> names;
      for (const auto& [name, items] : lists_) names.push_back(name);
      fail(cur_.offset, "unknown list '@" + cur_.text + "'" + did_you_mean(cur_.text, names));
    }
    if (!taints_) fail(o.offset, "read(@...) is only available in a policy's rules");
    auto it = std::find(taints_->begin(), taints_->end(), cur_.text);
    if (it == taints_->end()) {
      if (taints_->size() >= kMaxTaintLists)
        fail(cur_.offset, "a policy may test at most " + std::to_string(kMaxTaintLists) + " lists with read(...)");
      taints_->push_back(cur_.text);
      it = taints_->end() - 1;
    }
    o.kind = Operand::Kind::Field;
    o.field = Field::ReadTaint;
    o.type = Type::Bool;
    o.num = it - taints_->begin();
    o.str = cur_.text;
    advance();
    if (cur_.kind != Token::Kind::RParen) fail(cur_.offset, "expected ')' to close read(, found " + describe(cur_));
    advance();
    return o;
  }

  std::unique_ptr<const Expr> parse_compare() {
    Operand lhs = parse_value();
    auto e = std::make_unique<Expr>();
    if (at_word("in")) {
      advance();
      parse_in(*e, std::move(lhs));
      return e;
    }
    std::optional<Op> op;
    if (cur_.kind == Token::Kind::Op) op = cur_.op;
    if (at_word("startswith")) op = Op::StartsWith;
    if (at_word("endswith")) op = Op::EndsWith;
    if (at_word("contains")) op = Op::Contains;
    if (at_word("matches")) op = Op::Matches;
    if (!op) {
      bool ends_condition =
          cur_.kind == Token::Kind::End || cur_.kind == Token::Kind::RParen || at_word("and") || at_word("or");
      if (!ends_condition) {
        std::string hint = cur_.kind == Token::Kind::Ident ? did_you_mean(cur_.text, op_words()) : "";
        fail(cur_.offset,
             "expected an operator (==, !=, <, <=, >, >=, in, startswith, endswith, "
             "contains, matches), found " +
                 describe(cur_) + hint);
      }
      if (lhs.type != Type::Bool) {
        if (lhs.kind == Operand::Kind::Field)
          fail(lhs.offset, "'" + std::string(field_info(lhs.field).name) + "' is " + std::string(type_word(lhs.type)) +
                               ", not a condition; compare it with a value");
        fail(lhs.offset, std::string(type_word(lhs.type)) + " alone is not a condition");
      }
      e->kind = Expr::Kind::BoolField;
      e->lhs = std::move(lhs);
      return e;
    }
    size_t op_offset = cur_.offset;
    advance();
    Operand rhs;
    if (*op == Op::Matches) {
      if (cur_.kind != Token::Kind::String) fail(cur_.offset, "'matches' needs a string pattern");
      std::string raw = cur_.text;
      std::string pattern = cur_.glob;
      rhs = parse_value();
      auto g = Glob::compile(pattern);
      if (!g) {
        // Point into the pattern when no escape or variable shifts offsets.
        size_t at = raw.find('\\') == std::string::npos && raw.find("${") == std::string::npos
                        ? rhs.offset + 1 + static_cast<size_t>(g.error().err)
                        : rhs.offset;
        fail(at, "bad pattern for 'matches': " + g.error().message);
      }
      e->glob = std::move(g.value());
    } else {
      rhs = parse_value();
    }
    check_types(*op, lhs, rhs, op_offset);
    e->kind = Expr::Kind::Compare;
    e->op = *op;
    e->lhs = std::move(lhs);
    e->rhs = std::move(rhs);
    return e;
  }

  void check_bool(const Operand& o) {
    if (o.type == Type::Bool) fail(o.offset, "'" + operand_text(o) + "' is a boolean; use it alone or with 'not'");
  }

  void check_action_literal(const Operand& field, const Operand& lit) {
    if (field.kind != Operand::Kind::Field || field.field != Field::Action) return;
    if (lit.kind != Operand::Kind::String || parse_action(lit.str)) return;
    static const std::vector<std::string_view> names = [] {
      std::vector<std::string_view> v;
      for (int i = 0; i < static_cast<int>(Action::Count); ++i) v.push_back(action_name(static_cast<Action>(i)));
      return v;
    }();
    fail(lit.offset, "unknown action '" + lit.str + "'" + did_you_mean(lit.str, names));
  }

  void check_types(Op op, const Operand& lhs, const Operand& rhs, size_t op_offset) {
    check_bool(lhs);
    check_bool(rhs);
    auto stringish = [](const Operand& o) { return o.type == Type::String || o.type == Type::List; };
    std::string name(op_name(op));
    switch (op) {
      case Op::Eq:
      case Op::Ne:
        if (stringish(lhs) != stringish(rhs))
          fail(rhs.offset, "cannot compare " + describe(lhs) + " with " + describe(rhs));
        check_action_literal(lhs, rhs);
        check_action_literal(rhs, lhs);
        return;
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
        if (stringish(lhs) || stringish(rhs)) fail(op_offset, "cannot order strings with '" + name + "'");
        return;
      case Op::StartsWith:
      case Op::EndsWith:
        if (lhs.type != Type::String)
          fail(lhs.offset, "'" + name + "' needs a string on the left, not " + describe(lhs));
        if (rhs.type != Type::String)
          fail(rhs.offset, "'" + name + "' needs a string on the right, not " + describe(rhs));
        return;
      case Op::Contains:
      case Op::Matches:
        if (!stringish(lhs))
          fail(lhs.offset, "'" + name + "' needs a string or a list on the left, not " + describe(lhs));
        if (rhs.type != Type::String)
          fail(rhs.offset, "'" + name + "' needs a string on the right, not " + describe(rhs));
        return;
    }
  }

  void parse_in(Expr& e, Operand lhs) {
    check_bool(lhs);
    if (lhs.type == Type::List) fail(lhs.offset, describe(lhs) + " cannot be tested with 'in'; use 'contains'");
    auto check_item = [&](const Operand& item) {
      check_bool(item);
      if ((item.type == Type::Number) != (lhs.type == Type::Number) || item.type == Type::List)
        fail(item.offset, "cannot compare " + describe(lhs) + " with " + describe(item));
      check_action_literal(lhs, item);
    };
    if (cur_.kind == Token::Kind::LParen) {
      size_t open = cur_.offset;
      advance();
      if (cur_.kind == Token::Kind::RParen) fail(cur_.offset, "empty list after 'in'");
      for (;;) {
        e.values.push_back(parse_value());
        check_item(e.values.back());
        if (cur_.kind == Token::Kind::Comma) {
          advance();
          continue;
        }
        if (cur_.kind == Token::Kind::RParen) break;
        fail(cur_.offset,
             "expected ',' or ')' in the list opened at offset " + std::to_string(open) + ", found " + describe(cur_));
      }
      advance();
      e.kind = Expr::Kind::InValues;
      e.lhs = std::move(lhs);
      return;
    }
    if (cur_.kind == Token::Kind::List) {
      auto it = lists_.find(cur_.text);
      if (it == lists_.end()) {
        std::vector<std::string_view> names;
        for (const auto& [name, items] : lists_) names.push_back(name);
        fail(cur_.offset, "unknown list '@" + cur_.text + "'" + did_you_mean(cur_.text, names));
      }
      for (const auto& item : it->second) {
        Operand o;
        o.offset = cur_.offset;
        if (lhs.type == Type::Number) {
          auto n = parse_number(item);
          if (!n) fail(cur_.offset, "list '@" + cur_.text + "' has '" + item + "', which is not a number");
          o.kind = Operand::Kind::Number;
          o.type = Type::Number;
          o.num = *n;
        } else {
          o.str = item;
          check_action_literal(lhs, o);
        }
        e.values.push_back(std::move(o));
      }
      e.list_name = cur_.text;
      advance();
      e.kind = Expr::Kind::InValues;
      e.lhs = std::move(lhs);
      return;
    }
    if (cur_.kind == Token::Kind::Ident && !is_keyword(cur_.text)) {
      Operand list = parse_value();
      if (list.type != Type::List)
        fail(list.offset, describe(list) +
                              " is not a list; after 'in' write (a, b), @list, "
                              "proc.argv, proc.ancestors, net.host, net.names or net.server");
      if (lhs.type != Type::String) fail(lhs.offset, "cannot look for " + describe(lhs) + " in " + describe(list));
      e.kind = Expr::Kind::InListField;
      e.lhs = std::move(lhs);
      e.rhs = std::move(list);
      return;
    }
    fail(cur_.offset, "expected '(', '@list' or a list field after 'in', found " + describe(cur_));
  }

  Lexer lexer_;
  const std::map<std::string, std::vector<std::string>>& lists_;
  std::vector<std::string>* taints_;
  Token cur_;
  int depth_ = 0;
};

// ---------------------------------------------------------------- evaluation

const std::vector<std::string>& empty_list() {
  static const std::vector<std::string> empty;
  return empty;
}

std::string_view string_field(Field f, const Event& ev) {
  const ProcessInfo* p = ev.proc.get();
  switch (f) {
    case Field::Action: return action_name(ev.action);
    case Field::Syscall: return ev.syscall;
    case Field::Path: return ev.path;
    case Field::Target: return ev.target;
    case Field::ProcName: return p && !p->names.empty() ? std::string_view(p->names.front()) : std::string_view();
    case Field::ProcComm: return p ? std::string_view(p->comm) : std::string_view();
    case Field::ProcExe: return p ? std::string_view(p->exe) : std::string_view();
    case Field::ProcCwd: return p ? std::string_view(p->cwd) : std::string_view();
    case Field::NetProto: return net_proto_name(ev.net.proto);
    case Field::NetAddr: return ev.net.addr_text;
    default: return {};
  }
}

int64_t number_field(Field f, const Event& ev) {
  const ProcessInfo* p = ev.proc.get();
  switch (f) {
    case Field::Flags: return static_cast<int64_t>(ev.flags);
    case Field::IsDir: return ev.is_dir ? 1 : 0;
    case Field::Uid: return p ? p->uid : 0;
    case Field::TargetPid: return ev.target_pid;
    case Field::ProcPid: return p ? p->pid : 0;
    case Field::ProcPpid: return p ? p->ppid : 0;
    case Field::ProcDeletes: return ev.proc_deletes;
    case Field::TreeDeletes: return ev.tree_deletes;
    case Field::SessionDeletes: return ev.session_deletes;
    case Field::NetPort: return ev.net.port;
    case Field::NetResolved: return ev.net.hosts.empty() ? 0 : 1;
    default: return 0;
  }
}

const std::vector<std::string>& list_field(Field f, const Event& ev) {
  if (f == Field::NetHost) return ev.net.hosts;
  if (f == Field::NetNames) return ev.net.names;
  if (f == Field::NetServer) return ev.net.servers;
  const ProcessInfo* p = ev.proc.get();
  if (!p) return empty_list();
  return f == Field::ProcArgv ? p->argv : p->ancestors;
}

std::string_view string_value(const Operand& o, const Event& ev) {
  return o.kind == Operand::Kind::Field ? string_field(o.field, ev) : std::string_view(o.str);
}

int64_t number_value(const Operand& o, const Event& ev) {
  if (o.kind != Operand::Kind::Field) return o.num;
  if (o.field == Field::ReadTaint) return (ev.read_taint >> o.num) & 1;
  return number_field(o.field, ev);
}

// list == s, with the list joined by spaces, without building the join.
bool joined_equals(const std::vector<std::string>& list, std::string_view s) {
  size_t pos = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) {
      if (pos >= s.size() || s[pos] != ' ') return false;
      ++pos;
    }
    if (s.substr(pos, list[i].size()) != list[i]) return false;
    pos += list[i].size();
  }
  return pos == s.size();
}

// A process may have several identities (one file named twice): proc.name
// equals each of them, and "" when it has none.
bool name_equals(const Operand& other, const Event& ev) {
  std::string_view v = string_value(other, ev);
  if (!ev.proc || ev.proc->names.empty()) return v.empty();
  for (const auto& n : ev.proc->names)
    if (n == v) return true;
  return false;
}

bool equals(const Operand& a, const Operand& b, const Event& ev) {
  bool a_name = a.kind == Operand::Kind::Field && a.field == Field::ProcName;
  bool b_name = b.kind == Operand::Kind::Field && b.field == Field::ProcName;
  if (a_name != b_name) return name_equals(a_name ? b : a, ev);
  if (a.type == Type::Number) return number_value(a, ev) == number_value(b, ev);
  if (a.type == Type::List && b.type == Type::List) return list_field(a.field, ev) == list_field(b.field, ev);
  if (a.type == Type::List) return joined_equals(list_field(a.field, ev), string_value(b, ev));
  if (b.type == Type::List) return joined_equals(list_field(b.field, ev), string_value(a, ev));
  return string_value(a, ev) == string_value(b, ev);
}

bool eval_compare(const Expr& e, const Event& ev) {
  const Operand& l = e.lhs;
  const Operand& r = e.rhs;
  switch (e.op) {
    case Op::Eq: return equals(l, r, ev);
    case Op::Ne: return !equals(l, r, ev);
    case Op::Lt: return number_value(l, ev) < number_value(r, ev);
    case Op::Le: return number_value(l, ev) <= number_value(r, ev);
    case Op::Gt: return number_value(l, ev) > number_value(r, ev);
    case Op::Ge: return number_value(l, ev) >= number_value(r, ev);
    case Op::StartsWith: return string_value(l, ev).starts_with(string_value(r, ev));
    case Op::EndsWith: return string_value(l, ev).ends_with(string_value(r, ev));
    case Op::Contains: {
      std::string_view needle = string_value(r, ev);
      if (l.type == Type::List) {
        for (const auto& item : list_field(l.field, ev))
          if (item == needle) return true;
        return false;
      }
      return string_value(l, ev).find(needle) != std::string_view::npos;
    }
    case Op::Matches: {
      if (l.type == Type::List) {
        for (const auto& item : list_field(l.field, ev))
          if (e.glob->match(item)) return true;
        return false;
      }
      return e.glob->match(string_value(l, ev));
    }
  }
  return false;
}

// ---------------------------------------------------------------- printing

std::string quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b == 0x7f) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string operand_text(const Operand& o) {
  switch (o.kind) {
    case Operand::Kind::Field:
      if (o.field == Field::ReadTaint) return "read(@" + o.str + ")";
      return std::string(field_info(o.field).name);
    case Operand::Kind::String: return quote(o.str);
    case Operand::Kind::Number: return std::to_string(o.num);
  }
  return "";
}

}  // namespace

namespace {

ExprParseResult parse(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists,
                      const Vars* vars, std::vector<std::string>* taints) {
  ExprParseResult r;
  // A failed expression must not leave its new list names behind.
  size_t taints_before = taints ? taints->size() : 0;
  try {
    Parser parser(text, lists, vars, taints);
    r.expr = parser.parse();
  } catch (const ParseFailure& f) {
    r.expr = nullptr;
    r.error = f.error;
    if (taints) taints->resize(taints_before);
  }
  return r;
}

}  // namespace

ExprParseResult parse_expr(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists) {
  return parse(text, lists, nullptr, nullptr);
}

ExprParseResult parse_expr(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists,
                           const std::map<std::string, std::string>& vars) {
  return parse(text, lists, &vars, nullptr);
}

ExprParseResult parse_expr(std::string_view text, const std::map<std::string, std::vector<std::string>>& lists,
                           const std::map<std::string, std::string>& vars, std::vector<std::string>* taint_lists) {
  return parse(text, lists, &vars, taint_lists);
}

bool eval_expr(const Expr& e, const Event& ev) {
  switch (e.kind) {
    case Expr::Kind::And:
      for (const auto& c : e.children)
        if (!eval_expr(*c, ev)) return false;
      return true;
    case Expr::Kind::Or:
      for (const auto& c : e.children)
        if (eval_expr(*c, ev)) return true;
      return false;
    case Expr::Kind::Not: return !eval_expr(*e.children[0], ev);
    case Expr::Kind::BoolField: return number_value(e.lhs, ev) != 0;
    case Expr::Kind::Compare: return eval_compare(e, ev);
    case Expr::Kind::InValues:
      for (const auto& v : e.values)
        if (equals(e.lhs, v, ev)) return true;
      return false;
    case Expr::Kind::InListField: {
      std::string_view needle = string_value(e.lhs, ev);
      for (const auto& item : list_field(e.rhs.field, ev))
        if (item == needle) return true;
      return false;
    }
  }
  return false;
}

namespace {

constexpr size_t kMaxShown = 160;

std::string shown_string(std::string_view s) {
  if (s.size() <= kMaxShown) return quote(s);
  return quote(s.substr(0, kMaxShown)) + "...";
}

std::string field_value_text(Field f, const Event& ev) {
  switch (field_info(f).type) {
    case Type::String: return shown_string(string_field(f, ev));
    case Type::Number: return std::to_string(number_field(f, ev));
    case Type::Bool: return number_field(f, ev) ? "true" : "false";
    case Type::List: {
      std::string out = "(";
      const auto& l = list_field(f, ev);
      for (size_t i = 0; i < l.size(); ++i) {
        if (i > 0) out += ", ";
        if (out.size() > kMaxShown) {
          out += "... " + std::to_string(l.size() - i) + " more";
          break;
        }
        out += shown_string(l[i]);
      }
      return out + ")";
    }
  }
  return "";
}

void note_operand(const Operand& o, const Event& ev, ExprStep& step) {
  if (o.kind != Operand::Kind::Field) return;
  std::string name(field_info(o.field).name);
  for (const auto& [n, v] : step.values)
    if (n == name) return;
  step.values.emplace_back(std::move(name), field_value_text(o.field, ev));
}

bool traced(const Expr& e, const Event& ev, std::vector<ExprStep>& steps, int depth) {
  switch (e.kind) {
    case Expr::Kind::And:
      for (const auto& c : e.children)
        if (!traced(*c, ev, steps, depth + 1)) return false;
      return true;
    case Expr::Kind::Or:
      for (const auto& c : e.children)
        if (traced(*c, ev, steps, depth + 1)) return true;
      return false;
    case Expr::Kind::Not: return !traced(*e.children[0], ev, steps, depth + 1);
    default: break;
  }
  ExprStep step;
  step.condition = expr_to_string(e);
  step.depth = depth;
  note_operand(e.lhs, ev, step);
  if (e.kind == Expr::Kind::Compare || e.kind == Expr::Kind::InListField) note_operand(e.rhs, ev, step);
  step.result = eval_expr(e, ev);
  steps.push_back(std::move(step));
  return steps.back().result;
}

void collect_fields(const Expr& e, std::vector<std::string>& out) {
  auto add = [&](const Operand& o) {
    if (o.kind != Operand::Kind::Field) return;
    std::string name(field_info(o.field).name);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  };
  for (const auto& c : e.children) collect_fields(*c, out);
  if (e.kind == Expr::Kind::And || e.kind == Expr::Kind::Or || e.kind == Expr::Kind::Not) return;
  add(e.lhs);
  if (e.kind == Expr::Kind::Compare || e.kind == Expr::Kind::InListField) add(e.rhs);
}

void collect_literals(const Expr& e, std::string_view field, std::vector<std::string>& out) {
  for (const auto& c : e.children) collect_literals(*c, field, out);
  auto is = [&](const Operand& o) { return o.kind == Operand::Kind::Field && field_info(o.field).name == field; };
  auto add = [&](const Operand& o) {
    if (o.kind == Operand::Kind::String && std::find(out.begin(), out.end(), o.str) == out.end()) out.push_back(o.str);
  };
  switch (e.kind) {
    case Expr::Kind::Compare:
      if (e.op != Op::Eq && e.op != Op::Ne && e.op != Op::Contains) break;
      if (is(e.lhs)) add(e.rhs);
      if (is(e.rhs)) add(e.lhs);
      break;
    case Expr::Kind::InValues:
      if (is(e.lhs))
        for (const auto& v : e.values) add(v);
      break;
    case Expr::Kind::InListField:
      if (is(e.rhs)) add(e.lhs);
      break;
    default: break;
  }
}

}  // namespace

std::vector<std::string> expr_literals(const Expr& e, std::string_view field) {
  std::vector<std::string> out;
  collect_literals(e, field, out);
  return out;
}

bool eval_expr_traced(const Expr& e, const Event& ev, std::vector<ExprStep>& steps) { return traced(e, ev, steps, 0); }

std::vector<std::string> expr_fields(const Expr& e) {
  std::vector<std::string> out;
  collect_fields(e, out);
  return out;
}

std::string expr_to_string(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::And:
    case Expr::Kind::Or: {
      std::string sep = e.kind == Expr::Kind::And ? " and " : " or ";
      std::string out = "(";
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (i > 0) out += sep;
        out += expr_to_string(*e.children[i]);
      }
      return out + ")";
    }
    case Expr::Kind::Not: return "(not " + expr_to_string(*e.children[0]) + ")";
    case Expr::Kind::BoolField: return operand_text(e.lhs);
    case Expr::Kind::Compare: return operand_text(e.lhs) + " " + std::string(op_name(e.op)) + " " + operand_text(e.rhs);
    case Expr::Kind::InValues: {
      std::string out = operand_text(e.lhs) + " in ";
      if (!e.list_name.empty()) return out + "@" + e.list_name;
      out += "(";
      for (size_t i = 0; i < e.values.size(); ++i) {
        if (i > 0) out += ", ";
        out += operand_text(e.values[i]);
      }
      return out + ")";
    }
    case Expr::Kind::InListField: return operand_text(e.lhs) + " in " + operand_text(e.rhs);
  }
  return "";
}

}  // namespace cb
