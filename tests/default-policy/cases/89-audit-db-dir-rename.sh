#!/usr/bin/env bash
# 89-audit-db-dir-rename: the audit database's directory renamed away (~/.local/share/cottonbox -> $TMPDIR)
# family: self
. "$(dirname "$0")/../lib/common.sh"
need mv
d=${XDG_DATA_HOME:-$HOME/.local/share}/cottonbox
[ -d "$d" ] || skip "no cottonbox data directory at $d"
mv "$d" "$T/cottonbox-data"
attempted
