#!/usr/bin/env bash
# 32-make-recipe: a make target whose recipe deletes the history (make -f elsewhere)
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need make
printf 'nuke:\n\trm -rf %s\n' "${GIT_HISTORY[*]}" > "$T/Makefile"
make -s -f "$T/Makefile" nuke >/dev/null 2>&1
attempted
