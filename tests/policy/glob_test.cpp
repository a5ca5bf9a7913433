#include "policy/glob.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace cb {
namespace {

Glob compile_ok(std::string_view pattern) {
  auto g = Glob::compile(pattern);
  EXPECT_TRUE(g.ok()) << pattern << ": " << (g.ok() ? "" : g.error().message);
  return g.ok() ? std::move(g.value()) : Glob();
}

bool matches(std::string_view pattern, std::string_view path) { return compile_ok(pattern).match(path); }

TEST(Glob, StarStaysWithinAComponent) {
  EXPECT_TRUE(matches("/src/*.c", "/src/a.c"));
  EXPECT_TRUE(matches("/src/*.c", "/src/.c"));
  EXPECT_FALSE(matches("/src/*.c", "/src/sub/a.c"));
  EXPECT_FALSE(matches("/src/*.c", "/src/a.h"));
  EXPECT_TRUE(matches("/src/a*b*c", "/src/aXXbYYc"));
  EXPECT_FALSE(matches("/src/a*b*c", "/src/aXXbYY"));
  EXPECT_TRUE(matches("*", "anything"));
  EXPECT_FALSE(matches("*", "a/b"));
}

TEST(Glob, GlobstarSpansComponents) {
  EXPECT_TRUE(matches("/a/**/z", "/a/z"));
  EXPECT_TRUE(matches("/a/**/z", "/a/b/c/z"));
  EXPECT_FALSE(matches("/a/**/z", "/a/b/c/zz"));
  EXPECT_TRUE(matches("**/*.o", "/home/u/p/build/x.o"));
  EXPECT_TRUE(matches("**/*.o", "x.o"));
  EXPECT_TRUE(matches("**/.git/objects/**", "/p/.git/objects/ab/cdef"));
  EXPECT_FALSE(matches("**/.git/objects/**", "/p/.git/objectsX/ab"));
  EXPECT_TRUE(matches("/a/**/b/**/c", "/a/x/b/y/z/c"));
  EXPECT_FALSE(matches("/a/**/b/**/c", "/a/x/y/z/c"));
}

TEST(Glob, TrailingGlobstarMatchesTheDirectoryItself) {
  EXPECT_TRUE(matches("/a/**", "/a"));
  EXPECT_TRUE(matches("/a/**", "/a/b"));
  EXPECT_TRUE(matches("/a/**", "/a/b/c"));
  EXPECT_FALSE(matches("/a/**", "/ab"));
  EXPECT_FALSE(matches("/a/**", "/"));
  EXPECT_TRUE(matches("/a/**/**", "/a"));
  EXPECT_TRUE(matches("/**", "/"));
  EXPECT_TRUE(matches("/**", "/etc/passwd"));
}

TEST(Glob, QuestionMarkAndSets) {
  EXPECT_TRUE(matches("/f?o", "/foo"));
  EXPECT_FALSE(matches("/f?o", "/fo"));
  EXPECT_FALSE(matches("/a?b", "/a/b"));
  EXPECT_TRUE(matches("/[abc].txt", "/b.txt"));
  EXPECT_FALSE(matches("/[abc].txt", "/d.txt"));
  EXPECT_TRUE(matches("/[a-c0-9]", "/7"));
  EXPECT_TRUE(matches("/[!a-c]", "/d"));
  EXPECT_FALSE(matches("/[!a-c]", "/b"));
  EXPECT_TRUE(matches("/[^a-c]", "/d"));
  EXPECT_TRUE(matches("/[]]", "/]"));
  EXPECT_TRUE(matches("/[!]]", "/x"));
  EXPECT_FALSE(matches("/a[!x]b", "/a/b"));  // a negated set never matches '/'
}

TEST(Glob, BracesAndEscapes) {
  EXPECT_TRUE(matches("/src/*.{c,h}", "/src/a.h"));
  EXPECT_FALSE(matches("/src/*.{c,h}", "/src/a.o"));
  EXPECT_TRUE(matches("{/etc,/usr}/**", "/usr/lib/x"));
  EXPECT_TRUE(matches("/x/{a,b}/{c,d}", "/x/b/c"));
  EXPECT_TRUE(matches("/x/{,pre}fix", "/x/fix"));
  EXPECT_TRUE(matches("/a\\*b", "/a*b"));
  EXPECT_FALSE(matches("/a\\*b", "/axb"));
  EXPECT_TRUE(matches("/a\\{b,c}", "/a{b,c}"));
  EXPECT_TRUE(matches("/x/{[a,b],c}", "/x/,"));  // a comma inside a set is a member
  EXPECT_TRUE(matches("/a}b,c", "/a}b,c"));      // outside braces, ordinary bytes
}

TEST(Glob, BytesNotText) {
  std::string latin1 = "/data/caf\xe9.txt";  // not UTF-8
  EXPECT_TRUE(matches("/data/*.txt", latin1));
  EXPECT_TRUE(matches("/data/caf?.txt", latin1));
  EXPECT_TRUE(matches("/data/caf[\xe0-\xef].txt", latin1));
  EXPECT_TRUE(matches("/data/\xff*", "/data/\xff\xfe"));
  std::string newline = "/tmp/a\nb";
  EXPECT_TRUE(matches("/tmp/*", newline));
  EXPECT_TRUE(matches("/tmp/a?b", newline));
  EXPECT_TRUE(matches("/tmp/a\nb", newline));
  EXPECT_FALSE(matches("/tmp/a\nb", "/tmp/a\n"));
  std::string nul("/tmp/a\0b", 8);
  EXPECT_TRUE(matches("/tmp/*", nul));
}

TEST(Glob, ExactPatternsAndEmptyComponents) {
  EXPECT_TRUE(matches("/etc/passwd", "/etc/passwd"));
  EXPECT_FALSE(matches("/etc/passwd", "/etc/passwd2"));
  EXPECT_FALSE(matches("/etc/passwd", "/etc"));
  EXPECT_TRUE(matches("/", "/"));
  EXPECT_TRUE(matches("tcp:*:22", "tcp:10.0.0.1:22"));
  EXPECT_FALSE(matches("tcp:*:22", "tcp:10.0.0.1:2222"));
  EXPECT_TRUE(matches("unix:/run/*.sock", "unix:/run/docker.sock"));
}

TEST(Glob, CompileErrorsCarryTheOffset) {
  struct Case {
    const char* pattern;
    int offset;
    const char* message;
  };
  for (const Case& c : {
           Case{"", 0, "empty pattern"},
           Case{"/a/[bc", 3, "unclosed '[' at offset 3"},
           Case{"/a/[]", 3, "unclosed '[' at offset 3"},
           Case{"/a/{b,c", 3, "unclosed '{' at offset 3"},
           Case{"/{a,{b}}", 4, "nested '{' (braces do not nest) at offset 4"},
           Case{"/a\\", 2, "trailing backslash at offset 2"},
           Case{"/[z-a]", 2, "invalid range 'z-a' at offset 2"},
       }) {
    auto g = Glob::compile(c.pattern);
    ASSERT_FALSE(g.ok()) << c.pattern;
    EXPECT_EQ(g.error().err, c.offset) << c.pattern;
    EXPECT_EQ(g.error().message, c.message) << c.pattern;
  }
  auto many = Glob::compile("/{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}");
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().message, "too many alternatives (more than 256) at offset 37");
}

TEST(Glob, LiteralBase) {
  EXPECT_EQ(compile_ok("/home/u/.ssh/**/*.pem").literal_base(), "/home/u/.ssh");
  EXPECT_EQ(compile_ok("/home/u/.ssh/**").literal_base(), "/home/u/.ssh");
  EXPECT_EQ(compile_ok("/home/u/file").literal_base(), "/home/u/file");
  EXPECT_EQ(compile_ok("/home/u/").literal_base(), "/home/u");
  EXPECT_EQ(compile_ok("/**").literal_base(), "/");
  EXPECT_EQ(compile_ok("/*.txt").literal_base(), "/");
  EXPECT_EQ(compile_ok("/").literal_base(), "/");
  EXPECT_EQ(compile_ok("**/.git/**").literal_base(), "");
  EXPECT_EQ(compile_ok("*.o").literal_base(), "");
  EXPECT_EQ(compile_ok("/x/{a,b}/c").literal_base(), "/x");
  EXPECT_EQ(compile_ok("/x/a\\*b/c*").literal_base(), "/x/a*b");
  EXPECT_EQ(compile_ok("unix:/run/*.sock").literal_base(), "unix:/run");
}

TEST(Glob, WholeTree) {
  EXPECT_TRUE(compile_ok("/p/**").is_whole_tree());
  EXPECT_TRUE(compile_ok("/**").is_whole_tree());
  EXPECT_TRUE(compile_ok("/a\\*/**").is_whole_tree());
  EXPECT_FALSE(compile_ok("**").is_whole_tree());
  EXPECT_FALSE(compile_ok("/p/**/*.c").is_whole_tree());
  EXPECT_FALSE(compile_ok("/p/*").is_whole_tree());
  EXPECT_FALSE(compile_ok("/p").is_whole_tree());
  EXPECT_FALSE(compile_ok("/p/**/**").is_whole_tree());
  EXPECT_FALSE(compile_ok("/{p,q}/**").is_whole_tree());
  EXPECT_FALSE(compile_ok("/a//**").is_whole_tree());
}

TEST(Glob, CoversBelow) {
  Glob g = compile_ok("/home/u/p/src/**");
  EXPECT_TRUE(g.covers_below("/home/u/p/src"));
  EXPECT_TRUE(g.covers_below("/home/u/p"));
  EXPECT_TRUE(g.covers_below("/home/u/p/"));
  EXPECT_TRUE(g.covers_below("/home"));
  EXPECT_TRUE(g.covers_below("/"));
  EXPECT_FALSE(g.covers_below("/home/u/p/src/x"));  // below the base: match() decides
  EXPECT_FALSE(g.covers_below("/home/u/pp"));
  EXPECT_FALSE(g.covers_below("/home/u/p/sr"));
  EXPECT_FALSE(compile_ok("**/.git/**").covers_below("/"));
  EXPECT_TRUE(compile_ok("/etc/passwd").covers_below("/etc"));
}

TEST(Glob, Escape) {
  std::string odd = "/d/a*b?[c]{d,e}\\f";
  Glob g = compile_ok(Glob::escape(odd));
  EXPECT_TRUE(g.match(odd));
  EXPECT_FALSE(g.match("/d/aXb?[c]{d,e}\\f"));
  EXPECT_EQ(g.literal_base(), odd);
}

// Patterns that backtrack exponentially in a naive matcher.
TEST(Glob, NoExponentialBacktracking) {
  std::string path;
  for (int i = 0; i < 200; ++i) path += "/d";
  path += "/y";
  std::string text(5000, 'a');
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(matches("**/**/**/**/**/**/**/**/x", path));
  EXPECT_FALSE(matches("/*a*a*a*a*a*a*a*a*a*a*b", "/" + text));
  EXPECT_TRUE(matches("/*a*a*a*a*a*a*a*a*a*a", "/" + text));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(ms, 500);
}

// An obviously correct (and slow) matcher for brace-free patterns, to check
// the compiled one and its shortcuts (literal prefix, suffix and runs, the
// "**/name/**" component index) against.
bool ref_segment(std::string_view p, std::string_view c) {
  if (p.empty()) return c.empty();
  if (p[0] == '*') {
    for (size_t k = 0; k <= c.size(); ++k)
      if (ref_segment(p.substr(1), c.substr(k))) return true;
    return false;
  }
  if (c.empty()) return false;
  if (p[0] == '?') return ref_segment(p.substr(1), c.substr(1));
  if (p[0] == '[') {
    size_t k = 1;
    bool negate = p[k] == '!';
    if (negate) ++k;
    bool in = false;
    for (bool first = true; first || p[k] != ']'; first = false, ++k) in |= p[k] == c[0];
    if (in == negate) return false;
    return ref_segment(p.substr(k + 1), c.substr(1));
  }
  if (p[0] == '\\') p.remove_prefix(1);
  return p[0] == c[0] && ref_segment(p.substr(1), c.substr(1));
}

bool ref_match(const std::vector<std::string>& segs, size_t i, const std::vector<std::string_view>& comps, size_t j) {
  if (i == segs.size()) return j == comps.size();
  if (segs[i] == "**") {
    for (size_t k = j; k <= comps.size(); ++k)
      if (ref_match(segs, i + 1, comps, k)) return true;
    return false;
  }
  return j < comps.size() && ref_segment(segs[i], comps[j]) && ref_match(segs, i + 1, comps, j + 1);
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t a = 0;;) {
    size_t b = s.find('/', a);
    out.push_back(s.substr(a, b == std::string_view::npos ? s.npos : b - a));
    if (b == std::string_view::npos) return out;
    a = b + 1;
  }
}

TEST(Glob, AgreesWithAPlainMatcherOnGeneratedPatternsAndPaths) {
  const char* pieces[] = {"**", "*",    "a",     "b",   "ab",    ".git", "*.o",  "a*", "*b",
                          "a?", "[ab]", "[!a]x", "\\*", "build", "x.o",  "a*b*", ""};
  const char* names[] = {"", "a", "b", "ab", ".git", "build", "x.o", "o", "ba", "*", "bx", "aab", "a.o"};
  uint64_t seed = 12345;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  int checked = 0, matched = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string pattern;
    std::vector<std::string> segs;
    if (next(2)) {
      pattern = "/";
      segs.push_back("");
    }
    size_t n = 1 + next(4);
    for (size_t k = 0; k < n; ++k) {
      std::string piece = pieces[next(std::size(pieces))];
      if (k > 0) pattern += '/';
      pattern += piece;
      segs.push_back(piece);
    }
    if (pattern.empty()) continue;
    auto g = Glob::compile(pattern);
    ASSERT_TRUE(g.ok()) << pattern;
    for (int q = 0; q < 30; ++q) {
      std::string path = next(2) ? "/" : "";
      size_t m = next(6);
      for (size_t k = 0; k < m; ++k) {
        if (k > 0) path += '/';
        path += names[next(std::size(names))];
      }
      // Split the pattern the way its text reads: a leading '/' makes an
      // empty first segment, as it makes an empty first component.
      bool want = ref_match(segs, 0, split(path), 0);
      ASSERT_EQ(g.value().match(path), want) << "pattern " << pattern << " path " << path;
      // What decide()'s rule anchors rest on: a match lies at or below the
      // literal base.
      const std::string& base = g.value().literal_base();
      if (want && !base.empty()) {
        // "/**" matches "" too ("a/**" matches "a"); anchors are never "/".
        bool below = base == "/" ? path.empty() || path.starts_with("/") : path == base || path.starts_with(base + "/");
        ASSERT_TRUE(below) << "pattern " << pattern << " base " << base << " path " << path;
      }
      ++checked;
      matched += want;
    }
  }
  // Enough of both answers that neither side is vacuous.
  EXPECT_GT(checked, 100000);
  EXPECT_GT(matched, checked / 50);
}

TEST(Glob, ManyComponentAlternativesAnswerAsTheirExpansion) {
  Glob g = compile_ok("**/{build,dist,node_modules,*.egg-info,bazel-*}/**");
  EXPECT_TRUE(g.match("/p/build/x.o"));
  EXPECT_TRUE(g.match("/p/build"));
  EXPECT_TRUE(g.match("build"));
  EXPECT_TRUE(g.match("/p/q/node_modules/a/b"));
  EXPECT_TRUE(g.match("/p/foo.egg-info/PKG-INFO"));
  EXPECT_TRUE(g.match("/p/bazel-out/k8"));
  EXPECT_FALSE(g.match("/p/builds/x.o"));
  EXPECT_FALSE(g.match("/p/rebuild/x.o"));
  EXPECT_FALSE(g.match("/p/src/x.c"));
  EXPECT_FALSE(g.match("/p/dist.tar"));
}

}  // namespace
}  // namespace cb
