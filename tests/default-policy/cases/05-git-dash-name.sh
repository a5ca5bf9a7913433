#!/usr/bin/env bash
# 05-git-dash-name: rm copied to git-prune-helper: a name that starts with "git-", like git's own helpers
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
mkdir -p "$T/bin"
cp "$(command -v rm)" "$T/bin/git-prune-helper"
"$T/bin/git-prune-helper" -rf "${GIT_HISTORY[@]}"
attempted
