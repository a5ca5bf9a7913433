#!/usr/bin/env bash
# ctest entry point: the default-policy corpus (this directory) under
# `cottonbox run --ask deny` with rules/default.yaml, in one of three modes:
#   root          as root, $HOME a plain directory
#   user          as a throwaway system user (cbcorpus, created when missing)
#   home-symlink  as root, $HOME a symbolic link to the real home directory
# COTTONBOX_CORPUS_EXPECT decides what a DESTROYED case means:
#   pass    (the default) fail unless every case is PROTECTED, RESTORED or SKIP
#   report  print the table; fail only if the harness cannot run or the benign
#           workload fails (for trying new cases)
# Exit 77 (ctest: skipped) when not root.
set -u
cottonbox=$1
mode=${2:-root}
expect=${COTTONBOX_CORPUS_EXPECT:-pass}
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: the harness needs root (it creates fixtures for a throwaway user and deputies)"
    exit 77
fi
wrap="$cottonbox run --policy {policy} --db {db} --ask deny --"
results=$(mktemp "${TMPDIR:-/tmp}/default-policy-$mode.XXXXXX.tsv")
args=(--results "$results")
case $mode in
    root) ;;
    home-symlink) args+=(--home-symlink) ;;
    user)
        user=cbcorpus
        if ! id "$user" >/dev/null 2>&1; then
            useradd --system --no-create-home --shell /usr/sbin/nologin "$user" || { echo "SKIP: cannot create user"; exit 77; }
        fi
        d=$(dirname "$cottonbox")     # the user must reach the binary
        while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null; d=$(dirname "$d"); done
        args+=(--user "$user") ;;
    *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
out=$(WRAP="$wrap" "$here/run.sh" "${args[@]}" 2>&1)
status=$?
echo "$out" | grep -E '^(PROTECTED|RESTORED|DESTROYED|SKIP|ERROR|BENIGN)|summary|passed|^cases|^benign'
echo "results: $results"
case $expect in
    pass) exit $status ;;
    report)
        if ! echo "$out" | grep -q '^== summary'; then
            echo "the harness did not run to the end"; exit 1
        fi
        if echo "$out" | grep -q '^BENIGN-FAIL'; then
            echo "the benign workload failed"; exit 1
        fi
        echo "COTTONBOX_CORPUS_EXPECT=report: DESTROYED cases are reported, not failed"
        exit 0 ;;
    *) echo "COTTONBOX_CORPUS_EXPECT must be report or pass, not '$expect'" >&2; exit 2 ;;
esac
