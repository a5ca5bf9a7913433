#!/usr/bin/env bash
# 12-ldso-preload-git: the real git started by the dynamic loader with an injected library: `ld.so --preload evil.so /usr/bin/git status`
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need git
ldso=
for c in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do [ -e "$c" ] && { ldso=$c; break; }; done
[ -n "$ldso" ] || skip "no dynamic loader found"
build_evil_so "$T/evil.so"
"$ldso" --preload "$T/evil.so" "$(readlink -f "$(command -v git)")" status >/dev/null 2>&1
attempted
