#!/bin/sh
# Appends every event of every cottonbox session to a JSON-lines file, as
# sessions commit them, and resumes after the last event in the file when it
# starts again: run it as a service (Restart=always) and point a log shipper
# (Vector, Fluent Bit, ...) at the file.  docs/log-shipping.md.
#
#   follow-to-file.sh [EVENTS_FILE] [AUDIT_DB]
set -eu
out=${1:-/var/log/cottonbox/events.jsonl}
db=${2:-${XDG_DATA_HOME:-$HOME/.local/share}/cottonbox/audit.db}
mkdir -p "$(dirname "$out")"
touch "$out"
# A line cut short by a crash or a full disk is dropped: it is written
# again whole, since resuming starts after the last whole line.
if [ -s "$out" ] && [ "$(tail -c 1 "$out" | od -An -tx1 | tr -d ' \n')" != "0a" ]; then
    keep=$(( $(wc -c < "$out") - $(tail -n 1 "$out" | wc -c) ))
    truncate -s "$keep" "$out"
fi
last=$(tail -n 1 "$out" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
exec cottonbox events --follow --json --db "$db" --after "${last:-0}" >> "$out"
