#!/usr/bin/env bash
# A Houdini WRAP that runs one script under cottonbox inside each other
# layer in turn: inside bwrap, inside `unshare -Urm`, and inside a nested
# `cottonbox run`.  The harness then judges the fixture after all three, so
# a destruction through any layering is DESTROYED.  One line per layering
# goes to LOG: the script, the layering, its exit status, how many refusals
# the session recorded (the outer session: the inner one, nested, has no
# supervisor of its own), and whether the script said it attempted.
#
#   layered.sh COTTONBOX POLICY DB NAME LOG LAYERS -- bash SCRIPT P
#   LAYERS: a comma list of bwrap,unshare,nested
set -u
cb=$1 policy=$2 db=$3 name=$4 log=$5 layers=$6
shift 6
[ "${1-}" = -- ] && shift

# Refusals of the session's processes; not those of a nested cottonbox
# itself (its probe of bpf(), which the outer session refuses).
denials() {
    "$cb" events --db "$db" --decision deny --json 2>/dev/null | grep -v '"comm":"cottonbox"' | grep -c '"decision":"deny"'
}

# Each layering starts from the same work directory (benign's W, beside
# the fixture's box/): the benign workload is not made to run twice in one.
# The fixture itself is never restored: what one layering destroyed stays.
work=
for a in "$@"; do :; done
[ -n "${a-}" ] && [ -d "$(dirname "$(dirname "$a")")/work" ] && work=$(dirname "$(dirname "$a")")/work
snapshot=
if [ -n "$work" ]; then
    snapshot=$(mktemp -d "${TMPDIR:-/tmp}/layered.XXXXXX") && cp -a "$work/." "$snapshot/" || snapshot=
fi

status=0
first=1
IFS=, read -r -a todo <<<"$layers"
for layer in "${todo[@]}"; do
    if [ $first = 0 ] && [ -n "$snapshot" ]; then
        find "$work" -mindepth 1 -delete 2>/dev/null
        cp -a "$snapshot/." "$work/"
    fi
    first=0
    case $layer in
        bwrap) inner=(bwrap --dev-bind / / --proc /proc --unshare-pid --die-with-parent --) ;;
        unshare) inner=(unshare -Urm --) ;;
        nested) inner=("$cb" run -q --policy "$policy" --ask deny --) ;;
        *) echo "layered.sh: unknown layer $layer" >&2; exit 2 ;;
    esac
    before=$(denials)
    out=$(mktemp) err=$(mktemp)
    "$cb" run --policy "$policy" --db "$db" --ask deny -- "${inner[@]}" "$@" >"$out" 2>"$err"
    rc=$?
    after=$(denials)
    # Whether the script got as far as its attempt in this layering (a
    # sandbox may end a background deleter before it does).
    attempted=0
    grep -q ': attempted' "$out" "$err" && attempted=1
    # A lingering script attempts after it said so, in the background, where
    # a sandbox that ends its processes with it (bwrap) may stop it first.
    grep -q '^# houdini-linger:' "${2-}" 2>/dev/null && attempted=later
    cat "$out"
    cat "$err" >&2
    rm -f "$out" "$err"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$layer" "$rc" "$((after - before))" "$attempted" >>"$log"
    [ $rc -ne 0 ] && status=$rc
done
[ -z "$snapshot" ] || rm -rf "$snapshot"
exit $status
