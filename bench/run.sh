#!/usr/bin/env bash
# The cottonbox benchmark suite (issue 5): every mode side by side in the same
# run, interleaved, then a table of medians and ratios against native.
#
#   bench/run.sh [--quick] [--reps N] [OPTIONS]
#
#   --quick            a smoke run: --size tiny, 1 rep, tmpfs only, short micro
#                      and launch loops, small ingest (well under a minute)
#   --reps N           workload and microbenchmark repetitions per mode (default 3)
#   --size S           workload preset full|small|tiny (default full; --quick:
#                      tiny); --files/--seds/--compiles N override it
#   --fs LIST          tmpfs,disk (default both; --quick: tmpfs). tmpfs is
#                      /dev/shm, disk is /var/tmp (or $TMPDIR when it is on disk)
#   --workdir DIR      work in a fresh cottonbox-bench.XXXXXX under DIR instead
#                      (one filesystem, whichever DIR is on)
#   --modes LIST       subset of native,observe,seccomp,ebpf,ebpf-nokeep,floor,floor-all,
#                      floor-creates,tracer-floor,strace,bwrap,bwrap-pid,ebpf-bwrap,firejail
#                      (default: all available), and layer-notify, layer-tracer,
#                      layer-mounts, layer-landlock (only when named)
#   --only LIST        subset of workload,micro,launch,ingest,connect,idle (default
#                      all but connect and idle; those run only when named)
#   --launch-runs N    launches per mode (default 60, as 6 interleaved rounds)
#   --micro-iters N    iterations per batch of bench_syscalls (default 20000)
#   --ingest-events N  events per bench_store run (default 1000000)
#   --connect-requests N  requests per bench_connect run (default 10000)
#   --cottonbox PATH   the binary (default BUILD/app/cottonbox)
#   --bin-dir DIR      where bench_exec, bench_syscalls, bench_store are (BUILD/bench)
#   --build DIR        build directory (default build-bench, else build)
#   --results FILE     also keep the raw results (TSV) there
#   --keep             keep the work directories
#
# Modes (the workload always runs as the last argument of the prefix):
#   native     the command itself
#   observe    cottonbox run --observe --ask deny (the default policy; nothing blocked)
#   seccomp    cottonbox run --policy HOUDINI --ask deny --tracer seccomp
#   ebpf       cottonbox run --policy HOUDINI --ask deny --tracer seccomp,ebpf
#              (keeping for undo, the default; each run's store is measured)
#   ebpf-nokeep  the same with --no-keep: what keeping costs
#   floor      bench_notify_floor: the bare seccomp-notify supervisor (path read,
#              CONTINUE, no policy, no database) notifying what cottonbox does
#              for a file policy, opens only when writing/creating/truncating
#   floor-all  the same, notifying every open
#   floor-creates  the same, notifying only what creates a name (O_CREAT opens,
#              mkdir, link, symlink) and renames: what cottonbox's plan keeps
#              notified for the Houdini policy once the eBPF tracer records
#   tracer-floor  bench_tracer_floor: two programs on the raw sys_enter and
#              sys_exit tracepoints that stop where the tracer's own stop for a
#              syscall no rule records, and record nothing: what any tracer on
#              these tracepoints costs every syscall at the least (eBPF builds)
#   strace     strace -f -qq -o /dev/null
#   bwrap      bwrap --dev-bind / /
#   bwrap-pid  bwrap --dev-bind / / --proc /proc --unshare-pid --die-with-parent:
#              a sandbox with its own pid namespace, as agents' sandboxes are
#   ebpf-bwrap the ebpf mode's cottonbox around bwrap-pid: what a session adds
#              to a sandbox that runs inside it (compared with bwrap-pid alone)
#   firejail   firejail --quiet --noprofile (launch latency only)
#   layer-L    cottonbox run --policy HOUDINI --ask deny --layers L: one layer
#              alone (notify, tracer, mounts or landlock), for docs/labs/
# The launch table also has `cottonbox --help` (the binary's start, no session).
# HOUDINI is ../shared/houdini/policy.yaml.tmpl with ${PROTECT} = WORK/ref, a
# directory the workload reads (grep, gcc -I) and never modifies.  Every
# cottonbox run gets a fresh --db in the work directory.  A mode whose tool
# is missing, or which fails on `-- /bin/true`, is skipped with a note.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

quick=0 reps="" size="" files="" seds="" compiles="" fs_list="" workdir="" modes_arg="" only=""
launch_runs="" micro_iters="" ingest_events="" connect_requests="" cb="" bin_dir="" build="" results_copy="" keep=0
usage() { sed -n '2,/^set -e/p' "$0" | sed -n 's/^# \{0,1\}//p' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; shift ;;
        --reps) reps=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --files) files=$2; shift 2 ;;
        --seds) seds=$2; shift 2 ;;
        --compiles) compiles=$2; shift 2 ;;
        --fs) fs_list=$2; shift 2 ;;
        --workdir) workdir=$2; shift 2 ;;
        --modes) modes_arg=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --launch-runs) launch_runs=$2; shift 2 ;;
        --micro-iters) micro_iters=$2; shift 2 ;;
        --ingest-events) ingest_events=$2; shift 2 ;;
        --connect-requests) connect_requests=$2; shift 2 ;;
        --cottonbox) cb=$2; shift 2 ;;
        --bin-dir) bin_dir=$2; shift 2 ;;
        --build) build=$2; shift 2 ;;
        --results) results_copy=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) usage ;;
        *) echo "run.sh: unknown argument $1" >&2; usage ;;
    esac
done

# ---------------------------------------------------------------------------
# Settings
if [ "$quick" = 1 ]; then
    : "${reps:=1}" "${launch_runs:=6}" "${micro_iters:=2000}" "${ingest_events:=50000}" "${connect_requests:=1000}"
    wl_size=(--size tiny)
    micro_batches=3 launch_rounds=2 wl_timeout=300
    [ -n "$fs_list" ] || fs_list=tmpfs
else
    : "${reps:=3}" "${launch_runs:=60}" "${micro_iters:=20000}" "${ingest_events:=1000000}" "${connect_requests:=10000}"
    wl_size=(--size full)
    micro_batches=7 launch_rounds=6 wl_timeout=7200
    [ -n "$fs_list" ] || fs_list=tmpfs,disk
fi
[ -n "$size" ] && wl_size=(--size "$size")
[ -n "$files" ] && wl_size+=(--files "$files")
[ -n "$seds" ] && wl_size+=(--seds "$seds")
[ -n "$compiles" ] && wl_size+=(--compiles "$compiles")
[ "$launch_runs" -ge "$launch_rounds" ] || launch_rounds=$launch_runs
per_round=$(( (launch_runs + launch_rounds - 1) / launch_rounds ))
want() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
# Opt-in sections: only when --only names them.
want_named() { [[ ",$only," == *",$1,"* ]]; }

if [ -z "$build" ]; then
    for b in "$repo/build-bench" "$repo/build"; do
        if [ -x "$b/app/cottonbox" ]; then build=$b; break; fi
    done
    : "${build:=$repo/build-bench}"
fi
: "${cb:=$build/app/cottonbox}"
: "${bin_dir:=$build/bench}"
missing=()
for t in bench_exec bench_syscalls bench_store bench_notify_floor; do [ -x "$bin_dir/$t" ] || missing+=("$t"); done
if want_named connect; then [ -x "$bin_dir/bench_connect" ] || missing+=(bench_connect); fi
# Only eBPF builds have the tracer's floor: built when the build knows it.
[ -x "$bin_dir/bench_tracer_floor" ] || ! grep -qs 'bench_tracer_floor' "$build/build.ninja" "$build/Makefile" ||
    missing+=(bench_tracer_floor)
[ -x "$cb" ] || missing+=(cottonbox)
if [ ${#missing[@]} -gt 0 ]; then
    if [ -f "$build/build.ninja" ] || [ -f "$build/Makefile" ]; then
        echo "run.sh: building ${missing[*]} in $build" >&2
        cmake --build "$build" --target "${missing[@]}" >&2 ||
            { echo "run.sh: build failed; is $build configured with tests on (tests/bench adds bench/)?" >&2; exit 1; }
    else
        echo "run.sh: missing ${missing[*]}; build them first:" >&2
        echo "  cmake -S $repo -B $build -G Ninja -DCOTTONBOX_WITH_GUI=OFF && ninja -C $build bench_all" >&2
        exit 1
    fi
fi
cb=$(readlink -f "$cb")
bexec=$bin_dir/bench_exec
policy_tmpl=${HOUDINI_DIR:-$(cd "$repo/.." && pwd)/shared/houdini}/policy.yaml.tmpl
policy_note=""
if [ ! -f "$policy_tmpl" ]; then
    # Without the corpus (a clean checkout elsewhere): its policy's one rule.
    policy_note="no Houdini corpus at $policy_tmpl (set HOUDINI_DIR): the seccomp/ebpf modes enforce bench/houdini-policy.yaml.tmpl, the same rule"
    policy_tmpl=$here/houdini-policy.yaml.tmpl
fi

# ---------------------------------------------------------------------------
# Work directories, and cleanup that leaves nothing behind.
workdirs=() fs_names=()
mounts_before=$(wc -l < /proc/self/mountinfo)
# Processes left from a work directory: its path (with a slash after it) in the
# command line, or their cwd under it; never this shell, its ancestors or its
# own pipeline children.
ppid_of() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*) }; s=${s#* }; echo "${s%% *}"; }
strays() {  # WORKDIR -> pids
    local w=$1 p q keep=" $$ "
    q=$$
    while [ "$q" -gt 1 ] 2>/dev/null; do
        q=$(ppid_of "$q") || break
        keep+="$q "
    done
    { grep -alsF -- "$w/" /proc/[0-9]*/cmdline || true
      find /proc -mindepth 2 -maxdepth 2 -name cwd \( -lname "$w" -o -lname "$w/*" \) 2>/dev/null || true
    } | cut -d/ -f3 | sort -u | while read -r p; do
        [[ $keep == *" $p "* ]] && continue
        # Only what escaped this shell is a stray: its own descendants (the
        # grep and find above name WORKDIR too) are not, however deep.
        descends_from_us "$p" && continue
        [ -d "/proc/$p" ] && echo "$p"
    done
    return 0
}
descends_from_us() {  # PID: whether this shell is among its ancestors
    local q=$1 n
    for ((n = 0; n < 64; n++)); do
        q=$(ppid_of "$q") || return 1
        [ "$q" = $$ ] && return 0
        [ "$q" -gt 1 ] 2>/dev/null || return 1
    done
    return 1
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    local w p
    for w in "${workdirs[@]}"; do
        for p in $(strays "$w"); do kill -KILL "$p" 2>/dev/null || true; done
        [ "$keep" = 1 ] || rm -rf "$w"
    done
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$workdir" ]; then
    mkdir -p "$workdir"
    workdirs+=("$(mktemp -d "$(cd "$workdir" && pwd)/cottonbox-bench.XXXXXX")")
    t=$(df -PT "$workdir" | awk 'NR==2 {print $2}')
    fs_names+=("$([ "$t" = tmpfs ] && echo tmpfs || echo disk):$t")
else
    IFS=, read -r -a fs_req <<< "$fs_list"
    for f in "${fs_req[@]}"; do
        case $f in
            tmpfs) base=/dev/shm ;;
            disk) base=/var/tmp
                  t=${TMPDIR:-/tmp}
                  [ "$(stat -f -c %T "$t" 2>/dev/null)" != tmpfs ] && [ -d "$t" ] && base=$t ;;
            *) echo "run.sh: --fs: tmpfs or disk, not $f" >&2; exit 2 ;;
        esac
        if [ "$f" = tmpfs ] && [ "$(stat -f -c %T $base 2>/dev/null)" != tmpfs ]; then
            echo "note: /dev/shm is not tmpfs here; skipping the tmpfs work dir" >&2; continue
        fi
        if [ "$f" = disk ] && [ "$(stat -f -c %T $base)" = tmpfs ]; then
            echo "note: $base is tmpfs here; skipping the disk work dir" >&2; continue
        fi
        workdirs+=("$(mktemp -d "$base/cottonbox-bench.XXXXXX")")
        fs_names+=("$f:$(stat -f -c %T "$base")")
    done
fi
[ ${#workdirs[@]} -gt 0 ] || { echo "run.sh: no work directory" >&2; exit 1; }
main=${workdirs[0]}
res=$main/results.tsv
: > "$res"
for wd in "${workdirs[@]}"; do
    mkdir -p "$wd/db" "$wd/logs" "$wd/phases" "$wd/micro"
    sed "s#\${PROTECT}#$wd/ref#g" "$policy_tmpl" > "$wd/houdini.yaml"
    # The tarball and ref/ (the protected directory must exist before any session starts).
    "$here/workload.sh" "${wl_size[@]}" --prepare "$wd"
done
note() { echo "note: $*" >&2; printf 'note\t-\t-\t-\ttext\t%s\n' "$*" >> "$res"; }
[ -z "$policy_note" ] || note "$policy_note"
put() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$res"; }  # kind fs mode rep key value

# ---------------------------------------------------------------------------
# The machine.
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)
put meta - - - cpu "${cpu:-unknown}"
put meta - - - cores "$(nproc)"
put meta - - - kernel "$(uname -srm)"
put meta - - - memory "$mem"
put meta - - - load_start "$(cut -d' ' -f1-3 /proc/loadavg)"
# With BPF statistics on, the kernel times every run of every BPF program:
# the tracer's modes then pay ~0.1 µs more per syscall of the whole host.
if [ "$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)" != 0 ]; then
    note "kernel.bpf_stats_enabled is 1: every BPF program run is timed, which slows the eBPF tracer's modes (sysctl kernel.bpf_stats_enabled=0 before measuring)"
fi
# How busy the CPUs already are (other users' work), over one second.
cpu_busy() {  # -> "busy% steal%" since the /proc/stat line in $1 (or over 1 s)
    local a=${1:-} b
    [ -n "$a" ] || { a=$(head -1 /proc/stat); sleep 1; }
    b=$(head -1 /proc/stat)
    awk -v a="$a" -v b="$b" 'BEGIN { n = split(a, x, " "); split(b, y, " "); t = 0
        for (i = 2; i <= n; i++) t += y[i] - x[i]
        idle = (y[5] - x[5]) + (y[6] - x[6]); st = y[9] - x[9]
        if (t <= 0) t = 1
        printf "%.0f%% busy, %.1f%% steal", 100 * (t - idle) / t, 100 * st / t }'
}
put meta - - - busy_start "$(cpu_busy)"
stat_start=$(head -1 /proc/stat)
put meta - - - date "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
put meta - - - cottonbox "$cb ($(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?'))"
for i in "${!workdirs[@]}"; do
    put meta - - - "workdir" "${workdirs[$i]} ($(df -PT "${workdirs[$i]}" | awk 'NR==2 {print $2 " on " $1}'))"
done
put meta - - - workload "$(printf '%s ' "${wl_size[@]}")"
put meta - - - reps "$reps"

# ---------------------------------------------------------------------------
# Modes: PREFIX for a mode and a database path.
is_cb() { case $1 in observe|seccomp|ebpf|ebpf-nokeep|ebpf-bwrap|layer-*) return 0 ;; esac; return 1; }
bwrap_pid=(bwrap --dev-bind / / --proc /proc --unshare-pid --die-with-parent --)
prefix_for() {  # MODE DB WORKDIR
    case $1 in
        native) PREFIX=() ;;
        observe) PREFIX=("$cb" run --observe --ask deny --db "$2" --) ;;
        seccomp) PREFIX=("$cb" run --policy "$3/houdini.yaml" --ask deny --tracer seccomp --db "$2" --) ;;
        ebpf) PREFIX=("$cb" run --policy "$3/houdini.yaml" --ask deny --tracer seccomp,ebpf --db "$2" --) ;;
        ebpf-nokeep) PREFIX=("$cb" run --policy "$3/houdini.yaml" --ask deny --tracer seccomp,ebpf --no-keep --db "$2" --) ;;
        layer-*) PREFIX=("$cb" run -q --policy "$3/houdini.yaml" --ask deny --layers "${1#layer-}" --db "$2" --) ;;
        floor) PREFIX=("$bin_dir/bench_notify_floor" --) ;;
        floor-all) PREFIX=("$bin_dir/bench_notify_floor" --opens all --) ;;
        floor-creates) PREFIX=("$bin_dir/bench_notify_floor" --creates-only --) ;;
        tracer-floor) PREFIX=("$bin_dir/bench_tracer_floor" --) ;;
        cb-start) PREFIX=("$cb" --help) ;;  # launch only: ignores the command after it
        strace) PREFIX=(strace -f -qq -o /dev/null --) ;;
        bwrap) PREFIX=(bwrap --dev-bind / / --) ;;
        bwrap-pid) PREFIX=("${bwrap_pid[@]}") ;;
        ebpf-bwrap) PREFIX=("$cb" run --policy "$3/houdini.yaml" --ask deny --tracer seccomp,ebpf --db "$2" -- "${bwrap_pid[@]}") ;;
        firejail) PREFIX=(firejail --quiet --noprofile --) ;;
    esac
}
session_json() { "$cb" sessions --db "$1" --json 2>/dev/null | tail -1; }
json_field() {  # JSON KEY -> value (numbers, strings; "" if absent)
    python3 -c 'import json,sys
try: v = json.loads(sys.argv[1]).get(sys.argv[2], "")
except Exception: v = ""
print(v if not isinstance(v, list) else ";".join(map(str, v)))' "$1" "$2"
}

all_modes=(native observe seccomp ebpf ebpf-nokeep floor floor-all floor-creates tracer-floor strace bwrap bwrap-pid ebpf-bwrap
           firejail)
if [ -n "$modes_arg" ]; then IFS=, read -r -a req_modes <<< "$modes_arg"; else req_modes=("${all_modes[@]}"); fi
modes=()
for m in "${req_modes[@]}"; do
    case $m in
        native|floor|floor-all|floor-creates) ;;
        tracer-floor) [ -x "$bin_dir/bench_tracer_floor" ] || { note "bench_tracer_floor is not in $bin_dir (a build without eBPF): mode tracer-floor skipped"; continue; } ;;
        observe|seccomp|ebpf|ebpf-nokeep) ;;
        layer-notify|layer-tracer|layer-mounts|layer-landlock) ;;
        strace|bwrap|firejail) command -v "$m" > /dev/null || { note "$m is not installed: mode $m skipped"; continue; } ;;
        bwrap-pid|ebpf-bwrap) command -v bwrap > /dev/null || { note "bwrap is not installed: mode $m skipped"; continue; } ;;
        *) echo "run.sh: unknown mode $m" >&2; exit 2 ;;
    esac
    if [ "$m" != native ]; then
        db=$main/db/probe-$m.db
        prefix_for "$m" "$db" "$main"
        if ! out=$("${PREFIX[@]}" /bin/true 2>&1); then
            note "mode $m skipped: \`${PREFIX[*]##*/} /bin/true\` failed: $(echo "$out" | tail -2 | tr '\n' ' ')"
            continue
        fi
        if is_cb "$m"; then
            j=$(session_json "$db")
            tr=$(json_field "$j" tracer)
            put meta - "$m" - tracer "$tr"
            deg=$(json_field "$j" degraded)
            [ -z "$deg" ] || note "mode $m: session degraded: $deg"
            if [[ $m == ebpf* ]] && [[ $tr != *ebpf* ]]; then
                note "mode ebpf skipped: \`cottonbox run --tracer seccomp,ebpf\` ran but the session records tracer=\"$tr\" (the eBPF tracer is not in this build)"
                continue
            fi
        fi
        rm -f "$db" "$db"-*
    fi
    modes+=("$m")
done
[[ " ${modes[*]} " == *" native "* ]] || { echo "run.sh: the native mode is required (ratios are against it)" >&2; exit 2; }
wl_modes=() ; for m in "${modes[@]}"; do [ "$m" = firejail ] || wl_modes+=("$m"); done
put meta - - - modes "${modes[*]}"

rotate() {  # N WORDS...: the words rotated left by N, so each mode takes each slot in turn
    local n=$1; shift
    local a=("$@") k=${#a[@]} i
    for ((i = 0; i < k; i++)); do printf '%s\n' "${a[$(( (i + n) % k ))]}"; done
}
kv() { sed -n "s/.*\b$2=\([^ ]*\).*/\1/p" <<< "$1"; }  # LINE KEY

echo "cottonbox bench: modes ${modes[*]}; work ${workdirs[*]}; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# ---------------------------------------------------------------------------
# 1. The workload, interleaved: for each rep, every filesystem, every mode.
if want workload; then
    for wd in "${workdirs[@]}"; do
        # Warm-up: page cache, dynamic loader caches, gcc.
        "$bexec" --timeout "$wl_timeout" --log "$wd/logs/warmup.log" -- "$here/workload.sh" -q "${wl_size[@]}" "$wd" > /dev/null ||
            { echo "run.sh: the workload fails natively; see $wd/logs/warmup.log:" >&2; tail -5 "$wd/logs/warmup.log" >&2; exit 1; }
    done
    for ((rep = 1; rep <= reps; rep++)); do
        for i in "${!workdirs[@]}"; do
            wd=${workdirs[$i]} fs=${fs_names[$i]%%:*}
            for m in $(rotate $((rep - 1 + i)) "${wl_modes[@]}"); do
                # A directory per run: the keep store sits beside the database.
                mkdir -p "$wd/db/wl-$m-$rep"
                db=$wd/db/wl-$m-$rep/audit.db log=$wd/logs/wl-$fs-$m-$rep.log ph=$wd/phases/$m-$rep.txt
                prefix_for "$m" "$db" "$wd"
                rss=(); is_cb "$m" && rss=(--rss)
                line=$("$bexec" "${rss[@]}" --timeout "$wl_timeout" --log "$log" -- "${PREFIX[@]}" \
                       "$here/workload.sh" -q --phase-log "$ph" "${wl_size[@]}" "$wd" || true)
                st=$(kv "$line" status)
                printf '  workload %-5s rep %d %-8s %6.2f s%s\n' "$fs" "$rep" "$m" \
                    "$(awk -v u="$(kv "$line" wall_us)" 'BEGIN{print u/1e6}')" "$([ "$st" = 0 ] || echo "  FAILED (status $st)")" >&2
                if [ "$st" != 0 ]; then
                    put fail "$fs" "$m" "$rep" workload "status $st: $(tail -3 "$log" | tr '\n\t' '  ')"
                    rm -rf "$wd/w" "${db%/*}"
                    continue
                fi
                put wl "$fs" "$m" "$rep" wall_s "$(awk -v u="$(kv "$line" wall_us)" 'BEGIN{printf "%.3f", u/1e6}')"
                put wl "$fs" "$m" "$rep" cpu_s "$(awk -v u="$(kv "$line" user_us)" -v s="$(kv "$line" sys_us)" 'BEGIN{printf "%.3f", (u+s)/1e6}')"
                while read -r name secs; do put phase "$fs" "$m" "$rep" "$name" "$secs"; done < "$ph"
                if is_cb "$m"; then
                    put wl "$fs" "$m" "$rep" hwm_kb "$(kv "$line" hwm_kb)"
                    put wl "$fs" "$m" "$rep" sup_cpu_s "$(awk -v c="$(kv "$line" self_cpu_ms)" 'BEGIN{printf "%.2f", c/1000}')"
                    j=$(session_json "$db")
                    put wl "$fs" "$m" "$rep" events "$(json_field "$j" events)"
                    put wl "$fs" "$m" "$rep" lost "$(json_field "$j" events_lost)"
                    put wl "$fs" "$m" "$rep" db_mb "$(du -smc "$db" "$db"-* 2>/dev/null | awk 'END{print $1}')"
                    [ -d "${db%/*}/keep" ] && put wl "$fs" "$m" "$rep" keep_mb "$(du -sm "${db%/*}/keep" | cut -f1)"
                    grep -q 'degraded' "$log" && put note "$fs" "$m" "$rep" text "$(grep -m1 degraded "$log")"
                fi
                rm -rf "${db%/*}"
            done
        done
    done
fi

# ---------------------------------------------------------------------------
# 2. Single syscalls, interleaved, in the first work directory.
if want micro; then
    for ((rep = 1; rep <= reps; rep++)); do
        for m in $(rotate $((rep - 1)) "${wl_modes[@]}"); do
            db=$main/db/micro-$m-$rep.db log=$main/logs/micro-$m-$rep.log
            prefix_for "$m" "$db" "$main"
            rss=(); is_cb "$m" && rss=(--rss)
            line=$("$bexec" "${rss[@]}" --timeout 600 --log "$log" -- "${PREFIX[@]}" \
                   "$bin_dir/bench_syscalls" --iters "$micro_iters" --batches "$micro_batches" "$main/micro" || true)
            if [ "$(kv "$line" status)" != 0 ]; then
                put fail - "$m" "$rep" micro "status $(kv "$line" status): $(tail -3 "$log" | tr '\n\t' '  ')"
                continue
            fi
            while read -r l; do
                [[ $l == op=* ]] || continue
                put micro - "$m" "$rep" "$(kv "$l" op)" "$(kv "$l" ns)"
            done < "$log"
            if is_cb "$m"; then
                j=$(session_json "$db")
                ev=$(json_field "$j" events)
                put micro - "$m" "$rep" events "$ev"
                put micro - "$m" "$rep" hwm_kb "$(kv "$line" hwm_kb)"
                put micro - "$m" "$rep" sup_cpu_s "$(awk -v c="$(kv "$line" self_cpu_ms)" 'BEGIN{printf "%.2f", c/1000}')"
                rm -f "$db" "$db"-*
            fi
            echo "  micro rep $rep $m done" >&2
        done
    done
fi

# ---------------------------------------------------------------------------
# 3. Launch latency: X -- /bin/true, interleaved rounds.
if want launch; then
    launch_modes=("${modes[@]}")
    for m in "${modes[@]}"; do is_cb "$m" && { launch_modes+=(cb-start); break; }; done
    for ((round = 1; round <= launch_rounds; round++)); do
        for m in $(rotate $((round - 1)) "${launch_modes[@]}"); do
            prefix_for "$m" "$main/db/launch-{n}.db" "$main"
            out=$("$bexec" --runs "$per_round" --tag "$m-$round" --timeout 60 \
                  --log "$main/logs/launch-$m.log" -- "${PREFIX[@]}" /bin/true || true)
            while read -r l; do
                [ -n "$l" ] || continue
                if [ "$(kv "$l" status)" = 0 ]; then
                    put launch - "$m" "$round" wall_ms "$(awk -v u="$(kv "$l" wall_us)" 'BEGIN{printf "%.3f", u/1000}')"
                else
                    put fail - "$m" "$round" launch "status $(kv "$l" status)"
                fi
            done <<< "$out"
            rm -f "$main"/db/launch-*
        done
    done
    echo "  launch: $launch_rounds rounds x $per_round per mode done" >&2
fi

# ---------------------------------------------------------------------------
# 4. Ingest: bench_store (events/s through the store, and how many were lost).
if want ingest; then
    for ((rep = 1; rep <= reps; rep++)); do
        rm -f "$main/db/store.db"*
        if out=$("$bin_dir/bench_store" --events "$ingest_events" --db "$main/db/store.db" 2>&1); then :; fi
        rate=$(sed -n 's/^committed:.*-> \([0-9.]*\) events\/s.*/\1/p' <<< "$out")
        indb=$(sed -n 's/^in database: *\([0-9]*\).*/\1/p' <<< "$out")
        if [ -z "$rate" ] || [ -z "$indb" ]; then
            put fail - store "$rep" ingest "$(tail -2 <<< "$out" | tr '\n\t' '  ')"
            continue
        fi
        put ingest - store "$rep" events_per_s "$rate"
        put ingest - store "$rep" lost "$((ingest_events - indb))"
        put ingest - store "$rep" events "$ingest_events"
        wcpu=$(sed -n 's/^writer CPU: *\([0-9.]*\) us\/event.*/\1/p' <<< "$out")
        [ -z "$wcpu" ] || put ingest - store "$rep" writer_us "$wcpu"
        echo "  ingest rep $rep: $rate events/s, $((ingest_events - indb)) lost" >&2
    done
    rm -f "$main/db/store.db"*
fi

# ---------------------------------------------------------------------------
# 5. Connects (opt-in: --only connect): bench_connect's client makes N HTTP
# requests, each over a new TCP connection, to its server on 127.0.0.1
# (started here, natively, once for every mode): natively, under cottonbox
# with host rules (bench/hosts-policy.yaml: loopback allowed by rule, other
# addresses denied, so every connect is decided), and under the bare notify
# floor notifying connect too.  Interleaved like the rest.  The unix variant
# connects to a server listening on a unix socket outside the session, under
# the default policy too, whose deputy rules ask who serves the socket
# (net.server: host/unix_servers.h).
if want_named connect; then
    port_file=$main/connect.port
    unix_sock=$main/connect.sock
    rm -f "$port_file"
    "$bin_dir/bench_connect" serve --port-file "$port_file" --idle 120 > "$main/logs/connect-server.log" 2>&1 &
    server=$!
    "$bin_dir/bench_connect" serve --unix "$unix_sock" --port-file "$main/connect-unix.port" --idle 120 \
        > "$main/logs/connect-unix-server.log" 2>&1 &
    unix_server=$!
    for ((i = 0; i < 100; i++)); do [ -s "$port_file" ] && break; sleep 0.05; done
    port=$(cat "$port_file" 2>/dev/null || true)
    if [ -z "$port" ]; then
        note "connect: the loopback server did not start: $(tail -2 "$main/logs/connect-server.log" | tr '\n' ' ')"
    else
        put meta - - - connect_requests "$connect_requests"
        conn_modes=(native cb-hosts cb-default floor-connect)
        db=$main/db/probe-hosts.db
        if ! out=$("$cb" run --policy "$here/hosts-policy.yaml" --ask deny --tracer seccomp --db "$db" -q -- \
                   "$bin_dir/bench_connect" get --port "$port" --requests 10 --batches 1 2>&1); then
            note "connect: mode cb-hosts skipped: $(echo "$out" | tail -2 | tr '\n' ' ')"
            conn_modes=(native floor-connect)
        fi
        rm -f "$db" "$db"-*
        # Each mode connects both ways: blocking (cottonbox carries such a
        # connect out on a worker thread) and non-blocking, as event loops do.
        for ((rep = 1; rep <= reps; rep++)); do
            for m in $(rotate $((rep - 1)) "${conn_modes[@]}"); do
                for variant in blocking nonblocking unix; do
                    db=$main/db/connect-$m-$variant-$rep.db log=$main/logs/connect-$m-$variant-$rep.log
                    case $m in
                        native) PREFIX=() ;;
                        cb-hosts) PREFIX=("$cb" run --policy "$here/hosts-policy.yaml" --ask deny --tracer seccomp --db "$db" --) ;;
                        cb-default) PREFIX=("$cb" run --policy "$here/../rules/default.yaml" --ask deny --tracer seccomp --db "$db" --) ;;
                        floor-connect) PREFIX=("$bin_dir/bench_notify_floor" --connect --) ;;
                    esac
                    rss=(); case $m in cb-*) rss=(--rss) ;; esac
                    to=(--port "$port")
                    case $variant in nonblocking) to+=(--nonblocking) ;; unix) to=(--unix "$unix_sock") ;; esac
                    line=$("$bexec" "${rss[@]}" --timeout 600 --log "$log" -- "${PREFIX[@]}" \
                           "$bin_dir/bench_connect" get "${to[@]}" --requests "$connect_requests" --batches 5 || true)
                    if [ "$(kv "$line" status)" != 0 ]; then
                        put fail "$variant" "$m" "$rep" connect "status $(kv "$line" status): $(tail -3 "$log" | tr '\n\t' '  ')"
                        continue
                    fi
                    l=$(grep -m1 '^op=connect' "$log" || true)
                    put connect "$variant" "$m" "$rep" ns "$(kv "$l" ns)"
                    put connect "$variant" "$m" "$rep" cpu_s "$(awk -v u="$(kv "$line" user_us)" -v s="$(kv "$line" sys_us)" 'BEGIN{printf "%.3f", (u+s)/1e6}')"
                    if [ "$m" = cb-hosts ] || [ "$m" = cb-default ]; then
                        j=$(session_json "$db")
                        put connect "$variant" "$m" "$rep" events "$(json_field "$j" events)"
                        put connect "$variant" "$m" "$rep" denials "$(json_field "$j" denials)"
                        put connect "$variant" "$m" "$rep" hwm_kb "$(kv "$line" hwm_kb)"
                        put connect "$variant" "$m" "$rep" sup_cpu_s "$(awk -v c="$(kv "$line" self_cpu_ms)" 'BEGIN{printf "%.2f", c/1000}')"
                        rm -f "$db" "$db"-*
                    fi
                    echo "  connect rep $rep $m $variant: $(kv "$l" ns) ns/request" >&2
                done
            done
        done
    fi
    kill "$server" "$unix_server" 2>/dev/null || true
    wait "$server" "$unix_server" 2>/dev/null || true
fi

# ---------------------------------------------------------------------------
# 6. Idle sessions (opt-in: --only idle; root): what a getppid made outside
# every session pays beside 0, 1 and 64 idle live sessions, recorded by the
# resident tracer and by a tracer per session (bench/tracer_idle.sh).
if want_named idle; then
    while read -r line; do
        case $line in backend=*) ;; *) continue ;; esac
        put idle - "$(kv "$line" backend)-$(kv "$line" sessions)" "$(kv "$line" rep)" getppid_ns "$(kv "$line" getppid_ns)"
        echo "  idle $line" >&2
    done < <("$here/tracer_idle.sh" --cottonbox "$cb" --bin-dir "$bin_dir" --reps "$reps" \
                 --iters "$micro_iters" 2> "$main/logs/tracer-idle.log" || true)
fi

# ---------------------------------------------------------------------------
put meta - - - load_end "$(cut -d' ' -f1-3 /proc/loadavg)"
put meta - - - busy_run "$(cpu_busy "$stat_start")"
# Nothing may be left behind: no process from a work directory, no new mount.
stray=0
for w in "${workdirs[@]}"; do stray=$((stray + $(strays "$w" | wc -l))); done
mounts_after=$(wc -l < /proc/self/mountinfo)
put meta - - - cleanup "stray processes: $stray; mounts: $mounts_before before, $mounts_after after"
[ -z "$results_copy" ] || cp "$res" "$results_copy"
python3 "$here/report.py" "$res"
