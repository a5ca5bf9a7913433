// "Did you mean ...?" for misspelt names in policies and expressions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cb {

// Optimal string alignment distance: insertions, deletions, substitutions and
// swaps of two neighbouring bytes each cost one.
size_t edit_distance(std::string_view a, std::string_view b);

// "; did you mean 'x'?" for the closest candidate when it is close enough to
// be a typo (a third of the word, at least one edit), else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace cb
