#!/usr/bin/env bash
# Quick start, step 1: install, build, and watch cottonbox stop an agent
# that deletes a repository's history with rm, tar --remove-files and
# python, under the shipped rules/default.yaml and the default database.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# Only what the demo runs: the tests and the GUI are built by test.sh.
"$here/scripts/build.sh" cottonbox
cb="$here/build/app/cottonbox"

work=$(mktemp -d /tmp/cottonbox-demo.XXXXXX)
cp "$here/demo/agent.sh" "$work/"
cd "$work"
git init -q . && git -c user.name=demo -c user.email=demo@example.invalid commit -q --allow-empty -m "initial"
git config user.name demo && git config user.email demo@example.invalid
echo "== a demo repository in $work; its .git is what the agent goes after"
echo "== cottonbox run -- ./agent.sh   (policy: rules/default.yaml, database: default)"
set +e
"$cb" run --name demo --ask deny -- ./agent.sh
status=$?
set -e
echo
echo "== the agent exited with $status; the repository is intact:"
git log --oneline | sed 's/^/   /'
ls .git/HEAD .git/config .git/index | sed 's/^/   /'
session=$("$cb" sessions --json | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
echo
echo "== cottonbox events --session $session --decision deny"
"$cb" events --session "$session" --decision deny
echo
echo "== cottonbox tree --session $session"
"$cb" tree --session "$session"
echo
echo "(all of it: cottonbox events --session $session; as JSON: add --json)"
