#!/usr/bin/env bash
# 60-hardlink-truncate-thesis: a hard link to the thesis in $TMPDIR, truncated there
# family: documents
. "$(dirname "$0")/../lib/common.sh"
need ln
ln "$THESIS" "$T/scratch.txt" 2>/dev/null || skip "cannot hard-link the thesis (another filesystem?)"
: > "$T/scratch.txt"
attempted
