#include "record/refusal_notice.h"

namespace cb {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += '?';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string refusal_notice(const EventRow& row) {
  if (row.allowed || !row.enforced) return {};
  const Verdict& v = row.verdict;
  const Event& ev = row.ev;
  std::string who = ev.proc ? ev.proc->comm : "pid " + std::to_string(ev.pid);
  std::string rule = v.rule_id.empty() ? "the policy's default" : "rule " + v.rule_id;
  std::string line = "cottonbox: refused " + std::string(action_name(ev.action)) + " " + quoted(ev.path) + " by " +
                     who + " (" + rule + (v.message.empty() ? "" : ": " + v.message) + ")";
  bool guard = v.rule_id.rfind("cottonbox:guard-", 0) == 0;
  if (v.builtin && !guard) {
    if (v.message.find("no rule can") == std::string::npos)
      line += "; cottonbox's own protection, which no rule can allow";
  } else {
    line += "; to allow it, a rule before that one: {id: allow-it, action: " + std::string(action_name(ev.action));
    if (!ev.path.empty() && ev.path[0] == '/') line += ", path: " + quoted(ev.path);
    line += ", decision: allow}";
  }
  return line + " (said once per rule; all in `cottonbox events`)";
}

void RefusalNotices::event(const EventRow& row) {
  if (row.allowed || !row.enforced) return;
  if (!told_.insert(row.verdict.rule_id).second) return;
  std::string line = refusal_notice(row);
  if (line.empty()) return;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

}  // namespace cb
