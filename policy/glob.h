// Path globs, matched on bytes.
//
//   *        any run of bytes within one path component (not '/')
//   **       any run of components (a whole component by itself: "a/**/b",
//            "a/**", "**/x"); "a/**" matches "a" itself and everything below
//   ?        one byte other than '/'
//   [abc] [a-z] [!abc]   one byte of (or not of) the set
//   {x,y}    either alternative (no nesting)
//   \c       the byte c itself
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace cb {

class Glob {
 public:
  // Errors carry a message naming the 0-based byte offset in `pattern` as
  // Error::err (not an errno here).
  static Result<Glob> compile(std::string_view pattern);

  bool match(std::string_view path) const;
  // True when some path strictly below directory `dir` could match, judged
  // by the pattern's literal base: the pattern's base lies at or below `dir`.
  // (Renaming or removing `dir` then affects a path this glob protects.)
  bool covers_below(std::string_view dir) const;
  // The leading components without any wildcard, e.g. "/home/u/.ssh" for
  // "/home/u/.ssh/**/*.pem"; "" when the pattern starts with a wildcard.
  const std::string& literal_base() const { return base_; }
  // True when the pattern is exactly "<literal_base>/**": every path at or
  // below the base, nothing else.
  bool is_whole_tree() const { return whole_tree_; }
  const std::string& text() const { return text_; }

  // `path` with every glob metacharacter escaped: a pattern matching exactly it.
  static std::string escape(std::string_view path);

 private:
  // One compiled alternative: '/'-separated segments matched against path
  // components, "**" segments against runs of components.  Both levels use
  // the two-pointer wildcard algorithm, so matching is O(pattern * path) at
  // worst, never exponential.
  struct Token {
    enum Kind : uint8_t { Byte, Any, Set, Star };
    Kind kind = Byte;
    uint8_t byte = 0;
    uint32_t set = 0;  // index into sets_
  };
  struct Segment {
    bool globstar = false;  // "**" alone
    bool literal = false;   // no wildcard: compare `bytes`
    std::string bytes;
    std::vector<Token> tokens;
  };
  struct Alternative {
    std::string prefix;  // every match starts with these bytes
    std::string suffix;  // ... and ends with these
    std::string needle;  // ... and holds these somewhere (a literal run)
    bool exact = false;  // no wildcard at all: the path must equal `prefix`
    std::vector<Segment> segments;
  };
  using ByteSet = std::array<uint64_t, 4>;

  bool match_alternative(const Alternative& alt, std::string_view path) const;
  bool match_segment(const Segment& seg, std::string_view component) const;

  std::string text_;
  std::string base_;
  bool whole_tree_ = false;
  std::vector<std::string> alts_;  // brace-expanded patterns
  std::vector<Alternative> compiled_;
  // Alternatives of the form "**/name/**" (a path with a component equal to
  // name), sorted: one pass over the path's components answers them all,
  // which is what "**/{build,dist,node_modules,...}/**" needs.
  std::vector<std::string> any_component_;
  std::vector<ByteSet> sets_;
};

}  // namespace cb
