#include "policy/suggest.h"

#include <algorithm>

namespace cb {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rolling rows: the swap rule looks two rows back.
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates) {
  size_t limit = std::max<size_t>(1, word.size() / 3);
  std::string_view best;
  size_t best_d = limit + 1;
  for (auto c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Replacing every byte is no typo ("3" is not a misspelt "*").
  if (best.empty() || best_d == 0 || best_d >= word.size()) return "";
  return "; did you mean '" + std::string(best) + "'?";
}

}  // namespace cb
