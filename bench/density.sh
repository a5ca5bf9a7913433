#!/usr/bin/env bash
# How many sessions one machine holds: starts N sessions at once, each
# running `sleep`, waits until all run, and sums the proportional set size
# (Pss, /proc/PID/smaps_rollup) of every process of each session: the
# supervisor, the session's init and the command.  Pss shares what the
# sessions share (the binary, libraries) fairly among them.
#
#   bench/density.sh [-n N] [--cottonbox PATH] [-- PREFIX...]
#
# PREFIX is what runs `sleep` (default: cottonbox run -q --ask deny); each
# gets its own --db when it is cottonbox.  Run as root for the full
# session.  Prints the Pss per session and how many such sessions the
# memory available now would hold (memory alone: each session also takes
# a few processes and file descriptors).
set -euo pipefail
n=20 cb="" prefix=()
here=$(cd "$(dirname "$0")/.." && pwd)
while [ $# -gt 0 ]; do
    case $1 in
        -n) n=$2; shift 2 ;;
        --cottonbox) cb=$2; shift 2 ;;
        --) shift; prefix=("$@"); break ;;
        *) echo "usage: density.sh [-n N] [--cottonbox PATH] [-- PREFIX...]" >&2; exit 2 ;;
    esac
done
[ -n "$cb" ] || cb=$here/build/app/cottonbox
[ ${#prefix[@]} -gt 0 ] || prefix=("$cb" run -q --ask deny)
work=$(mktemp -d /tmp/cottonbox-density.XXXXXX)
pids=()
tree() {  # PID -> it and its descendants
    ps -e -o pid=,ppid= | awk -v root="$1" '{ kids[$2] = kids[$2] " " $1 }
        END { n = split(root, q, " "); for (i = 1; i <= n; i++) { print q[i]; m = split(kids[q[i]], k, " "); for (j = 1; j <= m; j++) q[++n] = k[j] } }'
}
cleanup() {
    for p in "${pids[@]}"; do kill -TERM $(tree "$p") 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
is_cb=0; [[ ${prefix[0]} == *cottonbox ]] && is_cb=1
for ((i = 0; i < n; i++)); do
    db=(); [ $is_cb = 1 ] && db=(--db "$work/s$i.db")
        if [ $is_cb = 1 ]; then
        "${prefix[0]}" "${prefix[@]:1:1}" "${db[@]}" "${prefix[@]:2}" -- sleep 600 > "$work/s$i.log" 2>&1 &
    else
        "${prefix[@]}" sleep 600 > "$work/s$i.log" 2>&1 &
    fi
    pids+=($!)
done
# Running: each session has its sleep.
for _ in $(seq 100); do
    up=0
    for p in "${pids[@]}"; do
        for q in $(tree "$p"); do [ "$(cat "/proc/$q/comm" 2>/dev/null)" = sleep ] && { up=$((up + 1)); break; }; done
    done
    [ $up = "$n" ] && break
    sleep 0.2
done
[ "$up" = "$n" ] || { echo "density.sh: only $up of $n sessions started" >&2; cat "$work/s0.log" >&2; exit 1; }
sleep 1
total=0 procs=0
for p in "${pids[@]}"; do
    for q in $(tree "$p"); do
        kb=$(awk '/^Pss:/ {print $2}' "/proc/$q/smaps_rollup" 2>/dev/null || echo 0)
        total=$((total + ${kb:-0})); procs=$((procs + 1))
    done
done
avail=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
per=$((total / n))
printf 'sessions: %d (%d processes)\nPss per session: %.1f MB\nmemory available: %.1f GB, enough for %d such sessions\n' \
    "$n" "$procs" "$(echo "$per / 1024" | bc -l)" "$(echo "$avail / 1048576" | bc -l)" $((avail / per))
