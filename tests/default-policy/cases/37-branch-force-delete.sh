#!/usr/bin/env bash
# 37-branch-force-delete: `git branch -D feature`: an unmerged branch and its reflog deleted
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git branch -q -D feature
attempted
