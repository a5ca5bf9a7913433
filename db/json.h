// JSON for events, sessions and processes: one shape shared by
// `cottonbox ... --json`, the GUI's export and the control socket.
//
// Every string in the result is valid UTF-8, so dump() never throws.  Bytes
// from the supervised processes that are not valid UTF-8 (paths, argv, exe,
// cwd, comm) appear with U+FFFD in place of the bad bytes, and then, only
// then, the exact bytes follow in base64 under the same key plus "_b64"
// ("path_b64", "argv_b64": one string per element).
//
// Times: "ts" is ISO-8601 UTC with nanoseconds ("2026-11-29T20:51:22.123456789Z")
// and "ts_ns" the same instant as an integer.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "db/store.h"

namespace cb::db {

// Keys: ts, ts_ns, session, seq, pid, tid, ppid, proc_id, comm, exe, action,
// syscall, path, target, aliases (only when any), flags, is_dir,
// target_pid, decision ("allow"/"deny": what happened), verdict
// (allow/deny/ask/log: what the policy said), rule (id, or null for the
// policy's default), builtin, message (null if none), source, layer, errno
// (null if unknown), enforced, count.  proc_id, ppid and exe are null when
// the process is unknown.  "identity" (its identities, policy/identity.h)
// only when it has any; "no_identity" (why it has none) when that is known.
nlohmann::json event_json(int64_t session, const EventRow& r);
// A net.* event also has "net": {proto, addr, port, hosts, names} (addr and
// port null for a unix socket; hosts the names a process asked for, names
// those and the CNAME names between).
nlohmann::json net_json(const NetObject& n);
// `cottonbox hosts --json`: session, host, names, addresses, proto, port
// (null for "dns", a name refused at resolution), actions, processes
// ({proc_id, pid, comm, events}), first, first_ns, last, last_ns, events,
// denied, asked, lookups, lookups_refused.
nlohmann::json host_json(int64_t session, const HostContact& h);
// The same plus "id" (the database row) and "approval" when the event was asked.
nlohmann::json event_json(const StoredEvent& e);
// asked, asked_ns, answered_ns, wait_ns, answered_by, answer, rule_written.
nlohmann::json approval_json(const ApprovalRow& a);
nlohmann::json session_json(const SessionSummary& s);
// Also "identity": the identities of its latest image (null when the trail
// did not record them), and "no_identity" as for events.
nlohmann::json process_json(const StoredProcess& p);

// "2026-11-29T20:51:22.123456789Z"
std::string iso8601_utc(int64_t ns);

// j[key] = bytes as text; j[key + "_b64"] = the exact bytes when they are not UTF-8.
void put_bytes(nlohmann::json& j, const std::string& key, std::string_view bytes);
void put_bytes_array(nlohmann::json& j, const std::string& key, const std::vector<std::string>& v);

}  // namespace cb::db
