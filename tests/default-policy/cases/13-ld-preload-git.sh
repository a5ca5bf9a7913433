#!/usr/bin/env bash
# 13-ld-preload-git: LD_PRELOAD=evil.so git status: the real git runs an injected constructor
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need git
build_evil_so "$T/evil.so"
LD_PRELOAD=$T/evil.so git status >/dev/null 2>&1
attempted
