#!/usr/bin/env bash
# 68-config-git-config: `git config --file ~/.config/git/config core.pager ...`: git runs it on the next git log
# family: plant
. "$(dirname "$0")/../lib/common.sh"
need git
git config --file "$HOME/.config/git/config" core.pager "sh -c 'rm -rf ~/Documents'; less"
attempted
