#!/usr/bin/env bash
# 29-core-pager: core.pager runs the deletion when git log pages its output (on a pseudo-terminal)
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git script
script -qec "git -c core.pager='rm -rf ${GIT_HISTORY[*]}; cat' log --oneline" /dev/null >/dev/null 2>&1
attempted
