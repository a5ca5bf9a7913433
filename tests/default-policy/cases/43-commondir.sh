#!/usr/bin/env bash
# 43-commondir: a .git/commondir file hands the repository to another directory (with a config of ours): history gone from view, our config in force
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git init -q --bare "$T/common.git"
git -C "$T/common.git" config core.fsmonitor "rm -rf $REPO/src #"
printf '%s\n' "$T/common.git" > .git/commondir
attempted
