// Policy loading in falco's phases:
//
//   1. read    every file with yaml-cpp into raw rules and lists that keep
//              their YAML marks; structure errors (types, unknown keys) here;
//   2. lists   expanded across all files (@references, cycles);
//   3. compile ${VARS}, action groups, globs and `when:` expressions.
//
// Every error is collected with its file:line:col; nothing stops at the first.
#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "base/paths.h"
#include "policy/policy.h"
#include "policy/sha256.h"
#include "policy/suggest.h"

namespace cb {
namespace {

// A hostile policy must not exhaust the stack or memory through lists.
constexpr int kMaxListDepth = 32;
constexpr size_t kMaxListItems = 100000;

const std::vector<std::string_view> kTopKeys = {"version", "default", "lists", "identities", "rules", "keep"};
const std::vector<std::string_view> kRuleKeys = {"id",      "action", "path",     "host",    "port",
                                                 "process", "when",   "decision", "message", "keep"};
const std::vector<std::string_view> kKeepKeys = {"paths", "except"};
const std::vector<std::string_view> kDecisions = {"allow", "deny", "ask", "log"};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string join(const std::vector<std::string_view>& words, std::string_view last_sep) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? last_sep : ", ";
    out += words[i];
  }
  return out;
}

// The suggestion for a misspelt word, or the list of what is allowed.
std::string suggest_or_list(std::string_view word, const std::vector<std::string_view>& allowed) {
  std::string s = did_you_mean(word, allowed);
  if (!s.empty()) return s;
  return " (expected " + join(allowed, " or ") + ")";
}

bool valid_id(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != ':' && c != '-') return false;
  return true;
}

bool valid_list_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') return false;
  return true;
}

bool valid_var_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// The actions whose objects are of kind `k`.
ActionMask actions_of_kind(ObjectKind k) {
  ActionMask m = 0;
  for (int i = 0; i < static_cast<int>(Action::Count); ++i)
    if (action_object(static_cast<Action>(i)) == k) m |= bit(static_cast<Action>(i));
  return m;
}

// "tcp:", "udp:", "unix:" ...: the patterns of net.* rules.
bool looks_like_address(std::string_view p) {
  size_t colon = p.find(':');
  if (colon == 0 || colon == std::string_view::npos) return false;
  for (size_t i = 0; i < colon; ++i)
    if (!std::islower(static_cast<unsigned char>(p[i])) && !std::isdigit(static_cast<unsigned char>(p[i])))
      return false;
  return true;
}

std::string normalize_path_pattern(const std::string& p) {
  std::string out;
  out.reserve(p.size());
  for (char c : p)
    if (!(c == '/' && !out.empty() && out.back() == '/')) out += c;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

struct FileInput {
  std::string name;
  std::string text;
  std::optional<std::string> read_error;
};

struct Scalar {
  std::string value;
  YAML::Mark mark;
  size_t file = 0;
};

struct RawRule {
  size_t file = 0;
  YAML::Mark mark;
  std::optional<Scalar> id, when, decision, message, keep;
  std::optional<std::vector<Scalar>> actions, paths, processes, hosts, ports;
  std::map<std::string, YAML::Mark> keys;  // written, even when the value was rejected
};

struct RawList {
  std::string name;
  YAML::Mark mark;  // of the name
  size_t file = 0;
  std::vector<Scalar> items;
};

struct Diag {
  size_t file = 0;
  size_t seq = 0;
  Diagnostic d;
};

Rule guard_rule(std::string id, Action a, std::string message) {
  Rule r;
  r.id = std::move(id);
  r.actions = bit(a);
  r.decision = Decision::Deny;
  r.message = std::move(message);
  r.kind = Builtin::Guard;
  return r;
}

class Loader {
 public:
  explicit Loader(const LoadOptions& opts) : opts_(opts) {}

  LoadResult load(const std::vector<FileInput>& inputs) {
    for (const auto& in : inputs) {
      size_t f = files_.size();
      File file;
      file.name = in.name;
      file.text = in.text;
      // yaml-cpp skips a byte order mark without counting it in Mark::pos.
      if (file.text.starts_with("\xEF\xBB\xBF")) file.text.erase(0, 3);
      files_.push_back(std::move(file));
      if (in.read_error) {
        add(f, SourceLoc{in.name, 0, 0}, *in.read_error);
        continue;
      }
      read_file(f);
    }
    expand_lists();
    Policy policy;
    compile_rules(policy);
    compile_keep(policy);

    LoadResult result;
    if (!diags_.empty()) {
      std::stable_sort(diags_.begin(), diags_.end(), [](const Diag& a, const Diag& b) {
        if (a.file != b.file) return a.file < b.file;
        if (a.d.loc.line != b.d.loc.line) return a.d.loc.line < b.d.loc.line;
        if (a.d.loc.col != b.d.loc.col) return a.d.loc.col < b.d.loc.col;
        return a.seq < b.seq;
      });
      for (auto& d : diags_) result.errors.push_back(std::move(d.d));
      return result;
    }

    for (const auto& f : files_)
      if (f.default_decision) policy.default_decision = *f.default_decision;
    Sha256 h;
    for (const auto& in : inputs) {
      policy.files.push_back(in.name);
      policy.sources.emplace_back(in.name, in.text);
      h.update(in.name);
      h.update(std::string_view("\0", 1));
      h.update(in.text);
      h.update(std::string_view("\0", 1));
    }
    for (const auto& [k, v] : opts_.vars) h.update(k + "=" + v + "\n");
    policy.hash = h.finish_hex();
    policy.vars = opts_.vars;
    if (opts_.add_guards) add_guards(policy);
    if (opts_.resolve_identities) resolve_identities(policy);
    index_rules(policy);
    result.policy = std::move(policy);
    return result;
  }

 private:
  struct File {
    std::string name;
    std::string text;  // as parsed (without a byte order mark)
    std::optional<Decision> default_decision;
  };

  // ------------------------------------------------------------ diagnostics

  void add(size_t file, SourceLoc loc, std::string message) {
    diags_.push_back(Diag{file, diags_.size(), Diagnostic{std::move(loc), std::move(message)}});
  }

  SourceLoc at(size_t file, const YAML::Mark& m) const {
    if (m.is_null() || m.line < 0) return SourceLoc{files_[file].name, 1, 1};
    return SourceLoc{files_[file].name, m.line + 1, m.column + 1};
  }

  void error(size_t file, const YAML::Mark& m, std::string message) { add(file, at(file, m), std::move(message)); }

  // Where byte `offset` of a scalar's value was written.  The value's
  // non-blank bytes appear in the source in the same order whatever the
  // style (plain, quoted, block, folded); only blanks and escapes differ.  So
  // find the last non-blank byte at or before `offset` in the value, walk the
  // source from the scalar's mark to the same non-blank byte (an escape
  // counts as one), and add the distance still left on that line.
  SourceLoc at_offset(const Scalar& s, size_t offset) const {
    const std::string& src = files_[s.file].text;
    auto fallback = at(s.file, s.mark);
    if (s.mark.is_null() || s.mark.pos < 0 || static_cast<size_t>(s.mark.pos) >= src.size()) return fallback;
    size_t pos = static_cast<size_t>(s.mark.pos);
    int line = s.mark.line, col = s.mark.column;
    auto step = [&] {
      if (src[pos] == '\n') {
        ++line;
        col = 0;
      } else {
        ++col;
      }
      ++pos;
    };
    auto loc = [&](int l, int c) { return SourceLoc{files_[s.file].name, l + 1, c + 1}; };
    // A tag or an anchor before the scalar ("!!str ", "&name ").
    while (pos < src.size() && (src[pos] == '!' || src[pos] == '&')) {
      while (pos < src.size() && !is_space(src[pos])) step();
      while (pos < src.size() && is_space(src[pos])) step();
    }
    if (pos >= src.size()) return fallback;
    char style = src[pos];
    if (style == '|' || style == '>') {
      while (pos < src.size() && src[pos] != '\n') step();  // the header and its comment
      if (pos < src.size()) step();
      while (pos < src.size() && is_space(src[pos])) step();  // the indentation
    } else if (style == '"' || style == '\'') {
      step();
    } else {
      style = 0;
    }

    const std::string& v = s.value;
    offset = std::min(offset, v.size());
    size_t anchor = offset;  // the value byte to find in the source
    if (anchor == v.size() || is_space(v[anchor])) {
      while (anchor > 0 && is_space(v[anchor - 1])) --anchor;
      if (anchor == 0) return loc(line, col + static_cast<int>(offset));  // only blanks before
      --anchor;                                                           // the last non-blank byte before `offset`
    }
    size_t target = 0;
    for (size_t i = 0; i < anchor; ++i) target += !is_space(v[i]);

    size_t seen = 0;
    while (pos < src.size()) {
      char c = src[pos];
      size_t len = 1;
      bool blank = is_space(c);
      if (style == '"') {
        if (c == '"') break;
        if (c == '\\' && pos + 1 < src.size()) {
          char e = src[pos + 1];
          len = e == 'x' ? 4 : e == 'u' ? 6 : e == 'U' ? 10 : 2;
          blank = e == 't' || e == 'n' || e == 'r' || e == ' ' || e == '\t' || e == '\n' || e == '\r';
        }
      } else if (style == '\'') {
        if (c == '\'') {
          if (pos + 1 < src.size() && src[pos + 1] == '\'')
            len = 2;
          else
            break;
        }
      }
      if (!blank) {
        if (seen == target) {
          if (anchor == offset) return loc(line, col);
          return loc(line, col + static_cast<int>(len + (offset - anchor - 1)));
        }
        ++seen;
      }
      for (size_t i = 0; i < len && pos < src.size(); ++i) step();
    }
    return fallback;
  }

  // ------------------------------------------------------------ phase 1: read

  std::optional<Scalar> scalar(size_t f, const YAML::Node& n, const YAML::Mark& key_mark, std::string_view what) {
    if (!n.IsScalar()) {
      error(f, n.IsNull() ? key_mark : n.Mark(), std::string(what));
      return std::nullopt;
    }
    return Scalar{n.Scalar(), n.Mark(), f};
  }

  std::optional<std::vector<Scalar>> strings(size_t f, const YAML::Node& n, const YAML::Mark& key_mark,
                                             std::string_view key) {
    std::string what = "'" + std::string(key) + "' must be a string or a list of strings";
    if (n.IsScalar()) return std::vector<Scalar>{Scalar{n.Scalar(), n.Mark(), f}};
    if (!n.IsSequence()) {
      error(f, n.IsNull() ? key_mark : n.Mark(), what);
      return std::nullopt;
    }
    if (n.size() == 0) {
      std::string hint = key == "path"      ? "; leave it out to match any path"
                         : key == "process" ? "; leave it out to match any process"
                         : key == "host"    ? "; leave it out to match any host"
                         : key == "port"    ? "; leave it out to match any port"
                                            : "";
      error(f, n.Mark(), "'" + std::string(key) + "' is an empty list" + hint);
      return std::nullopt;
    }
    std::vector<Scalar> out;
    bool ok = true;
    for (const auto& item : n) {
      if (!item.IsScalar()) {
        error(f, item.IsNull() ? n.Mark() : item.Mark(), what);
        ok = false;
        continue;
      }
      out.push_back(Scalar{item.Scalar(), item.Mark(), f});
    }
    if (!ok) return std::nullopt;
    return out;
  }

  // Calls fn(key, key_mark, value) for each entry; reports non-scalar and
  // duplicate keys (yaml-cpp keeps duplicates; a second 'path' is a mistake).
  template <typename Fn>
  void each_entry(size_t f, const YAML::Node& map, Fn fn) {
    std::map<std::string, YAML::Mark> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      YAML::Node k = it->first;  // a copy: `it->` yields a temporary
      if (!k.IsScalar()) {
        error(f, k.Mark(), "keys must be plain names");
        continue;
      }
      auto [prev, inserted] = seen.emplace(k.Scalar(), k.Mark());
      if (!inserted) {
        auto first = at(f, prev->second);
        error(f, k.Mark(),
              "duplicate key '" + k.Scalar() + "' (first at " + std::to_string(first.line) + ":" +
                  std::to_string(first.col) + ")");
        continue;
      }
      fn(k.Scalar(), k.Mark(), it->second);
    }
  }

  void read_file(size_t f) {
    YAML::Node root;
    try {
      root = YAML::Load(files_[f].text);
    } catch (const YAML::Exception& e) {
      error(f, e.mark, "invalid YAML: " + e.msg);
      return;
    }
    if (root.IsNull()) {
      add(f, SourceLoc{files_[f].name, 1, 1}, "empty policy; expected at least 'version: 1'");
      return;
    }
    if (!root.IsMap()) {
      error(f, root.Mark(), "a policy must be a mapping with 'version', 'default', 'lists' and 'rules'");
      return;
    }
    bool have_version = false;
    each_entry(f, root, [&](const std::string& key, const YAML::Mark& km, const YAML::Node& v) {
      if (key == "version") {
        have_version = true;
        auto s = scalar(f, v, km, "'version' must be a number");
        if (s && s->value != "1")
          error(f, s->mark, "unsupported version '" + s->value + "'; this cottonbox reads version 1");
      } else if (key == "default") {
        auto s = scalar(f, v, km, "'default' must be one of allow, deny, ask or log");
        if (!s) return;
        if (auto d = parse_decision(s->value))
          files_[f].default_decision = *d;
        else
          error(f, s->mark, "unknown decision '" + s->value + "'" + suggest_or_list(s->value, kDecisions));
      } else if (key == "lists") {
        read_lists(f, v);
      } else if (key == "identities") {
        read_identities(f, v);
      } else if (key == "rules") {
        read_rules(f, v);
      } else if (key == "keep") {
        read_keep(f, km, v);
      } else {
        error(f, km, "unknown key '" + key + "'" + suggest_or_list(key, kTopKeys));
      }
    });
    if (!have_version) add(f, SourceLoc{files_[f].name, 1, 1}, "missing 'version: 1'");
  }

  void read_lists(size_t f, const YAML::Node& n) {
    if (n.IsNull()) return;  // every list commented out
    if (!n.IsMap()) {
      error(f, n.Mark(), "'lists' must map list names to lists of strings");
      return;
    }
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node k = it->first;  // a copy: `it->` yields a temporary
      YAML::Node v = it->second;
      if (!k.IsScalar()) {
        error(f, k.Mark(), "list names must be plain names");
        continue;
      }
      const std::string& name = k.Scalar();
      if (!valid_list_name(name)) {
        error(f, k.Mark(), "invalid list name '" + name + "' (use letters, digits, '_', '.' and '-')");
        continue;
      }
      RawList list{name, k.Mark(), f, {}};
      if (!v.IsSequence()) {
        error(f, v.IsNull() ? k.Mark() : v.Mark(), "list '" + name + "' must be a list of strings");
        continue;
      }
      for (const auto& item : v) {
        if (!item.IsScalar()) {
          error(f, item.IsNull() ? v.Mark() : item.Mark(), "list '" + name + "' must be a list of strings");
          continue;
        }
        list.items.push_back(Scalar{item.Scalar(), item.Mark(), f});
      }
      auto prev = lists_.find(name);
      if (prev != lists_.end()) {
        auto first = at(prev->second.file, prev->second.mark);
        error(f, k.Mark(),
              "list '" + name + "' already defined at " + first.file + ":" + std::to_string(first.line) + ":" +
                  std::to_string(first.col));
        continue;
      }
      // Kept even with a bad item, so that its uses do not report it unknown.
      lists_.emplace(name, std::move(list));
    }
  }

  // identities: {git: [/usr/bin/git, "/usr/lib/git-core/*"]}
  void read_identities(size_t f, const YAML::Node& n) {
    if (n.IsNull()) return;
    if (!n.IsMap()) {
      error(f, n.Mark(), "'identities' must map names to lists of executable paths");
      return;
    }
    for (auto it = n.begin(); it != n.end(); ++it) {
      YAML::Node k = it->first;
      YAML::Node v = it->second;
      if (!k.IsScalar() || !valid_list_name(k.Scalar())) {
        error(f, k.Mark(), "an identity's name must be a plain name (letters, digits, '_', '.' and '-')");
        continue;
      }
      const std::string& name = k.Scalar();
      if (identities_.count(name)) {
        error(f, k.Mark(), "identity '" + name + "' already defined");
        continue;
      }
      auto paths = strings(f, v, k.Mark(), "identities: " + name);
      if (!paths) continue;
      std::vector<std::string> list;
      for (const auto& p : *paths) {
        if (!p.value.starts_with("/")) {
          error(f, p.mark, "identity '" + name + "': '" + p.value + "' must be an absolute path");
          continue;
        }
        size_t slash = p.value.rfind('/');
        if (p.value.find_first_of("*?[") < slash) {
          error(f, p.mark, "identity '" + name + "': wildcards may appear only in the last component");
          continue;
        }
        list.push_back(p.value);
      }
      identities_.emplace(name, std::move(list));
    }
  }

  // Every name a rule trusts, resolved to files (policy/identity.h).
  void resolve_identities(Policy& p) {
    std::vector<std::string> names;
    auto add = [&](const std::string& n) {
      if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    };
    for (const auto& [n, paths] : identities_) add(n);
    for (const auto& r : p.rules) {
      for (const auto& n : r.processes) add(n);
      if (!r.when) continue;
      for (const auto& n : expr_literals(*r.when, "proc.name")) add(n);
      for (const auto& n : expr_literals(*r.when, "proc.ancestors")) add(n);
    }
    for (const auto& n : names) {
      auto it = identities_.find(n);
      size_t found = it != identities_.end() ? resolve_identity_paths(p.identities, n, it->second)
                                             : resolve_identity_name(p.identities, n);
      if (found == 0) p.identities.unresolved.push_back(n);
    }
  }

  // keep: {paths: [...], except: [...]}: where undo keeps by default.
  // A later file's `paths` replaces an earlier one's; `except` adds up.
  void read_keep(size_t f, const YAML::Mark& km, const YAML::Node& n) {
    if (!n.IsMap()) {
      error(f, n.IsNull() ? km : n.Mark(), "'keep' must be a mapping with 'paths' and/or 'except'");
      return;
    }
    each_entry(f, n, [&](const std::string& key, const YAML::Mark& k, const YAML::Node& v) {
      if (key == "paths") {
        if (auto l = strings(f, v, k, key)) keep_paths_ = std::move(*l);
      } else if (key == "except") {
        if (auto l = strings(f, v, k, key)) keep_except_.insert(keep_except_.end(), l->begin(), l->end());
      } else {
        error(f, k, "unknown key '" + key + "' in 'keep'" + suggest_or_list(key, kKeepKeys));
      }
    });
  }

  void read_rules(size_t f, const YAML::Node& n) {
    if (n.IsNull()) return;  // every rule commented out
    if (!n.IsSequence()) {
      error(f, n.Mark(), "'rules' must be a list of rules");
      return;
    }
    for (const auto& item : n) {
      if (!item.IsMap()) {
        error(f, item.IsNull() ? n.Mark() : item.Mark(),
              "a rule must be a mapping with 'id', 'action', 'decision' and optionally 'path', "
              "'host', 'port', 'process', 'when' and 'message'");
        continue;
      }
      RawRule r;
      r.file = f;
      r.mark = item.Mark();
      each_entry(f, item, [&](const std::string& key, const YAML::Mark& km, const YAML::Node& v) {
        r.keys.emplace(key, km);
        if (key == "id")
          r.id = scalar(f, v, km, "'id' must be a string");
        else if (key == "action")
          r.actions = strings(f, v, km, key);
        else if (key == "path")
          r.paths = strings(f, v, km, key);
        else if (key == "host")
          r.hosts = strings(f, v, km, key);
        else if (key == "port")
          r.ports = strings(f, v, km, key);
        else if (key == "process")
          r.processes = strings(f, v, km, key);
        else if (key == "when")
          r.when = scalar(f, v, km, "'when' must be a string (an expression)");
        else if (key == "decision")
          r.decision = scalar(f, v, km, "'decision' must be one of allow, deny, ask or log");
        else if (key == "message")
          r.message = scalar(f, v, km, "'message' must be a string");
        else if (key == "keep")
          r.keep = scalar(f, v, km, "'keep' must be true or false");
        else
          error(f, km, "unknown key '" + key + "' in rule" + suggest_or_list(key, kRuleKeys));
      });
      rules_.push_back(std::move(r));
    }
  }

  // ------------------------------------------------------------ phase 2: lists

  void expand_lists() {
    for (const auto& [name, list] : lists_) {
      if (expanded_.count(name)) continue;
      std::vector<std::string> stack;
      expand_list(name, stack);
    }
  }

  void expand_list(const std::string& name, std::vector<std::string>& stack) {
    const RawList& list = lists_.at(name);
    stack.push_back(name);
    std::vector<std::string> out;
    for (const auto& item : list.items) {
      if (!item.value.starts_with("@")) {
        out.push_back(item.value);
        continue;
      }
      std::string ref = item.value.substr(1);
      if (!lists_.count(ref)) {
        error(item.file, item.mark, "unknown list '@" + ref + "'" + did_you_mean(ref, list_names()));
        continue;
      }
      auto cycle_start = std::find(stack.begin(), stack.end(), ref);
      if (cycle_start != stack.end()) {
        std::string chain;
        for (auto it = cycle_start; it != stack.end(); ++it) chain += "@" + *it + " -> ";
        error(item.file, item.mark, "lists include each other in a cycle: " + chain + "@" + ref);
        continue;
      }
      if (static_cast<int>(stack.size()) >= kMaxListDepth) {
        error(item.file, item.mark, "lists nest too deeply (more than " + std::to_string(kMaxListDepth) + " levels)");
        continue;
      }
      if (!expanded_.count(ref)) expand_list(ref, stack);
      const auto& sub = expanded_[ref];
      if (out.size() + sub.size() > kMaxListItems) {
        error(item.file, item.mark, "list '" + name + "' has more than " + std::to_string(kMaxListItems) + " items");
        break;
      }
      out.insert(out.end(), sub.begin(), sub.end());
    }
    stack.pop_back();
    expanded_[name] = std::move(out);
  }

  // A rule's entry `s`: itself, or the items of the list it names with
  // `@name`; nothing (the error reported) for a list no one defined.
  std::optional<std::vector<std::string>> entries_of(const Scalar& s, size_t file) {
    if (!s.value.starts_with("@")) return std::vector<std::string>{s.value};
    std::string ref = s.value.substr(1);
    auto it = expanded_.find(ref);
    if (it == expanded_.end()) {
      error(file, s.mark, "unknown list '@" + ref + "'" + did_you_mean(ref, list_names()));
      return std::nullopt;
    }
    return it->second;
  }

  std::vector<std::string_view> list_names() const {
    std::vector<std::string_view> v;
    for (const auto& [name, list] : lists_) v.push_back(name);
    return v;
  }

  // ------------------------------------------------------------ phase 3: compile

  // ${NAME} from opts.vars.  For globs the values are escaped so that a
  // directory named "a[1]" is matched as written.
  std::optional<std::string> expand_vars(const Scalar& s, bool escape_glob) {
    const std::string& v = s.value;
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != '$' || i + 1 >= v.size() || v[i + 1] != '{') {
        out += v[i];
        continue;
      }
      size_t close = v.find('}', i + 2);
      if (close == std::string::npos) {
        add(s.file, at_offset(s, i), "unterminated '${' (write ${NAME})");
        return std::nullopt;
      }
      std::string name = v.substr(i + 2, close - i - 2);
      if (!valid_var_name(name)) {
        add(s.file, at_offset(s, i), "invalid variable name '${" + name + "}'");
        return std::nullopt;
      }
      auto it = opts_.vars.find(name);
      if (it == opts_.vars.end()) {
        std::vector<std::string_view> names;
        for (const auto& [k, val] : opts_.vars) names.push_back(k);
        std::string hint = did_you_mean(name, names);
        if (hint.empty()) hint = " (set it with --var " + name + "=VALUE)";
        add(s.file, at_offset(s, i), "undefined variable '${" + name + "}'" + hint);
        return std::nullopt;
      }
      out += escape_glob ? Glob::escape(it->second) : it->second;
      i = close;
    }
    return out;
  }

  std::optional<Glob> compile_path(const Scalar& s, ActionMask actions) {
    auto expanded = expand_vars(s, true);
    if (!expanded) return std::nullopt;
    std::string text = *expanded;
    // What the rule's actions name decides how a pattern is written: paths
    // are absolute (or start with '*'), addresses have a scheme, and the
    // kernel's facility names (mount points, namespace kinds) are free.
    bool takes_address = false, takes_name = false;
    for (int i = 0; i < static_cast<int>(Action::Count); ++i) {
      if (!(actions & bit(static_cast<Action>(i)))) continue;
      ObjectKind k = action_object(static_cast<Action>(i));
      takes_address |= k == ObjectKind::Address;
      takes_name |= k == ObjectKind::Facility;
    }
    bool takes_path = actions & ~(actions_of_kind(ObjectKind::Address) | actions_of_kind(ObjectKind::Facility));
    // Code run from a memfd is named as the kernel names it (memfd:NAME).
    const bool memfd = (actions & bit(Action::ProcExec)) && text.starts_with("memfd:");
    if (text.starts_with("/") || text.starts_with("*")) {
      text = normalize_path_pattern(text);
    } else if (!(takes_address && looks_like_address(text)) && !takes_name && !memfd) {
      if (takes_address && !takes_path)
        error(s.file, s.mark, "'" + text + "' is not an address pattern (tcp:HOST:PORT, udp:HOST:PORT or unix:PATH)");
      else
        error(s.file, s.mark,
              "path '" + text + "' must be absolute or start with '*'" +
                  (text.starts_with("~")             ? " (write ${HOME} for '~')"
                   : actions & bit(Action::ProcExec) ? " (or memfd:NAME for code run from a memfd)"
                                                     : ""));
      return std::nullopt;
    }
    auto g = Glob::compile(text);
    if (!g) {
      // Point at the byte when expansion and normalisation changed nothing.
      SourceLoc loc = text == s.value ? at_offset(s, static_cast<size_t>(g.error().err)) : at(s.file, s.mark);
      add(s.file, loc, "bad pattern '" + text + "': " + g.error().message);
      return std::nullopt;
    }
    return std::move(g.value());
  }

  void compile_rules(Policy& policy) {
    std::map<std::string, SourceLoc> ids;
    for (const auto& r : rules_) {
      Rule out;
      bool ok = true;
      out.loc = at(r.file, r.mark);
      std::string label = "rule";
      if (r.id) {
        out.id = r.id->value;
        label = "rule '" + out.id + "'";
        SourceLoc loc = at(r.file, r.id->mark);
        if (!valid_id(out.id)) {
          error(r.file, r.id->mark, "invalid rule id '" + out.id + "' (use letters, digits, '_', '.', ':' and '-')");
          ok = false;
        } else if (out.id.starts_with("cottonbox:")) {
          error(r.file, r.id->mark, "rule ids starting with 'cottonbox:' are reserved for built-in rules");
          ok = false;
        } else if (auto [prev, inserted] = ids.emplace(out.id, loc); !inserted) {
          error(r.file, r.id->mark,
                "rule id '" + out.id + "' already defined at " + prev->second.file + ":" +
                    std::to_string(prev->second.line) + ":" + std::to_string(prev->second.col));
          ok = false;
        }
      } else {
        if (!r.keys.count("id")) error(r.file, r.mark, "rule has no 'id'");
        ok = false;
      }

      if (r.actions) {
        for (const auto& a : *r.actions) {
          ActionMask m = parse_action_or_group(a.value);
          if (m == 0) {
            error(r.file, a.mark, "unknown action '" + a.value + "'" + did_you_mean(a.value, action_vocabulary()));
            ok = false;
          }
          out.actions |= m;
        }
      } else {
        if (!r.keys.count("action")) error(r.file, r.mark, label + " has no 'action'");
        ok = false;
      }

      if (r.decision) {
        if (auto d = parse_decision(r.decision->value)) {
          out.decision = *d;
        } else {
          error(r.file, r.decision->mark,
                "unknown decision '" + r.decision->value + "'" + suggest_or_list(r.decision->value, kDecisions));
          ok = false;
        }
      } else {
        if (!r.keys.count("decision")) error(r.file, r.mark, label + " has no 'decision'");
        ok = false;
      }

      if (r.paths) {
        for (const auto& p : *r.paths) {
          // A named list of patterns: the policy's data, like `process:` lists.
          auto items = entries_of(p, r.file);
          if (!items) {
            ok = false;
            continue;
          }
          for (auto& item : *items) {
            if (auto g = compile_path(Scalar{std::move(item), p.mark, p.file}, out.actions))
              out.paths.push_back(std::move(*g));
            else
              ok = false;
          }
        }
      } else if (r.keys.count("path")) {
        ok = false;
      }

      ok &= compile_net(r, out);

      if (r.processes) {
        for (const auto& p : *r.processes) {
          auto names = entries_of(p, r.file);
          if (!names) {
            ok = false;
            continue;
          }
          for (auto& n : *names) {
            if (n.empty() || n.find('/') != std::string::npos) {
              error(r.file, p.mark,
                    "process '" + n +
                        "' must be an identity's name: an executable's name in the system's "
                        "directories or one declared under 'identities' (no '/')");
              ok = false;
              continue;
            }
            out.processes.push_back(std::move(n));
          }
        }
      } else if (r.keys.count("process")) {
        ok = false;
      }

      if (r.when) {
        out.when_text = r.when->value;
        auto parsed = parse_expr(out.when_text, expanded_, opts_.vars, &taint_names_);
        if (!parsed.expr) {
          add(r.file, at_offset(*r.when, parsed.error.offset), parsed.error.message);
          ok = false;
        } else {
          out.when = std::move(parsed.expr);
        }
      } else if (r.keys.count("when")) {
        ok = false;
      }

      if (r.message) {
        if (auto m = expand_vars(*r.message, false))
          out.message = std::move(*m);
        else
          ok = false;
      }

      if (r.keep) {
        if (r.keep->value == "true") {
          out.keep = true;
        } else if (r.keep->value == "false") {
          out.keep = false;
        } else {
          error(r.file, r.keep->mark, "'keep' must be true or false, not '" + r.keep->value + "'");
          ok = false;
        }
      }

      if (ok) policy.rules.push_back(std::move(out));
    }
    compile_taints(policy);
  }

  // `host:` and `port:`: only for network actions, whose events carry an
  // address.
  bool compile_net(const RawRule& r, Rule& out) {
    bool ok = true;
    for (const char* key : {"host", "port"}) {
      auto k = r.keys.find(key);
      if (k == r.keys.end() || out.actions == 0) continue;
      ActionMask other = out.actions & ~actions_of_kind(ObjectKind::Address);
      if (other == 0) continue;
      std::vector<std::string_view> names;
      for (int i = 0; i < static_cast<int>(Action::Count); ++i)
        if (other & bit(static_cast<Action>(i))) names.push_back(action_name(static_cast<Action>(i)));
      std::string list = names.size() > 3 ? join({names[0], names[1], names[2]}, ", ") + ", ..." : join(names, " and ");
      error(r.file, k->second,
            "'" + std::string(key) +
                "' applies only to network actions (net.connect, net.send, net.bind, "
                "net.listen); this rule also names " +
                list);
      ok = false;
    }
    if (r.hosts) {
      for (const auto& h : *r.hosts) {
        if (h.value.starts_with("@")) {
          ok &= add_host_list(h, out);
          continue;
        }
        auto expanded = expand_vars(h, false);
        if (!expanded) {
          ok = false;
          continue;
        }
        NetParseError e;
        if (auto p = parse_host_pattern(*expanded, &e)) {
          out.hosts.push_back(std::move(*p));
        } else {
          add(h.file, *expanded == h.value ? at_offset(h, e.offset) : at(h.file, h.mark), e.message);
          ok = false;
        }
      }
    } else if (r.keys.count("host")) {
      ok = false;
    }
    if (r.ports) {
      for (const auto& p : *r.ports) {
        NetParseError e;
        if (auto range = parse_port_range(p.value, &e)) {
          out.ports.push_back(*range);
        } else {
          add(p.file, at_offset(p, e.offset), e.message);
          ok = false;
        }
      }
    } else if (r.keys.count("port")) {
      ok = false;
    }
    return ok;
  }

  // host: ["@registries"]: every item of the list is a host pattern.
  bool add_host_list(const Scalar& h, Rule& out) {
    std::string ref = h.value.substr(1);
    auto it = expanded_.find(ref);
    if (it == expanded_.end()) {
      error(h.file, h.mark, "unknown list '@" + ref + "'" + did_you_mean(ref, list_names()));
      return false;
    }
    bool ok = true;
    for (const auto& item : it->second) {
      NetParseError e;
      if (auto p = parse_host_pattern(item, &e)) {
        out.hosts.push_back(std::move(*p));
      } else {
        error(h.file, h.mark, "list '@" + ref + "' has '" + item + "': " + e.message);
        ok = false;
      }
    }
    return ok;
  }

  // The lists named in read(@name): path patterns, compiled like `path:`.
  void compile_taints(Policy& policy) {
    for (const auto& name : taint_names_) {
      TaintList t;
      t.name = name;
      std::set<std::string> seen;
      add_taint_items(name, t, seen);
      policy.taints.push_back(std::move(t));
    }
  }

  void add_taint_items(const std::string& name, TaintList& t, std::set<std::string>& seen) {
    if (!seen.insert(name).second) return;  // a cycle, reported by expand_lists()
    auto it = lists_.find(name);
    if (it == lists_.end()) return;
    for (const auto& item : it->second.items) {
      if (item.value.starts_with("@")) {
        add_taint_items(item.value.substr(1), t, seen);
        continue;
      }
      auto expanded = expand_vars(item, true);
      if (!expanded) continue;
      std::string text = *expanded;
      if (!text.starts_with("/") && !text.starts_with("*")) {
        error(item.file, item.mark,
              "list '" + t.name + "' is tested with read(@" + t.name + "), so its items are path patterns; '" + text +
                  "' must be absolute or start with '*'" + (text.starts_with("~") ? " (write ${HOME} for '~')" : ""));
        continue;
      }
      if (text.starts_with("/")) text = normalize_path_pattern(text);
      auto g = Glob::compile(text);
      if (!g) {
        SourceLoc loc =
            text == item.value ? at_offset(item, static_cast<size_t>(g.error().err)) : at(item.file, item.mark);
        add(item.file, loc, "bad pattern '" + text + "': " + g.error().message);
        continue;
      }
      t.paths.push_back(std::move(g.value()));
    }
  }

  // Path globs, each item possibly an @list of them.
  std::vector<Glob> compile_globs(const std::vector<Scalar>& items) {
    std::vector<Glob> out;
    for (const auto& item : items) {
      std::vector<Scalar> expanded;
      if (item.value.starts_with("@")) {
        std::string ref = item.value.substr(1);
        auto it = expanded_.find(ref);
        if (it == expanded_.end()) {
          error(item.file, item.mark, "unknown list '@" + ref + "'" + did_you_mean(ref, list_names()));
          continue;
        }
        for (const auto& v : it->second) expanded.push_back(Scalar{v, item.mark, item.file});
      } else {
        expanded.push_back(item);
      }
      for (const auto& e : expanded)
        if (auto g = compile_path(e, bit(Action::FileDelete))) out.push_back(std::move(*g));
    }
    return out;
  }

  void compile_keep(Policy& policy) {
    if (keep_paths_) {
      policy.keep.paths = compile_globs(*keep_paths_);
    } else {
      // By default: the working directory and $HOME, where an agent's work is.
      for (const char* var : {"CWD", "HOME"}) {
        auto it = opts_.vars.find(var);
        if (it == opts_.vars.end() || it->second.empty() || it->second[0] != '/') continue;
        std::string dir = it->second == "/" ? "" : Glob::escape(it->second);
        if (auto g = Glob::compile(dir + "/**")) policy.keep.paths.push_back(std::move(*g));
      }
    }
    policy.keep.except = compile_globs(keep_except_);
  }

  void add_guards(Policy& p) {
    p.rules.push_back(guard_rule("cottonbox:guard-io_uring", Action::SysIoUring,
                                 "io_uring is denied because it performs file operations the supervisor cannot see; a "
                                 "rule must allow sys.io_uring"));
    // Namespaces and mounts inside them are what sandboxing tools (bwrap,
    // unshare, srt, codex sandbox) are made of.  Names inside them are judged
    // as the host's names of the same objects, and what would undo one of
    // the session's layers (an unmount uncovering a read-only tree, a mount
    // in the session's own namespace, setns into the host's) is refused
    // before any rule (cottonbox:layers): so they are allowed unless a rule
    // says otherwise.
    {
      Rule ns = guard_rule("cottonbox:namespaces", Action::SysNamespace,
                           "new namespaces are allowed: names inside them are judged as the host's names of the same "
                           "objects");
      ns.decision = Decision::Allow;
      p.rules.push_back(std::move(ns));
      Rule mounts = guard_rule("cottonbox:mounts", Action::SysMount,
                               "mounts in a namespace of the process's own are allowed: what would undo a layer of "
                               "the session is refused (cottonbox:layers)");
      mounts.decision = Decision::Allow;
      p.rules.push_back(std::move(mounts));
    }
    p.rules.push_back(guard_rule("cottonbox:guard-trace", Action::ProcTrace,
                                 "tracing another process is denied because a tracer can make it do what the rules "
                                 "forbid; a rule must allow proc.trace"));
    p.rules.push_back(guard_rule("cottonbox:guard-kernel", Action::SysKernel,
                                 "loading kernel modules or BPF programs, kexec, raw I/O ports, raw or packet "
                                 "sockets and writing the kernel's settings (/proc/sys, /sys, cgroups, however "
                                 "mounted) are denied because they reach around every layer of the supervisor; a "
                                 "rule must allow sys.kernel"));
  }

  const LoadOptions& opts_;
  std::vector<File> files_;
  std::vector<Diag> diags_;
  std::map<std::string, RawList> lists_;
  std::map<std::string, std::vector<std::string>> expanded_;
  std::vector<RawRule> rules_;
  std::map<std::string, std::vector<std::string>> identities_;
  std::optional<std::vector<Scalar>> keep_paths_;
  std::vector<Scalar> keep_except_;
  std::vector<std::string> taint_names_;  // read(@name) in any rule, in order met
};

std::optional<std::string> read_whole_file(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string(std::strerror(errno));
  std::string data;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      return std::string(std::strerror(e));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  *out = std::move(data);
  return std::nullopt;
}

// ${HOME}, ${CWD} and every --var naming a path, resolved once: rules then
// name what the supervisor sees, whatever symbolic link led there.
LoadOptions with_canonical_vars(const LoadOptions& opts) {
  LoadOptions out = opts;
  if (!opts.canonical_vars) return out;
  for (auto& [k, v] : out.vars)
    if (v.starts_with("/")) v = canonical_path(v);
  return out;
}

}  // namespace

std::string format_diagnostic(const Diagnostic& d) {
  if (d.loc.line <= 0) return d.loc.file + ": " + d.message;
  return d.loc.file + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": error: " + d.message;
}

LoadResult load_policy_files(const std::vector<std::string>& files, const LoadOptions& opts) {
  std::vector<FileInput> inputs;
  for (const auto& f : files) {
    FileInput in;
    in.name = f;
    if (auto err = read_whole_file(f, &in.text)) in.read_error = "cannot read: " + *err;
    inputs.push_back(std::move(in));
  }
  LoadOptions o = with_canonical_vars(opts);
  return Loader(o).load(inputs);
}

LoadResult load_policy_text(const std::vector<std::pair<std::string, std::string>>& name_and_text,
                            const LoadOptions& opts) {
  std::vector<FileInput> inputs;
  for (const auto& [name, text] : name_and_text) inputs.push_back(FileInput{name, text, {}});
  LoadOptions o = with_canonical_vars(opts);
  return Loader(o).load(inputs);
}

}  // namespace cb
