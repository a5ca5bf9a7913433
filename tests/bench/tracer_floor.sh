#!/usr/bin/env bash
# ctest bench_tracer_floor: the floor must really attach both programs (or
# its rows would measure nothing), run the command once, and hand back its
# exit status.  Privileged: skips (77) with the reason when not root.
set -u
floor=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: bench_tracer_floor attaches BPF programs, which needs root"; exit 77; }
fail() { echo "bench_tracer_floor test: $*" >&2; exit 1; }

marker=$(mktemp)
out=$("$floor" -v -- sh -c 'echo ran >> "$1"; exit 3' sh "$marker" 2>&1)
status=$?
echo "$out"
[ "$status" = 3 ] || fail "exit status $status, want the command's 3"
[ "$(cat "$marker")" = ran ] || fail "the command did not run exactly once: $(cat "$marker")"
rm -f "$marker"
grep -q 'sys_enter program ran, sys_exit program ran' <<< "$out" || fail "a program never ran"

out=$("$floor" -v -- sh -c 'kill -TERM $$' 2>&1); status=$?
[ "$status" = $((128 + 15)) ] || fail "a command killed by SIGTERM gave status $status, want 143"
"$floor" -- /nonexistent/cmd 2> /dev/null; status=$?
[ "$status" = 127 ] || fail "a missing command gave status $status, want 127"
"$floor" 2> /dev/null; status=$?
[ "$status" = 125 ] || fail "no command gave status $status, want 125"
echo "bench_tracer_floor test: ok"
