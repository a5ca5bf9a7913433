// An Explanation (policy/explain.h) for people and for programs: the same
// facts as text lines and as JSON, shared by `cottonbox why`, the MCP
// server and the ask sent to approvers.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "policy/explain.h"

namespace cb::proto {

// File name -> text, for quoting a rule as it is written.
using Sources = std::map<std::string, std::string>;
Sources sources_of(const Policy& p);

// {"verdict", "rule": {id, decision, builtin, location, text, message} or
// null for the default, "checks": [...], "passed_over": [...],
// "other_actions": N, "layer"}.
nlohmann::json explanation_json(const Explanation& x, const Sources& sources, const std::string& layer);

// Indented lines: the deciding rule with its location and text, each test
// with its values, the rules passed over and why, the layer.
std::string explanation_text(const Explanation& x, const Sources& sources, const std::string& layer);

// "/p/policy.yaml:12:5"; "" for a built-in rule.
std::string rule_location(const Rule& r);

// What the layer means, in a few words ("the supervisor refused the call
// before it happened").
std::string_view layer_words(std::string_view layer);

}  // namespace cb::proto
