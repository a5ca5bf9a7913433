#!/usr/bin/env bash
# Sessions started per second: TOTAL sessions of `/bin/true`, C at a time,
# all into one audit database (new at each concurrency), as a swarm's
# orchestrator starts them.  Every session must exit 0 and be recorded;
# a refused or lost one is reported and fails the run.
#
#   bench/start_rate.sh [--cottonbox PATH] [--total N] [--levels 1,8,64] [-- EXTRA RUN OPTIONS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cb=$here/../build/app/cottonbox
total=64
levels=1,8,64
extra=()
while [ $# -gt 0 ]; do
    case $1 in
        --cottonbox) cb=$2; shift 2 ;;
        --total) total=$2; shift 2 ;;
        --levels) levels=$2; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        *) echo "start_rate.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
work=$(mktemp -d /tmp/cb-start-rate.XXXXXX)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
printf '%-12s %8s %10s %12s %8s\n' concurrency sessions "wall s" "sessions/s" recorded
status=0
IFS=, read -r -a cs <<<"$levels"
for c in "${cs[@]}"; do
    db=$work/c$c.db
    t0=$(now)
    # xargs keeps C running at once; each exit status is collected.
    seq "$total" | xargs -P "$c" -I{} bash -c '"$0" run -q --ask deny --db "$1" "${@:2}" -- /bin/true || echo "session {} exited $?" >&2' \
        "$cb" "$db" "${extra[@]}" 2>"$work/err" || true
    t1=$(now)
    recorded=$("$cb" sessions --db "$db" --json 2>/dev/null | grep -c '"exit_status":0' || true)
    awk -v c="$c" -v n="$total" -v a="$t0" -v b="$t1" -v r="$recorded" \
        'BEGIN { printf "%-12s %8d %10.2f %12.1f %8d\n", c, n, b - a, n / (b - a), r }'
    if [ "$recorded" -ne "$total" ] || [ -s "$work/err" ]; then
        echo "start_rate.sh: at concurrency $c, $recorded of $total sessions recorded with exit 0" >&2
        head -5 "$work/err" >&2
        status=1
    fi
done
exit $status
