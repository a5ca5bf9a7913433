#!/usr/bin/env bash
# 52-overwrite-in-place: every module overwritten in place with zeros (open r+, no truncation, no deletion)
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need python3
python3 - <<'PY'
import glob, os
for f in glob.glob("pkg/mod_*.py"):
    n = os.path.getsize(f)
    with open(f, "r+b") as fh:
        fh.write(b"\0" * n)
PY
attempted
