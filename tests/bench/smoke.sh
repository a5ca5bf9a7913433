#!/usr/bin/env bash
# ctest bench_smoke: `bench/run.sh --quick` must finish with status 0 and
# print its tables.  Timings are printed, never judged.
set -u
out=$("$@" 2>&1)
status=$?
echo "$out"
fail() { echo "bench_smoke: $*" >&2; exit 1; }
[ "$status" = 0 ] || fail "run.sh exited with status $status"
for want in '^== Machine' '^== Workload \(median of' '^== Single syscalls' '^== Launch' '^== Ingest' \
            '^tmpfs +native|^[a-z0-9]+ +native' '^native +[0-9]' 'events/s committed' '^Cleanup: +stray processes: 0;'; do
    grep -Eq -- "$want" <<< "$out" || fail "no line matching /$want/ in the output"
done
! grep -q '^FAILED:' <<< "$out" || fail "a measurement failed (FAILED lines above)"
# The tracer's floor is measured wherever it can be: built, and run as root.
bin_dir=""
for ((i = 1; i < $#; i++)); do [ "${!i}" = --bin-dir ] && { j=$((i + 1)); bin_dir=${!j}; }; done
if [ -n "$bin_dir" ] && [ -x "$bin_dir/bench_tracer_floor" ] && [ "$(id -u)" = 0 ]; then
    grep -Eq '^[a-z]+ +bare tracer floor' <<< "$out" || fail "bench_tracer_floor is built and we are root, but its workload row is missing"
    grep -Eq '^getppid under tracer-floor: ' <<< "$out" || fail "no getppid figure for the tracer floor"
fi
echo "bench_smoke: ok"
