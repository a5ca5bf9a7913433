#!/usr/bin/env bash
# 07-exec-a-git: rm run with argv[0] = git (bash exec -a)
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
( exec -a git rm -rf "${GIT_HISTORY[@]}" )
attempted
