#!/usr/bin/env bash
# 47-mv-away-then-delete: the directory of 300 modules is moved out to $TMPDIR (one rename), then deleted there
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need mv rm
mv pkg "$T/pkg-old"
rm -rf "$T/pkg-old"
attempted
