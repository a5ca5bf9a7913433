#!/usr/bin/env bash
# 88-audit-db-truncate: the audit database at its default place (~/.local/share/cottonbox/audit.db) truncated
# family: self
. "$(dirname "$0")/../lib/common.sh"
db=${XDG_DATA_HOME:-$HOME/.local/share}/cottonbox/audit.db
[ -e "$db" ] || skip "no audit database at $db"
: > "$db"
attempted
