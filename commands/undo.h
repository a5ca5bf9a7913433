// `cottonbox changes`, `cottonbox undo` and `cottonbox gc`: what a session
// changed per command, its undo, and the keep store's collection.  The
// reading and planning live in keep/ (recorded.h); here are the commands'
// words and exit statuses.
//
// Exit statuses: 0; for undo, 1 when anything was refused (a conflict, a
// change not kept, a failure; created files left without --created are not
// refusals); 125 for cottonbox's own errors, after "cottonbox: <why>" on
// stderr.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "keep/recorded.h"

namespace cb {

// gc's defaults (README "Undo"): sessions older than 30 days go, then the
// oldest while the store holds more than 10 GiB (the keep's total budget).
constexpr double kGcDefaultMaxAgeDays = 30;
constexpr const char* kGcDefaultMaxSize = "10G";

int run_changes(const std::string& db_path, int64_t session, std::optional<uint64_t> command, bool json,
                std::ostream& out);

// `request.path_glob` as given (relative to the working directory).
int run_undo(const std::string& db_path, int64_t session, keep::UndoRequest request, std::ostream& out);

// max_age_days 0: no age limit; max_size "0": no size limit.
int run_gc(const std::string& db_path, double max_age_days, const std::string& max_size, std::ostream& out);

// "10G", "512M", "1.5GiB", "4096" (bytes): binary multiples.  nullopt when
// malformed.
std::optional<uint64_t> parse_size(std::string_view s);

}  // namespace cb
