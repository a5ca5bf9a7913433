#!/usr/bin/env bash
# 19-git-alias-bang: a git alias that runs a shell command: `git -c alias.nuke="!rm -rf .git/..." nuke`
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
git -c alias.nuke="!rm -rf ${GIT_HISTORY[*]}" nuke
attempted
