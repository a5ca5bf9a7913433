#!/usr/bin/env bash
# 20-git-alias-shell: a git alias that starts a shell, fed commands on stdin: every command of that shell is a child of git
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
git -c alias.sh='!sh' sh <<SH
rm -rf ${GIT_HISTORY[*]}
SH
attempted
