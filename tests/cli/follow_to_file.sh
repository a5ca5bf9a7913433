#!/usr/bin/env bash
# docs/examples/follow-to-file.sh, as docs/log-shipping.md tells to run it:
# killed, with a line cut short at the end of its file, and started again,
# the file holds every event of the database once, in order.
#   follow_to_file.sh COTTONBOX SOURCE_DIR
set -euo pipefail
cb=$1
src=$2
work=$(mktemp -d /tmp/cb-follow.XXXXXX)
follower=
cleanup() { [ -n "$follower" ] && kill "$follower" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/bin" "$work/big"
ln -s "$cb" "$work/bin/cottonbox"
export PATH=$work/bin:$PATH
cd "$work"
printf 'version: 1\ndefault: allow\nrules:\n  - id: log-big\n    action: file.create\n    path: ["%s/big/**"]\n    decision: log\n' \
    "$work" > policy.yaml
session() { cottonbox run --policy policy.yaml --db "$work/audit.db" --ask deny -q -- \
    python3 -c 'import sys; [open("%s/big/%s%d" % (sys.argv[1], sys.argv[2], i), "w").close() for i in range(200)]' \
    "$work" "$1"; }
wait_for_last() {  # until the file's last line has the database's last id
    want=$(cottonbox events --db "$work/audit.db" --json | tail -n 1 | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
    for _ in $(seq 200); do
        [ "$(tail -n 1 events.jsonl 2>/dev/null | sed -n 's/.*"id":\([0-9]*\).*/\1/p')" = "$want" ] && return 0
        sleep 0.05
    done
    echo "FAIL: the follower did not catch up to event $want"; exit 1
}

"$src/docs/examples/follow-to-file.sh" "$work/events.jsonl" "$work/audit.db" &
follower=$!
session a
wait_for_last
kill "$follower"; wait "$follower" || true; follower=
printf '{"id":99999999,"path":"cut sh' >> events.jsonl  # a line cut short
session b
"$src/docs/examples/follow-to-file.sh" "$work/events.jsonl" "$work/audit.db" &
follower=$!
session c
wait_for_last
kill "$follower"; wait "$follower" || true; follower=
cottonbox events --db "$work/audit.db" --json > all.jsonl
python3 - <<'PY'
import json
got = [json.loads(l)["id"] for l in open("events.jsonl")]
want = [json.loads(l)["id"] for l in open("all.jsonl")]
assert got == want, (len(got), len(want))
print("follow-to-file: %d events, each once, in order, across a restart and a cut line" % len(got))
PY
