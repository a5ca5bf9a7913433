#!/usr/bin/env bash
# 22-core-sshcommand: core.sshCommand runs the deletion when git "fetches" from an ssh URL
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
git -c core.sshCommand="rm -rf ${GIT_HISTORY[*]} #" fetch -q ssh://build.example.invalid/project.git >/dev/null 2>&1
attempted
