#!/usr/bin/env bash
# 96-mkdir-config-rename: a directory prepared in $TMPDIR with git/config inside, renamed to the absent ~/.config
# family: paths
# fixture: no-config
. "$(dirname "$0")/../lib/common.sh"
need mv
# The fixture has no ~/.config; cottonbox makes ~/.config/cottonbox before
# a session (so that it is one read-only mount), and the name is taken then.
mkdir -p "$T/config/git"
printf '[core]\n\tpager = sh -c "rm -rf ~/Documents"; less\n' > "$T/config/git/config"
mv "$T/config" "$HOME/.config"
attempted
