// What the writer and the reader share: the schema, its version check, the
// encodings of columns that are not plain scalars, and how a dead session is
// told from a live one.  Private to cb_db.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/sqlite.h"
#include "db/store.h"

namespace cb::db::detail {

// Checks PRAGMA user_version; with `create`, lays out the schema in an empty
// file and upgrades an older one (one transaction).  Without `create`, an
// older file is read as it is.  A newer version is an error that says so:
// this build must not write rows a newer reader would misread, nor read
// columns it does not know.
Result<Ok> ensure_schema(sql::Database& db, const std::string& path, bool create);

// The bytes of a new, empty audit database: the schema, its version, and
// the header of a file in WAL mode.  Writer::create_files puts them in place
// whole, so that no opener ever sees an empty or half-made database.
Result<std::string> new_database_image();

// How long a reader waits for another connection's lock (a writer
// switching a file to WAL, recovering its index) before reporting SQLITE_BUSY.
constexpr std::chrono::milliseconds kReaderBusy{5000};

// Whether the database has the table (an older file lacks the newer ones).
bool has_table(sql::Database& db, std::string_view name);

// /proc/sys/kernel/random/boot_id without the newline; "" if unreadable.
std::string current_boot_id();
// True when `pid` is this process, or a live process (not a zombie) whose
// comm or executable contains "cottonbox" (pid reuse by anything else is
// not ours).
bool supervisor_alive(int32_t pid);
// A 'running' row whose supervisor is gone: another boot, or a dead pid.
bool running_session_is_stale(std::string_view boot_id, int32_t supervisor_pid, std::string_view current_boot);

// JSON arrays of strings that stay exact: an element that is not valid UTF-8
// is stored as {"b64": "..."} (JSON text cannot carry raw bytes).
std::string encode_string_array(const std::vector<std::string>& v);
std::vector<std::string> decode_string_array(std::string_view json);

// A process image's identity as images.identity and processes.identity
// keep it: {"check": "trusted", "names": ["git"], "exe": [dev, ino,
// ctime_sec, ctime_nsec], "why": "..."} (names, exe and why only when there
// are any; names and why exact, as encode_string_array and put_bytes write
// them).  decode_identity() is false, and sets nothing, for any other text.
std::string encode_identity(const std::vector<std::string>& names, const IdentityFacts& f);
bool decode_identity(std::string_view json, std::vector<std::string>& names, IdentityFacts& f);

// EventRow::facets as JSON text ("" for none) and back; paths stay exact.
std::string encode_facets(const std::vector<FacetRow>& f);
std::vector<FacetRow> decode_facets(std::string_view json);
std::optional<PolicySnapshot> decode_policy_snapshot(std::string_view json);

std::optional<Source> parse_source(std::string_view s);
std::optional<Layer> parse_layer(std::string_view s);
std::optional<SessionState> parse_session_state(std::string_view s);

}  // namespace cb::db::detail
