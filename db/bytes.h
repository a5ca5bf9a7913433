// Bytes that are not text: paths, argv and comm come from the supervised
// processes and may hold any byte but NUL.  These helpers keep them exact in
// storage and honest in JSON and on a terminal.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cb::db {

// One step of UTF-8 decoding at s[i] (i < s.size()).  An invalid step spans
// the maximal subpart of an ill-formed sequence (Unicode 15, section 3.9), so
// that replacing each invalid step by U+FFFD follows the recommended practice.
struct Utf8Step {
  char32_t cp = 0;  // the code point when valid
  size_t len = 1;   // bytes consumed, >= 1
  bool valid = false;
};
Utf8Step utf8_step(std::string_view s, size_t i);

bool is_valid_utf8(std::string_view s);
// Invalid sequences become U+FFFD.
std::string to_valid_utf8(std::string_view s);

std::string base64_encode(std::string_view bytes);
// nullopt when `text` is not canonical padded base64.
std::optional<std::string> base64_decode(std::string_view text);

// NUL-terminated elements, as in /proc/PID/cmdline: exact for any element
// without NUL (argv, paths), and [] differs from [""].
std::string join_nul(const std::vector<std::string>& v);
std::vector<std::string> split_nul(std::string_view s);

}  // namespace cb::db
