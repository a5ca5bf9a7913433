#!/bin/sh
# docs/examples/orchestrator.py answers a real `cottonbox run --ask gui`:
# an allowed delete happens, a refused one does not, and the audit database
# records who answered.
#   orchestrator_test.sh COTTONBOX ORCHESTRATOR_PY
set -eu
cottonbox=$1
orchestrator=$2
python=$(command -v python3)
tmp=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/run" "$tmp/proj/keep" "$tmp/proj/scratch"
chmod 700 "$tmp/run"
echo precious > "$tmp/proj/keep/a.txt"
echo scratch > "$tmp/proj/scratch/b.txt"
cat > "$tmp/policy.yaml" <<'YAML'
version: 1
rules:
  - id: ask-delete
    action: file.delete
    path: ["${CWD}/**"]
    decision: ask
YAML
export XDG_RUNTIME_DIR="$tmp/run"
"$python" "$orchestrator" --once --allow '*/scratch/*' --name ci-bot > "$tmp/orchestrator.log" 2>&1 &
pid=$!
for _ in $(seq 50); do [ -S "$tmp/run/cottonbox/gui.sock" ] && break; sleep 0.1; done
cd "$tmp/proj"
status=0
"$cottonbox" run --ask gui --ask-timeout 20 --policy "$tmp/policy.yaml" --db "$tmp/audit.db" -- \
  sh -c 'rm keep/a.txt; rm scratch/b.txt' || status=$?
wait $pid
cat "$tmp/orchestrator.log"
[ "$status" -eq 0 ] || { echo "FAIL: cottonbox exited $status"; exit 1; }
[ -f keep/a.txt ] || { echo "FAIL: keep/a.txt was deleted"; exit 1; }
[ ! -e scratch/b.txt ] || { echo "FAIL: scratch/b.txt was not deleted"; exit 1; }
grep -q 'deny once' "$tmp/orchestrator.log" && grep -q 'allow once' "$tmp/orchestrator.log" ||
  { echo "FAIL: the orchestrator did not answer both asks"; exit 1; }
"$cottonbox" events --db "$tmp/audit.db" --json --decision ask > "$tmp/events.jsonl"
grep -q '"answered_by":"ci-bot"' "$tmp/events.jsonl" || { echo "FAIL: no approval by ci-bot"; cat "$tmp/events.jsonl"; exit 1; }
echo PASS
