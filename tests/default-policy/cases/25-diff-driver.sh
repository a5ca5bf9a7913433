#!/usr/bin/env bash
# 25-diff-driver: an external diff driver (diff.x.command) runs the deletion during git diff
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
echo '* diff=nuke' > "$T/attributes"
git -c core.attributesFile="$T/attributes" -c diff.nuke.command="rm -rf ${GIT_HISTORY[*]} #" \
    diff >/dev/null 2>&1
attempted
