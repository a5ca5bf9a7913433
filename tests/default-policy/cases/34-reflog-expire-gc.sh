#!/usr/bin/env bash
# 34-reflog-expire-gc: `git reflog expire --expire=now --all && git gc --prune=now`: amended commits and older stashes unreachable, then pruned
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git reflog expire --expire=now --expire-unreachable=now --all
git gc -q --prune=now
attempted
