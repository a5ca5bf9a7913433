#include "ask/ask.h"

namespace cb {

std::string_view ask_answer_name(AskAnswer a) {
  switch (a) {
    case AskAnswer::AllowOnce: return "allow-once";
    case AskAnswer::DenyOnce: return "deny-once";
    case AskAnswer::AllowTree: return "allow-tree";
    case AskAnswer::DenyTree: return "deny-tree";
    case AskAnswer::AllowAlways: return "allow-always";
    case AskAnswer::DenyAlways: return "deny-always";
    case AskAnswer::Timeout: return "timeout";
  }
  return "unknown";
}

bool ask_answer_allows(AskAnswer a) {
  return a == AskAnswer::AllowOnce || a == AskAnswer::AllowTree || a == AskAnswer::AllowAlways;
}

}  // namespace cb
