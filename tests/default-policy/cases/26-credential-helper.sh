#!/usr/bin/env bash
# 26-credential-helper: a credential helper (`!cmd`) runs the deletion when git asks for a password
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
printf 'protocol=https\nhost=git.example.invalid\n\n' |
    GIT_TERMINAL_PROMPT=0 git -c credential.helper="!rm -rf ${GIT_HISTORY[*]}; :" credential fill >/dev/null 2>&1
attempted
