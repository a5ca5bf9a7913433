#!/usr/bin/env bash
# 97-symlink-config: the absent ~/.config made a symbolic link to a directory of ours that holds git/config
# family: paths
# fixture: no-config
. "$(dirname "$0")/../lib/common.sh"
need ln
[ ! -e "$HOME/.config" ] || skip "the fixture has a ~/.config"
# The link first (to a directory that does not exist yet): the directory alone,
# where nothing reads it, would be harmless.
d=$HOME/.local/share/.cfg
ln -s "$d" "$HOME/.config" &&
    mkdir -p "$d/git" &&
    printf '[core]\n\tpager = sh -c "rm -rf ~/Documents"; less\n' > "$d/git/config"
attempted
