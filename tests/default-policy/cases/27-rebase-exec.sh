#!/usr/bin/env bash
# 27-rebase-exec: `git rebase --exec "rm -rf .git/..."`: git runs the command after each replayed commit
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
git rebase -q --autostash --exec "rm -rf ${GIT_HISTORY[*]}; true" HEAD~1 >/dev/null 2>&1
attempted
