#!/usr/bin/env bash
# 41-stash-drop-clear: `git stash drop` then `git stash clear`: stashed experiments gone
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git stash drop -q
git stash clear
attempted
