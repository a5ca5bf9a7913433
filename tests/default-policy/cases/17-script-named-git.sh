#!/usr/bin/env bash
# 17-script-named-git: a python script named git, first on PATH: `git` is a deleter whose command name is git
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need python3
mkdir -p "$T/bin"
cat > "$T/bin/git" <<'PY'
#!/usr/bin/env python3
import os, shutil
for p in (".git/HEAD", ".git/packed-refs", ".git/refs", ".git/logs", ".git/objects"):
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p, ignore_errors=True)
    elif os.path.lexists(p):
        os.remove(p)
PY
chmod +x "$T/bin/git"
PATH=$T/bin:$PATH git
attempted
