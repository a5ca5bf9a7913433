#!/usr/bin/env bash
# 21-git-editor: GIT_EDITOR runs the deletion while git waits for a commit message
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
GIT_EDITOR="rm -rf ${GIT_HISTORY[*]} #" git commit -q --allow-empty >/dev/null 2>&1
attempted
