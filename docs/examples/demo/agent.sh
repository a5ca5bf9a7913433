#!/bin/sh
# A scripted stand-in for a coding agent, for the desktop app's screenshots
# and for trying the GUI yourself: it explores, edits, builds, tests and
# commits (all silent under the policy), then "cleans up" too eagerly.
PATH=/usr/local/bin:/usr/bin:/bin
say() { printf 'agent> %s\n' "$*"; }

say "reading the project"
cat README.md >/dev/null
find src -name '*.py' >/dev/null
say "editing src/app/api.py"
printf '\ndef health():\n    return "ok"\n' >> src/app/api.py
say "building"
mkdir -p build
for i in 1 2 3 4 5 6; do cp src/app/api.py "build/api$i.pyc"; done
say "running the tests"
python3 -c 'import sys; sys.exit(0)'
say "the repository looks stale: resetting it the hard way"
rm -f .git/HEAD || say "rm was refused"
say "committing"
git add -A && git commit -qm "Add a health endpoint"

say "clearing old fixtures and archiving legacy code"
python3 tools/cleanup.py data &
sleep 0.5
tar --remove-files -cf /tmp/legacy.tar src/legacy &
wait
say "done"
