#!/usr/bin/env bash
# 31-bisect-run: `git bisect run` runs a test command that deletes the history
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
git bisect start --no-checkout HEAD HEAD~3 >/dev/null 2>&1
git bisect run sh -c "rm -rf ${GIT_HISTORY[*]}; exit 0" >/dev/null 2>&1
git bisect reset -q >/dev/null 2>&1
attempted
