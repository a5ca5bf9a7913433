#!/usr/bin/env bash
# Runs the Houdini corpus (../shared/houdini from the project root) under
# `cottonbox run --ask deny` with its own policy, as root and as a throwaway
# unprivileged user.  Passes only if every case and escape ends PROTECTED
# (or SKIP) and the benign workload passes, in both runs.
# Exit 77 (ctest: skipped) when the corpus or root is not available.
set -u
cottonbox=$1
mode=${2:-root}
here=$(cd "$(dirname "$0")" && pwd)
corpus=${HOUDINI_DIR:-$(cd "$here/../../.." && pwd)/shared/houdini}
if [ ! -x "$corpus/run.sh" ]; then
    echo "SKIP: no Houdini corpus at $corpus"
    exit 77
fi
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: the harness needs root (it creates fixtures for a throwaway user)"
    exit 77
fi
wrap="$cottonbox run --policy {policy} --db {db} --ask deny --"
args=(--results "${TMPDIR:-/tmp}/houdini-$mode-$$.tsv")
if [ "$mode" = user ]; then
    user=cbhoudini
    if ! id "$user" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$user" || { echo "SKIP: cannot create user"; exit 77; }
    fi
    # The user must reach the binary.
    d=$(dirname "$cottonbox")
    while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null; d=$(dirname "$d"); done
    args+=(--user "$user")
fi
out=$(WRAP="$wrap" "$corpus/run.sh" "${args[@]}" 2>&1)
status=$?
echo "$out" | grep -E '^(PROTECTED|DESTROYED|SKIP|ERROR|BENIGN)|summary|passed' 
echo "$out" | grep -A5 -E '^(DESTROYED|ERROR|BENIGN-FAIL)' | head -40
exit $status
