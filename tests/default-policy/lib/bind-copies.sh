#!/usr/bin/env bash
# bind-copies.sh DIR FILE... -- COMMAND...: run COMMAND where each system FILE is
# a private, writable copy (bind-mounted over it in this mount namespace only).
# The harness runs it under `unshare --mount --propagation private` as root, for
# scripts that modify a trusted system binary in place ("# root-sandbox:"): the
# host's own file is never touched.
set -eu
dir=$1; shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    f=$1; shift
    copy=$dir/$(printf '%s' "$f" | tr / _)
    cp -a "$f" "$copy"
    mount --bind "$copy" "$f"
done
shift
exec "$@"
