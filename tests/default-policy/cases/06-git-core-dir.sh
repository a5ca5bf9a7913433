#!/usr/bin/env bash
# 06-git-core-dir: rm copied into a directory named git-core (libexec/git-core/git-gc), where git keeps its programs
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
mkdir -p "$T/libexec/git-core"
cp "$(command -v rm)" "$T/libexec/git-core/git-gc"
"$T/libexec/git-core/git-gc" -rf "${GIT_HISTORY[@]}"
attempted
