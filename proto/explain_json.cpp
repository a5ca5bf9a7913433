#include "proto/explain_json.h"

#include "db/bytes.h"

namespace cb::proto {
namespace {

using nlohmann::json;

json text(std::string_view s) { return db::to_valid_utf8(s); }

json check_json(const RuleCheck& c) {
  json j = {{"test", rule_check_name(c.kind)}, {"held", c.held}, {"detail", text(c.detail)}};
  if (c.kind == RuleCheck::Kind::When) {
    json steps = json::array();
    for (const auto& s : c.steps) {
      json values = json::object();
      for (const auto& [f, v] : s.values) values[f] = text(v);
      steps.push_back({{"condition", text(s.condition)}, {"values", values}, {"result", s.result}});
    }
    j["conditions"] = steps;
  }
  return j;
}

json rule_json(const Rule& r, const Sources& sources) {
  json j = {{"id", text(r.id)},
            {"decision", decision_name(r.decision)},
            {"builtin", r.builtin},
            {"message", r.message.empty() ? json(nullptr) : text(r.message)}};
  std::string loc = rule_location(r);
  j["location"] = loc.empty() ? json(nullptr) : json(text(loc));
  auto it = sources.find(r.loc.file);
  std::string src = it == sources.end() ? "" : rule_source_text(r, it->second);
  j["text"] = src.empty() ? json(nullptr) : text(src);
  return j;
}

std::string values_text(const ExprStep& s) {
  std::string out;
  for (const auto& [f, v] : s.values) out += (out.empty() ? "" : ", ") + f + " = " + v;
  return out;
}

void checks_text(std::string& out, const std::vector<RuleCheck>& checks, const std::string& indent) {
  for (const auto& c : checks) {
    out += indent + (c.held ? "✓ " : "✗ ") + std::string(rule_check_name(c.kind)) + ": " + db::to_valid_utf8(c.detail) +
           "\n";
    for (const auto& s : c.steps) {
      out += indent + "    " + std::string(2 * static_cast<size_t>(s.depth), ' ') + (s.result ? "true  " : "false ") +
             db::to_valid_utf8(s.condition);
      if (!s.values.empty()) out += "   [" + db::to_valid_utf8(values_text(s)) + "]";
      out += "\n";
    }
  }
}

}  // namespace

Sources sources_of(const Policy& p) {
  Sources s;
  for (const auto& [name, body] : p.sources) s[name] = body;
  return s;
}

std::string rule_location(const Rule& r) {
  if (r.loc.line <= 0) return "";
  return r.loc.file + ":" + std::to_string(r.loc.line) + ":" + std::to_string(r.loc.col);
}

std::string_view layer_words(std::string_view layer) {
  if (layer == "mount") return "a read-only mount in the session: the kernel refuses it, no round trip";
  if (layer == "notify") return "the supervisor decides as the call happens, before it takes effect";
  if (layer == "filter") return "the seccomp filter: it never leaves the kernel";
  if (layer == "builtin") return "cottonbox's own rule, before every user rule; no rule can override it";
  if (layer == "landlock") return "Landlock in the kernel";
  if (layer == "none") return "recorded by the eBPF tracer; nothing needed enforcing";
  return "";
}

json explanation_json(const Explanation& x, const Sources& sources, const std::string& layer) {
  json j = json::object();
  j["verdict"] = decision_name(x.verdict.decision);
  j["message"] = x.verdict.message.empty() ? json(nullptr) : text(x.verdict.message);
  if (x.decided) {
    j["rule"] = rule_json(*x.decided->rule, sources);
    json checks = json::array();
    for (const auto& c : x.decided->checks) checks.push_back(check_json(c));
    j["checks"] = checks;
  } else {
    j["rule"] = nullptr;
    j["checks"] = json::array();
  }
  json passed = json::array();
  for (const auto& t : x.passed) {
    json p = rule_json(*t.rule, sources);
    p.erase("text");
    json checks = json::array();
    for (const auto& c : t.checks) checks.push_back(check_json(c));
    p["checks"] = checks;
    p["failed"] = rule_check_name(t.checks.back().kind);
    passed.push_back(p);
  }
  j["passed_over"] = passed;
  j["other_actions"] = x.other_actions;
  j["layer"] = layer;
  j["layer_meaning"] = layer_words(layer);
  return j;
}

std::string explanation_text(const Explanation& x, const Sources& sources, const std::string& layer) {
  std::string out;
  if (x.decided) {
    const Rule& r = *x.decided->rule;
    out += "decided by rule " + db::to_valid_utf8(r.id) + (r.builtin ? " (built-in)" : "") + ": " +
           std::string(decision_name(r.decision));
    std::string loc = rule_location(r);
    if (!loc.empty()) out += " at " + db::to_valid_utf8(loc);
    out += "\n";
    auto it = sources.find(r.loc.file);
    std::string src = it == sources.end() ? "" : rule_source_text(r, it->second);
    if (!src.empty()) {
      size_t pos = 0;
      while (pos < src.size()) {
        size_t nl = src.find('\n', pos);
        out += "  | " + db::to_valid_utf8(src.substr(pos, nl - pos)) + "\n";
        pos = nl == std::string::npos ? src.size() : nl + 1;
      }
    }
    if (!r.message.empty()) out += "  message: " + db::to_valid_utf8(r.message) + "\n";
    checks_text(out, x.decided->checks, "  ");
  } else {
    out +=
        "decided by the policy's default: " + std::string(decision_name(x.verdict.decision)) + " (no rule matched)\n";
  }
  out += "enforced by: " + layer;
  if (auto w = layer_words(layer); !w.empty()) out += " (" + std::string(w) + ")";
  out += "\n";
  if (!x.passed.empty()) {
    out += "passed over:\n";
    for (const auto& t : x.passed) {
      const Rule& r = *t.rule;
      out +=
          "  " + db::to_valid_utf8(r.id) + (r.builtin ? " (built-in, " : " (") + std::string(decision_name(r.decision));
      std::string loc = rule_location(r);
      if (!loc.empty()) out += ", " + db::to_valid_utf8(loc);
      out += "): its " + std::string(rule_check_name(t.checks.back().kind)) + " did not match\n";
      checks_text(out, {t.checks.back()}, "    ");
    }
  }
  if (x.other_actions)
    out += "  (" + std::to_string(x.other_actions) + " earlier rule" + (x.other_actions == 1 ? " is" : "s are") +
           " about other actions)\n";
  return out;
}

}  // namespace cb::proto
