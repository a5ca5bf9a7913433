#!/usr/bin/env bash
# 42-separate-git-dir: `git init --separate-git-dir=$TMPDIR/x` moves .git away (a gitfile remains), then the moved copy is deleted
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git init -q --separate-git-dir="$T/moved.git" . >/dev/null 2>&1
rm -rf "$T/moved.git"
attempted
