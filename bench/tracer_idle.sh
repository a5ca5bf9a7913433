#!/usr/bin/env bash
# What a system call made outside every session pays per idle live session
# (issue 21): a getppid (bench_syscalls) run natively, beside 0, 1 and 64
# idle `cottonbox run` sessions recorded through the resident tracer
# (`cottonbox tracer serve`), and beside the same numbers of sessions that
# each load a tracer of their own (the per-session tracer of old, kept
# selectable with COTTONBOX_FAKE_MISSING=tracer-service).  The cost is the
# calling thread's CPU time per call (bench_syscalls --cpu).  Reported,
# never asserted.  Root only.
#
#   bench/tracer_idle.sh [--cottonbox PATH] [--bin-dir DIR] [--counts LIST]
#                        [--backends service,private] [--reps N] [--iters N]
#
# One line per measurement on stdout:
#   backend=service sessions=64 rep=1 getppid_ns=1071.2
# The sessions wait on a FIFO (blocked in open: no syscall while idle); the
# service runs on a socket of its own, so the host's is never touched.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
cb="" bin_dir="" counts=0,1,64 backends=service,private reps=3 iters=20000
while [ $# -gt 0 ]; do
    case $1 in
        --cottonbox) cb=$2; shift 2 ;;
        --bin-dir) bin_dir=$2; shift 2 ;;
        --counts) counts=$2; shift 2 ;;
        --backends) backends=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --iters) iters=$2; shift 2 ;;
        *) echo "tracer_idle.sh: unknown option $1" >&2; exit 125 ;;
    esac
done
: "${cb:=$repo/build/app/cottonbox}"
: "${bin_dir:=$(dirname "$(dirname "$cb")")/bench}"
[ "$(id -u)" = 0 ] || { echo "tracer_idle.sh: needs root (it loads BPF programs)" >&2; exit 77; }
[ -x "$bin_dir/bench_syscalls" ] || { echo "tracer_idle.sh: no $bin_dir/bench_syscalls" >&2; exit 125; }

work=$(mktemp -d /tmp/cb-tracer-idle.XXXXXX)
mkdir -p /run/cottonbox
sockdir=/run/cottonbox/bench-$$
mkdir -p "$sockdir"
sock=$sockdir/tracer.sock
service=""
sessions=()
cleanup() {
    [ -z "$service" ] || kill "$service" 2>/dev/null || true
    # Any session still waiting gets its EOF.
    for f in "$work"/fifo.*; do [ -p "$f" ] && timeout 5 sh -c ": > '$f'" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work" "$sockdir"
}
trap cleanup EXIT

# CPU time of the calling thread: the syscall and the programs the kernel
# runs for it, not the turns of others on a shared machine.
getppid_ns() {
    "$bin_dir/bench_syscalls" --cpu --iters "$iters" "$work" | awk '/^op=getppid/ { for (i = 1; i <= NF; i++) if ($i ~ /^ns=/) { sub("ns=", "", $i); print $i } }'
}

# Starts n idle sessions with the backend's environment, waits until all run.
start_sessions() {
    local backend=$1 n=$2 tag=$3
    local fifo=$work/fifo.$tag
    mkfifo "$fifo"
    for ((i = 0; i < n; i++)); do
        if [ "$backend" = service ]; then
            env COTTONBOX_TRACER_SOCKET="$sock" "$cb" run -q --ask deny --db "$work/$tag-$i.db" -- \
                /bin/sh -c "echo > '$work/up.$tag.$i'; read x < '$fifo'" > /dev/null 2>&1 &
            sessions+=($!)
        else
            env COTTONBOX_FAKE_MISSING=tracer-service COTTONBOX_TRACER_SOCKET="$sock.none" \
                "$cb" run -q --ask deny --db "$work/$tag-$i.db" -- \
                /bin/sh -c "echo > '$work/up.$tag.$i'; read x < '$fifo'" > /dev/null 2>&1 &
            sessions+=($!)
        fi
    done
    for ((t = 0; t < 6000; t++)); do
        if [ "$(find "$work" -maxdepth 1 -name "up.$tag.*" | wc -l)" -ge "$n" ]; then
            # What a session does once its command runs (the link walk,
            # the first flushes) is over before the measurement.
            sleep $((2 + n / 8))
            return 0
        fi
        sleep 0.05
    done
    echo "tracer_idle.sh: $backend: only $(find "$work" -maxdepth 1 -name "up.$tag.*" | wc -l) of $n sessions started" >&2
    return 1
}

stop_sessions() {
    local tag=$1
    timeout 30 sh -c ": > '$work/fifo.$tag'" 2>/dev/null || true
    [ ${#sessions[@]} -eq 0 ] || wait "${sessions[@]}" 2>/dev/null || true
    sessions=()
    rm -f "$work/fifo.$tag" "$work/up.$tag."* "$work/$tag-"*
}

IFS=, read -r -a count_list <<< "$counts"
IFS=, read -r -a backend_list <<< "$backends"
for ((rep = 1; rep <= reps; rep++)); do
    for backend in "${backend_list[@]}"; do
        if [ "$backend" = service ]; then
            "$cb" tracer serve --keep --socket "$sock" 2> "$work/service.log" &
            service=$!
            for ((t = 0; t < 500; t++)); do "$cb" tracer status --socket "$sock" > /dev/null 2>&1 && break; sleep 0.02; done
        fi
        for n in "${count_list[@]}"; do
            tag=$backend-$n-$rep
            if [ "$n" -gt 0 ]; then start_sessions "$backend" "$n" "$tag" || { stop_sessions "$tag"; continue; }; fi
            extra=""
            if [ "$backend" = service ]; then
                extra=" programs=$("$cb" tracer status --json --socket "$sock" | sed -n 's/.*"programs":\([0-9]*\).*/\1/p')"
            fi
            echo "backend=$backend sessions=$n rep=$rep getppid_ns=$(getppid_ns)$extra"
            [ "$n" -gt 0 ] && stop_sessions "$tag"
        done
        if [ -n "$service" ]; then
            kill "$service" 2>/dev/null || true
            wait "$service" 2>/dev/null || true
            service=""
        fi
    done
done
