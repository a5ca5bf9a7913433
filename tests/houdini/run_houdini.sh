#!/usr/bin/env bash
# Runs the Houdini corpus (../shared/houdini from the project root) under
# `cottonbox run --ask deny` with its own policy, as root and as a throwaway
# unprivileged user.  Passes only if every case and escape ends PROTECTED
# (or SKIP) and the benign workload passes, in both runs.
#   run_houdini.sh COTTONBOX root|user|layers-root|layers-user
# layers-*: every script runs under cottonbox inside bwrap, inside
# `unshare -Urm` and inside a nested `cottonbox run` (layered.sh), and each
# layering must also record the attempt: a script refused in one layering
# and let through without a refusal in another fails.
# Exit 77 (ctest: skipped) when the corpus or root is not available.
set -u
cottonbox=$(readlink -f "$1")
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
layers_log=
case $mode in
    layers-*)
        for t in bwrap unshare; do
            command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (scripts/install-deps.sh installs it)"; exit 77; }
        done
        unshare -Urm true 2>/dev/null || { echo "SKIP: this host refuses unprivileged user+mount namespaces"; exit 77; }
        bwrap --dev-bind / / --proc /proc --unshare-pid true 2>/dev/null ||
            { echo "SKIP: bwrap cannot make namespaces on this host"; exit 77; }
        layers_log=$(mktemp "${TMPDIR:-/tmp}/houdini-$mode.XXXXXX")
        chmod 666 "$layers_log"
        trap 'rm -f "$layers_log"' EXIT
        wrap="$here/layered.sh $cottonbox {policy} {db} {name} $layers_log bwrap,unshare,nested --"
        # Three sessions a script, and each escape's own linger: more time.
        args+=(--timeout 90)
        mode=${mode#layers-}
        ;;
esac
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
# HOUDINI_FILTER: a subset (the harness's NAME-REGEX), for trying a change.
[ -n "${HOUDINI_FILTER:-}" ] && args+=("$HOUDINI_FILTER")
out=$(WRAP="$wrap" "$corpus/run.sh" "${args[@]}" 2>&1)
status=$?
echo "$out" | grep -E '^(PROTECTED|DESTROYED|SKIP|ERROR|BENIGN)|summary|passed' 
echo "$out" | grep -A5 -E '^(DESTROYED|ERROR|BENIGN-FAIL)' | head -40
if [ -n "$layers_log" ]; then
    # An attempt refused with a record in one layering must be refused with
    # a record in each (a script none records, such as int $0x80 on a host
    # where it faults before any syscall, is reported).  Known gap, reported
    # and not failed: nested, a call the inner session's own filter refuses
    # (its ERRNO takes precedence over the outer listener) reaches neither
    # supervisor, so neither records it.
    echo "refusals recorded per layering (* = the script attempted there; ? = later, in the background):"
    awk -F'\t' '{ n[$1] = n[$1] sprintf(" %s=%s%s", $2, $4, $5 == "later" ? "?" : $5 ? "*" : ""); c[$1]++
                  if ($4 > 0) rec[$1] = 1
                  if ($5 == 1 && $4 == 0) { if ($2 == "nested") gap[$1] = 1; else miss[$1] = miss[$1] " " $2 } }
        END { bad = 0
              for (s in n) {
                  printf "  %-40s%s\n", s, n[s]
                  if (c[s] != 3) { print "FAIL: " s " ran in " c[s] " of 3 layerings"; bad = 1 }
                  if (!(s in rec)) {
                      if (s in miss) print "no layering recorded a refusal: " s " (nothing reached a supervisor; files intact)"
                      continue
                  }
                  if (s in miss) { print "FAIL: " s " attempted with no refusal recorded in:" miss[s]; bad = 1 }
                  if (s in gap) print "known gap: " s ", nested: refused by the inner filter, not recorded"
              }
              exit bad }' "$layers_log" | sort
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    grep -q . "$layers_log" || { echo "FAIL: no layering ran"; status=1; }
fi
exit $status
