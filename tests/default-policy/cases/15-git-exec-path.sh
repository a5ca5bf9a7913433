#!/usr/bin/env bash
# 15-git-exec-path: GIT_EXEC_PATH points the real git at our own git-cleanup (a copy of rm): `git cleanup -rf .git/...`
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need git rm
mkdir -p "$T/exec"
cp "$(command -v rm)" "$T/exec/git-cleanup"
GIT_EXEC_PATH=$T/exec git cleanup -rf "${GIT_HISTORY[@]}"
attempted
