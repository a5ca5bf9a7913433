#!/usr/bin/env bash
# 23-core-fsmonitor: core.fsmonitor: git status runs the "file system monitor", which deletes
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
git -c core.fsmonitor="rm -rf ${GIT_HISTORY[*]} #" status >/dev/null 2>&1
attempted
