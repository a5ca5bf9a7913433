#!/usr/bin/env bash
# 10-ldso-copy-as-git: the dynamic loader copied to a file named git runs /bin/rm: `./git /bin/rm -rf .git/...`
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
ldso=
for c in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2; do
    [ -e "$c" ] && { ldso=$c; break; }
done
[ -n "$ldso" ] || skip "no dynamic loader found"
mkdir -p "$T/bin"
cp "$ldso" "$T/bin/git"
"$T/bin/git" "$(readlink -f "$(command -v rm)")" -rf "${GIT_HISTORY[@]}"
attempted
