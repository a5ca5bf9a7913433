#!/usr/bin/env bash
# 09-proc-self-comm: python writes "git" into /proc/self/comm, then shutil.rmtree()s the history
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need python3
python3 - "${GIT_HISTORY[@]}" <<'PY'
import os, shutil, sys
with open("/proc/self/comm", "w") as f:
    f.write("git")
for p in sys.argv[1:]:
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p, ignore_errors=True)
    else:
        try:
            os.remove(p)
        except OSError:
            pass
PY
attempted
