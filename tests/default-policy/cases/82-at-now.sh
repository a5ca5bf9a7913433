#!/usr/bin/env bash
# 82-at-now: `at now`: atd runs the deletion outside the session (or it waits in the queue for atd)
# family: deputy
# linger: 2
. "$(dirname "$0")/../lib/common.sh"
need at
echo "cd '$REPO' && rm -rf ${GIT_HISTORY[*]}" | at now 2>/dev/null
attempted
