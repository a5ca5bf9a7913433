// Rules written as text for people to read and edit: a glob that matches
// exactly one path, and YAML scalars that carry any text.
#pragma once

#include <string>
#include <string_view>

namespace cb::audit {

// A glob matching exactly `path`: wildcards escaped; bytes YAML text cannot
// carry (invalid UTF-8) and '$' (never a ${VAR} for the loader) become '?',
// which matches that one byte, so the glob stays as narrow as text allows.
std::string exact_glob(std::string_view path);

// A YAML double-quoted scalar of `text` (control bytes escaped; invalid
// UTF-8 becomes U+FFFD).
std::string yaml_quote(std::string_view text);

}  // namespace cb::audit
