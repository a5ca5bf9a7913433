#!/usr/bin/env bash
# 01-copy-rm-as-git: a copy of rm named git deletes the history (`cp /bin/rm bin/git; bin/git -rf .git/...`)
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
mkdir -p "$T/bin"
cp "$(command -v rm)" "$T/bin/git"
"$T/bin/git" -rf "${GIT_HISTORY[@]}"
attempted
