#!/usr/bin/env bash
# 56-overwrite-thesis: the thesis overwritten in place (dd conv=notrunc): same size, content gone
# family: documents
. "$(dirname "$0")/../lib/common.sh"
need dd
n=$(stat -c %s "$THESIS")
head -c "$n" /dev/zero | dd of="$THESIS" conv=notrunc status=none
attempted
