// The journal's text format: one record per line, `key=value` fields
// separated by tabs, values percent-escaped, and a CRC-32 of the line as the
// last field.  A line without its newline or whose CRC does not match is a
// write torn by a crash (a SIGKILL can stop a write(2) between two pages) and
// is skipped, never half-read.  Pure: encoding and parsing only; the file
// itself is opened and appended to by Store.
//
//   J  format=1  session=S                       the header
//   K  seq= ts= cmd= proc= event= op= path= ...  a Snapshot (the previous state)
//   H  staged=NAME  sha=HEX                      a staged object was hashed into objects/
//   L  path= known= type= ... sha=               the state the session left at path
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "keep/types.h"

namespace cb::keep {

constexpr int kJournalFormat = 1;

uint32_t crc32(std::string_view data);

// %XX for '%', tab, newline, carriage return, control bytes, DEL and the
// bytes in `also`; everything else (UTF-8 included) as is.
std::string escape(std::string_view s, std::string_view also = "");
// The inverse; false on a malformed escape.
bool unescape(std::string_view s, std::string& out);

std::string encode_header(std::string_view session);
std::string encode_snapshot(const Snapshot& s);
std::string encode_settled(std::string_view staged, std::string_view sha256);
std::string encode_left(const Left& l);

struct Parsed {
  std::string session;  // from the header
  std::vector<Snapshot> snapshots;
  std::vector<Left> left;                      // in order; a later one for a path replaces an earlier one
  std::map<std::string, std::string> settled;  // staged name -> sha256
  size_t damaged = 0;                          // lines skipped: bad CRC or unparsable
  bool torn_tail = false;                      // the last line has no newline (a write cut by a crash)
};

// Parses a whole journal and resolves staged objects that were settled
// ("s:NAME" becomes "o:SHA" with sha256 filled in).
Parsed parse_journal(std::string_view text);

}  // namespace cb::keep
