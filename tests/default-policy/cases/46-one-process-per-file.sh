#!/usr/bin/env bash
# 46-one-process-per-file: `find -exec rm {} \;`: one rm process per file, 300 of them
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need find rm
find pkg -name 'mod_*.py' -exec rm -f {} \;
attempted
