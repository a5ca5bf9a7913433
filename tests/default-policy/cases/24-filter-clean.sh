#!/usr/bin/env bash
# 24-filter-clean: a clean filter driver (attributes from core.attributesFile) runs the deletion during git add
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
echo '*.c filter=nuke' > "$T/attributes"
git -c core.attributesFile="$T/attributes" -c filter.nuke.clean="sh -c 'rm -rf ${GIT_HISTORY[*]}; cat'" \
    add src/util.c >/dev/null 2>&1
attempted
