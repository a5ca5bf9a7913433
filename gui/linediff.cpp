#include "gui/linediff.h"

#include <algorithm>
#include <cstdint>

namespace cb::gui {
namespace {

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) nl = s.size();
    out.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace

bool looks_like_text(std::string_view b) {
  size_t i = 0;
  while (i < b.size()) {
    unsigned char c = static_cast<unsigned char>(b[i]);
    if (c == 0) return false;
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > b.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(b[i + k]) >> 6) != 2) return false;
    i += n;
  }
  return true;
}

std::vector<DiffLine> diff_lines(std::string_view before, std::string_view after, size_t context, size_t budget) {
  auto a = split(before), b = split(after);
  // The same lines at both ends are left out of the table.
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  size_t post = 0;
  while (post < a.size() - pre && post < b.size() - pre && a[a.size() - 1 - post] == b[b.size() - 1 - post]) ++post;
  size_t n = a.size() - pre - post, m = b.size() - pre - post;

  // The edit script: ' ', '-', '+' per line, in order.
  std::vector<std::pair<char, std::string_view>> script;
  for (size_t i = 0; i < pre; ++i) script.emplace_back(' ', a[i]);
  if (n * m <= budget) {
    // Longest common subsequence, from the end, so that the walk below
    // goes forward.
    std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
    for (size_t i = n; i-- > 0;)
      for (size_t j = m; j-- > 0;)
        at(i, j) = a[pre + i] == b[pre + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[pre + i] == b[pre + j]) {
        script.emplace_back(' ', a[pre + i]);
        ++i, ++j;
      } else if (j < m && (i == n || at(i, j + 1) > at(i + 1, j))) {
        script.emplace_back('+', b[pre + j++]);
      } else {
        script.emplace_back('-', a[pre + i++]);
      }
    }
  } else {
    for (size_t i = 0; i < n; ++i) script.emplace_back('-', a[pre + i]);
    for (size_t j = 0; j < m; ++j) script.emplace_back('+', b[pre + j]);
  }
  for (size_t i = a.size() - post; i < a.size(); ++i) script.emplace_back(' ', a[i]);

  // Hunks: the changed lines with `context` lines around them.
  std::vector<DiffLine> out;
  std::vector<bool> keep(script.size(), false);
  for (size_t k = 0; k < script.size(); ++k)
    if (script[k].first != ' ')
      for (size_t c = (k > context ? k - context : 0); c <= std::min(script.size() - 1, k + context); ++c)
        keep[c] = true;
  size_t line_a = 1, line_b = 1;
  for (size_t k = 0; k < script.size();) {
    if (!keep[k]) {
      if (script[k].first != '+') ++line_a;
      if (script[k].first != '-') ++line_b;
      ++k;
      continue;
    }
    size_t end = k;
    size_t na = 0, nb = 0;
    while (end < script.size() && keep[end]) {
      if (script[end].first != '+') ++na;
      if (script[end].first != '-') ++nb;
      ++end;
    }
    out.push_back({'@', "@@ -" + std::to_string(na ? line_a : line_a - 1) + "," + std::to_string(na) + " +" +
                            std::to_string(nb ? line_b : line_b - 1) + "," + std::to_string(nb) + " @@"});
    for (; k < end; ++k) out.push_back({script[k].first, std::string(script[k].second)});
    line_a += na;
    line_b += nb;
  }
  return out;
}

}  // namespace cb::gui
