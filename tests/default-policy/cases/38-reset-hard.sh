#!/usr/bin/env bash
# 38-reset-hard: `git reset --hard HEAD~2`: the uncommitted work in progress is gone
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git reset -q --hard HEAD~2
attempted
