// What `cottonbox sessions|events|tree|hosts` print, so that main stays thin.
//
// Text is for people: aligned tables sized to their content, times in local
// time, and every byte that came from a supervised process escaped so that a
// hostile file name cannot forge a line, move the cursor or reverse the text
// (\n, \t, \\, \xNN for control and invalid bytes, \u202e for bidi controls).
// JSON (json.h) is for programs: one object per line.
//
// The print_* functions return an exit status: 0, or 125 after writing
// "cottonbox: <why>" to stderr (no such session, a bad filter, a failed read).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "db/store.h"

namespace cb::db {

constexpr int kExitFailure = 125;  // cottonbox's own errors, as for `cottonbox run`

int print_sessions(Reader& reader, bool json, std::ostream& out);
int print_events(Reader& reader, const EventQuery& q, bool json, std::ostream& out);
int print_tree(Reader& reader, int64_t session, bool json, std::ostream& out);
int print_hosts(Reader& reader, int64_t session, bool json, std::ostream& out);

// Writes "cottonbox: <message>" to stderr and returns kExitFailure; for the
// caller's own failures, such as Reader::open.
int report_error(const Error& e);

// Bytes made safe for a terminal line (see above); valid printable UTF-8
// passes unchanged.
std::string escape_for_terminal(std::string_view bytes);
// A word the shell reads back as `arg`: bare when safe, '...' when printable,
// $'...' when it holds control or invalid bytes.
std::string shell_quote(std::string_view arg);
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace cb::db
