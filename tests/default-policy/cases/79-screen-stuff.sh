#!/usr/bin/env bash
# 79-screen-stuff: `screen -S main -X stuff "rm -rf ...^M"`: typed into the user's screen session
# family: deputy
# deputy: screen
# linger: 3
. "$(dirname "$0")/../lib/common.sh"
need screen
screen -ls 2>/dev/null | grep -q '\.main' || skip "no screen session of the user's"
screen -S main -X stuff "cd '$REPO' && rm -rf ${GIT_HISTORY[*]}$(printf '\r')"
attempted
