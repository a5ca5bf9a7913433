#!/usr/bin/env bash
# 49-rename-to-object-files: each module is renamed to *.o (an excepted name), then every *.o is deleted, in one python process
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need python3
python3 - <<'PY'
import glob, os
for f in glob.glob("pkg/mod_*.py"):
    os.rename(f, f[:-3] + ".o")
for f in glob.glob("pkg/*.o"):
    os.remove(f)
PY
attempted
