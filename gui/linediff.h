// A line diff for the Changes tab's preview: what a text file held before
// the session changed it (the kept content) against what it holds now.
// Pure; no Qt.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cb::gui {

struct DiffLine {
  char kind = ' ';  // ' ' the same, '-' only before, '+' only now, '@' a hunk header
  std::string text;
};

// Unified-diff hunks with `context` lines around each change.  Texts whose
// line counts multiply beyond `budget` are compared as wholes instead (one
// hunk: everything removed, everything added), which keeps the work bounded.
std::vector<DiffLine> diff_lines(std::string_view before, std::string_view after, size_t context = 3,
                                 size_t budget = 4000000);

// Whether bytes look like text worth a line diff: no NUL, valid UTF-8.
bool looks_like_text(std::string_view bytes);

}  // namespace cb::gui
