#include "keep/budget.h"

#include <algorithm>
#include <cstdio>

namespace cb::keep {

std::string human_bytes(uint64_t n) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char b[32];
  if (u == 0)
    std::snprintf(b, sizeof b, "%llu B", static_cast<unsigned long long>(n));
  else
    std::snprintf(b, sizeof b, "%.1f %s", v, kUnits[u]);
  return b;
}

std::string over_budget(uint64_t size, const Usage& used, const Limits& limits, const std::optional<FreeSpace>& free) {
  if (used.session + size > limits.session_bytes)
    return "over the session's keep budget: " + human_bytes(size) + " more would make " +
           human_bytes(used.session + size) + " of " + human_bytes(limits.session_bytes);
  if (used.total + size > limits.total_bytes)
    return "over the keep store's total budget: " + human_bytes(size) + " more would make " +
           human_bytes(used.total + size) + " of " + human_bytes(limits.total_bytes) + " (cottonbox gc frees space)";
  if (free) {
    uint64_t reserve = std::max(limits.min_free_bytes, free->size / 100 * limits.min_free_percent);
    if (free->available < size || free->available - size < reserve)
      return "no space: a copy of " + human_bytes(size) + " would leave less than " + human_bytes(reserve) +
             " free on the keep store's filesystem (" + human_bytes(free->available) + " available)";
  }
  return {};
}

}  // namespace cb::keep
