#include "policy/glob.h"

#include <string.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace cb {
namespace {

// Brace products grow multiplicatively; a pattern needing more alternatives
// than this is a mistake, not a policy.
constexpr size_t kMaxAlternatives = 256;
constexpr size_t npos = std::string_view::npos;

Error glob_error(size_t offset, const std::string& what) {
  return Error{static_cast<int>(offset), what + " at offset " + std::to_string(offset)};
}

using ByteSet = std::array<uint64_t, 4>;

void set_bit(ByteSet& s, uint8_t b) { s[b >> 6] |= uint64_t{1} << (b & 63); }
bool has_bit(const ByteSet& s, uint8_t b) { return (s[b >> 6] >> (b & 63)) & 1; }

// Parses the set opening at p[open] == '['.  On success stores the index of
// the closing ']' in *end.  A ']' right after "[" or "[!" is a member.
std::optional<Error> parse_set(std::string_view p, size_t open, ByteSet* out, size_t* end) {
  ByteSet s{};
  size_t k = open + 1;
  bool negate = k < p.size() && (p[k] == '!' || p[k] == '^');
  if (negate) ++k;
  // One member byte at p[k], honouring a backslash escape.
  auto member = [&](uint8_t* b) -> std::optional<Error> {
    if (p[k] == '\\') {
      if (k + 1 >= p.size()) return glob_error(k, "trailing backslash");
      *b = static_cast<uint8_t>(p[k + 1]);
      k += 2;
    } else {
      *b = static_cast<uint8_t>(p[k]);
      k += 1;
    }
    return std::nullopt;
  };
  for (bool first = true;; first = false) {
    if (k >= p.size()) return glob_error(open, "unclosed '['");
    if (p[k] == ']' && !first) break;
    size_t start = k;
    uint8_t lo = 0;
    if (auto e = member(&lo)) return e;
    if (k + 1 < p.size() && p[k] == '-' && p[k + 1] != ']') {
      ++k;
      uint8_t hi = 0;
      if (auto e = member(&hi)) return e;
      if (hi < lo) return glob_error(start, "invalid range '" + std::string(p.substr(start, k - start)) + "'");
      for (unsigned b = lo; b <= hi; ++b) set_bit(s, static_cast<uint8_t>(b));
    } else {
      set_bit(s, lo);
    }
  }
  if (negate)
    for (auto& w : s) w = ~w;
  s['/' >> 6] &= ~(uint64_t{1} << ('/' & 63));  // a set never crosses components
  if (out) *out = s;
  *end = k;
  return std::nullopt;
}

// Reports the first syntax error; offsets are into the pattern as written.
std::optional<Error> validate(std::string_view p) {
  if (p.empty()) return Error{0, "empty pattern"};
  size_t brace = npos;
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return glob_error(i, "trailing backslash");
      i += 2;
      continue;
    }
    if (c == '[') {
      size_t end = 0;
      if (auto e = parse_set(p, i, nullptr, &end)) return e;
      i = end + 1;
      continue;
    }
    if (c == '{') {
      if (brace != npos) return glob_error(i, "nested '{' (braces do not nest)");
      brace = i;
    } else if (c == '}') {
      brace = npos;  // a '}' outside braces is an ordinary byte
    }
    ++i;
  }
  if (brace != npos) return glob_error(brace, "unclosed '{'");
  return std::nullopt;
}

// Index one past the escape or set starting at p[i], or i + 1.
size_t skip_unit(std::string_view p, size_t i) {
  if (p[i] == '\\') return i + 2;
  if (p[i] == '[') {
    size_t end = 0;
    parse_set(p, i, nullptr, &end);
    return end + 1;
  }
  return i + 1;
}

// Brace expansion of a validated pattern; escapes and sets are copied as written.
Result<std::vector<std::string>> expand_braces(std::string_view p) {
  std::vector<std::string> alts{""};
  for (size_t i = 0; i < p.size();) {
    if (p[i] != '{') {
      size_t next = skip_unit(p, i);
      for (auto& a : alts) a.append(p.substr(i, next - i));
      i = next;
      continue;
    }
    std::vector<std::string> options{""};
    size_t j = i + 1;
    while (p[j] != '}') {
      if (p[j] == ',') {
        options.emplace_back();
        ++j;
        continue;
      }
      size_t next = skip_unit(p, j);
      options.back().append(p.substr(j, next - j));
      j = next;
    }
    if (alts.size() * options.size() > kMaxAlternatives)
      return glob_error(i, "too many alternatives (more than " + std::to_string(kMaxAlternatives) + ")");
    std::vector<std::string> product;
    for (const auto& a : alts)
      for (const auto& o : options) product.push_back(a + o);
    alts = std::move(product);
    i = j + 1;
  }
  return alts;
}

struct Component {
  std::string raw;
  std::string bytes;  // unescaped
  bool wild = false;
};

// Splits a validated pattern at the '/' that are neither escaped nor in a set.
std::vector<Component> components(std::string_view p) {
  std::vector<Component> out(1);
  for (size_t i = 0; i < p.size();) {
    char c = p[i];
    if (c == '/') {
      out.emplace_back();
      ++i;
      continue;
    }
    size_t next = skip_unit(p, i);
    auto& cur = out.back();
    cur.raw.append(p.substr(i, next - i));
    if (c == '\\')
      cur.bytes += p[i + 1];
    else if (c == '*' || c == '?' || c == '[' || c == '{')
      cur.wild = true;
    else
      cur.bytes += c;
    i = next;
  }
  return out;
}

}  // namespace

std::string Glob::escape(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '\\' || c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}' || c == ',') out += '\\';
    out += c;
  }
  return out;
}

Result<Glob> Glob::compile(std::string_view pattern) {
  if (auto e = validate(pattern)) return *e;
  auto alts = expand_braces(pattern);
  if (!alts) return alts.error();

  Glob g;
  g.text_ = std::string(pattern);
  g.alts_ = std::move(alts.value());

  // The literal base and whether the pattern is exactly "<base>/**".
  auto comps = components(pattern);
  size_t k = 0;
  while (k < comps.size() && !comps[k].wild) ++k;
  std::string raw;
  for (size_t i = 0; i < k; ++i) {
    if (i > 0) {
      g.base_ += '/';
      raw += '/';
    }
    g.base_ += comps[i].bytes;
    raw += comps[i].raw;
  }
  if (g.base_.empty() && pattern[0] == '/' && k > 0) g.base_ = "/";
  while (g.base_.size() > 1 && g.base_.back() == '/') g.base_.pop_back();
  bool inner_empty = false;  // "/a//**": an empty component the matcher would demand
  for (size_t i = 1; i < k; ++i) inner_empty |= comps[i].bytes.empty();
  g.whole_tree_ = k >= 1 && k + 1 == comps.size() && comps[k].raw == "**" && !inner_empty && pattern == raw + "/**";

  for (const auto& text : g.alts_) {
    Alternative alt;
    Segment seg;
    std::string seg_raw;
    auto finish = [&] {
      seg.globstar = seg_raw == "**";
      seg.literal = !seg.globstar;
      for (const auto& t : seg.tokens) seg.literal &= t.kind == Token::Byte;
      if (seg.literal)
        for (const auto& t : seg.tokens) seg.bytes += static_cast<char>(t.byte);
      alt.segments.push_back(std::move(seg));
      seg = Segment{};
      seg_raw.clear();
    };
    for (size_t i = 0; i < text.size();) {
      char c = text[i];
      if (c == '/') {
        finish();
        ++i;
        continue;
      }
      size_t next = skip_unit(text, i);
      seg_raw.append(text, i, next - i);
      Token t;
      if (c == '\\') {
        t.byte = static_cast<uint8_t>(text[i + 1]);
      } else if (c == '*') {
        t.kind = Token::Star;
        if (!seg.tokens.empty() && seg.tokens.back().kind == Token::Star) {
          i = next;
          continue;
        }
      } else if (c == '?') {
        t.kind = Token::Any;
      } else if (c == '[') {
        ByteSet s{};
        size_t end = 0;
        parse_set(text, i, &s, &end);
        t.kind = Token::Set;
        t.set = static_cast<uint32_t>(g.sets_.size());
        g.sets_.push_back(s);
      } else {
        t.byte = static_cast<uint8_t>(c);
      }
      seg.tokens.push_back(t);
      i = next;
    }
    finish();

    // Literal leading segments, then the literal head of the first wildcard
    // segment.  "a/**" also matches "a", so no '/' before trailing "**"s.
    size_t s = 0;
    for (; s < alt.segments.size() && alt.segments[s].literal; ++s) {
      if (s > 0) alt.prefix += '/';
      alt.prefix += alt.segments[s].bytes;
    }
    if (s < alt.segments.size()) {
      bool only_globstars = true;
      for (size_t i = s; i < alt.segments.size(); ++i) only_globstars &= alt.segments[i].globstar;
      if (s > 0 && !only_globstars) alt.prefix += '/';
      if (!alt.segments[s].globstar)
        for (const auto& t : alt.segments[s].tokens) {
          if (t.kind != Token::Byte) break;
          alt.prefix += static_cast<char>(t.byte);
        }
    } else {
      alt.exact = true;
    }
    const auto& segs = alt.segments;
    if (segs.size() == 3 && segs[0].globstar && segs[1].literal && segs[2].globstar) {
      g.any_component_.push_back(segs[1].bytes);
      continue;
    }
    if (!alt.exact) {
      // Cheap necessary conditions, so that most paths are turned away
      // without walking their components: the last segment's literal tail
      // ends every match, and every literal run past the prefix lies
      // somewhere in it.
      if (!segs.back().globstar)
        for (auto t = segs.back().tokens.rbegin(); t != segs.back().tokens.rend(); ++t) {
          if (t->kind != Token::Byte) break;
          alt.suffix.insert(alt.suffix.begin(), static_cast<char>(t->byte));
        }
      for (size_t i = s; i < segs.size(); ++i) {
        if (segs[i].globstar) continue;
        std::string run;
        bool head = i == s;  // segment s's leading run is in the prefix already
        for (const auto& t : segs[i].tokens) {
          if (t.kind == Token::Byte) {
            if (!head) run += static_cast<char>(t.byte);
            continue;
          }
          head = false;
          if (run.size() > alt.needle.size()) alt.needle = run;
          run.clear();
        }
        if (run.size() > alt.needle.size()) alt.needle = run;
      }
      if (alt.needle == alt.suffix) alt.needle.clear();
    }
    g.compiled_.push_back(std::move(alt));
  }
  std::sort(g.any_component_.begin(), g.any_component_.end());
  return g;
}

bool Glob::match_segment(const Segment& seg, std::string_view comp) const {
  if (seg.literal) return comp == seg.bytes;
  const auto& toks = seg.tokens;
  size_t t = 0, c = 0, star_t = npos, star_c = 0;
  while (c < comp.size()) {
    if (t < toks.size()) {
      const Token& tok = toks[t];
      auto b = static_cast<uint8_t>(comp[c]);
      if (tok.kind == Token::Star) {
        star_t = t++;
        star_c = c;
        continue;
      }
      bool ok = tok.kind == Token::Any || (tok.kind == Token::Byte && tok.byte == b) ||
                (tok.kind == Token::Set && has_bit(sets_[tok.set], b));
      if (ok) {
        ++t;
        ++c;
        continue;
      }
    }
    if (star_t == npos) return false;
    t = star_t + 1;
    c = ++star_c;
  }
  while (t < toks.size() && toks[t].kind == Token::Star) ++t;
  return t == toks.size();
}

bool Glob::match_alternative(const Alternative& alt, std::string_view path) const {
  // Components are found by offset so matching allocates nothing; a path of
  // n bytes has components starting at 0 and after each '/'.
  const auto& segs = alt.segments;
  auto comp_end = [&](size_t s) {
    size_t e = path.find('/', s);
    return e == npos ? path.size() : e;
  };
  size_t p = 0, s = 0, star_p = npos, star_s = 0;
  while (s <= path.size()) {
    if (p < segs.size() && segs[p].globstar) {
      star_p = p++;
      star_s = s;
      continue;
    }
    size_t e = comp_end(s);
    if (p < segs.size() && match_segment(segs[p], path.substr(s, e - s))) {
      ++p;
      s = e + 1;
      continue;
    }
    if (star_p == npos) return false;
    // Let the last "**" swallow one more component and retry after it.
    p = star_p + 1;
    star_s = comp_end(star_s) + 1;
    s = star_s;
  }
  while (p < segs.size() && segs[p].globstar) ++p;
  return p == segs.size();
}

bool Glob::match(std::string_view path) const {
  if (!any_component_.empty()) {
    for (size_t s = 0; s <= path.size();) {
      size_t e = path.find('/', s);
      if (e == npos) e = path.size();
      if (std::binary_search(any_component_.begin(), any_component_.end(), path.substr(s, e - s), std::less<>()))
        return true;
      s = e + 1;
    }
  }
  for (const auto& alt : compiled_) {
    if (!path.starts_with(alt.prefix)) continue;
    if (alt.exact) {
      if (path.size() == alt.prefix.size()) return true;
      continue;
    }
    if (!path.ends_with(alt.suffix)) continue;
    // The size test first: memmem's pointers must not be null, and an
    // empty path's may be.
    if (!alt.needle.empty() &&
        (path.size() < alt.needle.size() || !memmem(path.data(), path.size(), alt.needle.data(), alt.needle.size())))
      continue;
    if (match_alternative(alt, path)) return true;
  }
  return false;
}

bool Glob::covers_below(std::string_view dir) const {
  if (base_.empty()) return false;
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  if (dir == "/") return base_[0] == '/';
  return base_ == dir ||
         (base_.size() > dir.size() && base_.compare(0, dir.size(), dir) == 0 && base_[dir.size()] == '/');
}

}  // namespace cb
