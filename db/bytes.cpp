#include "db/bytes.h"

#include <array>
#include <cstdint>

namespace cb::db {

Utf8Step utf8_step(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return {c, 1, true};

  // Table 3-7 of the Unicode standard: the lead byte fixes the length and the
  // range allowed for the second byte (which excludes overlongs, surrogates
  // and code points above U+10FFFF); later bytes are always 80..BF.
  size_t need;
  unsigned char lo = 0x80, hi = 0xbf;
  char32_t cp;
  if (c >= 0xc2 && c <= 0xdf) {
    need = 2, cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    need = 3, cp = c & 0x0f;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 4, cp = c & 0x07;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return {0, 1, false};
  }
  size_t k = 1;
  for (; k < need; ++k) {
    if (i + k >= s.size()) break;
    unsigned char t = b(i + k);
    if (t < lo || t > hi) break;
    cp = (cp << 6) | (t & 0x3f);
    lo = 0x80, hi = 0xbf;
  }
  if (k == need) return {cp, need, true};
  return {0, k, false};
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto st = utf8_step(s, i);
    if (!st.valid) return false;
    i += st.len;
  }
  return true;
}

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto st = utf8_step(s, i);
    if (st.valid)
      out.append(s.substr(i, st.len));
    else
      out.append("\xef\xbf\xbd");
    i += st.len;
  }
  return out;
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto u = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = u(i) << 16 | u(i + 1) << 8 | u(i + 2);
    for (int sh : {18, 12, 6, 0}) out.push_back(kB64[(v >> sh) & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t v = u(i) << 16;
    out += {kB64[(v >> 18) & 63], kB64[(v >> 12) & 63], '=', '='};
  } else if (rest == 2) {
    uint32_t v = u(i) << 16 | u(i + 1) << 8;
    out += {kB64[(v >> 18) & 63], kB64[(v >> 12) & 63], kB64[(v >> 6) & 63], '='};
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  static const std::array<int8_t, 256> kVal = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    for (int k = 0; k < 64; ++k) t[static_cast<unsigned char>(kB64[k])] = static_cast<int8_t>(k);
    return t;
  }();
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      int8_t d = k >= 4 - pad ? 0 : kVal[static_cast<unsigned char>(text[i + k])];
      if (d < 0) return std::nullopt;
      v = v << 6 | static_cast<uint32_t>(d);
    }
    out.push_back(static_cast<char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<char>(v >> 8 & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(v & 0xff));
  }
  return out;
}

std::string join_nul(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    out += s;
    out.push_back('\0');
  }
  return out;
}

std::vector<std::string> split_nul(std::string_view s) {
  std::vector<std::string> v;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\0') {
      v.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  // Tolerate a missing final NUL (a hand-edited row): keep the tail.
  if (start < s.size()) v.emplace_back(s.substr(start));
  return v;
}

}  // namespace cb::db
