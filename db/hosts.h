// "Which hosts did this session reach, and who?": the pure part of
// `cottonbox hosts`, folding a session's net.* events and its resolver's
// lookups into one row per host and port.
#pragma once

#include <vector>

#include "db/store.h"

namespace cb::db {

// One row per (first name resolved for the address, or the address; port;
// protocol), in order of first contact; names refused at resolution that
// no event reached follow, as rows of proto "dns".  Events without an IP
// address (unix sockets) are left out.
std::vector<HostContact> summarize_hosts(const std::vector<StoredEvent>& events,
                                         const std::vector<StoredLookup>& lookups);

}  // namespace cb::db
