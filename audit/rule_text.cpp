#include "audit/rule_text.h"

#include <cstdio>

#include "db/bytes.h"
#include "policy/glob.h"

namespace cb::audit {

std::string exact_glob(std::string_view path) {
  std::string escaped = Glob::escape(path);
  std::string out;
  for (size_t i = 0; i < escaped.size();) {
    db::Utf8Step st = db::utf8_step(escaped, i);
    if (!st.valid || escaped[i] == '$')
      out += '?';
    else
      out.append(escaped, i, st.len);
    i += st.len;
  }
  return out;
}

std::string yaml_quote(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    db::Utf8Step st = db::utf8_step(text, i);
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (!st.valid) {
      out += "\\uFFFD";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out.append(text, i, st.len);
    }
    i += st.len;
  }
  return out + "\"";
}

}  // namespace cb::audit
