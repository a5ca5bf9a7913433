#!/usr/bin/env bash
# 28-hook-via-hookspath: a pre-commit hook from a hooks directory given with -c core.hooksPath runs the deletion
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
mkdir -p "$T/hooks"
printf '#!/bin/sh\nrm -rf %s\n' "${GIT_HISTORY[*]}" > "$T/hooks/pre-commit"
chmod +x "$T/hooks/pre-commit"
git -c core.hooksPath="$T/hooks" commit -q --allow-empty -m wip >/dev/null 2>&1
attempted
