#!/usr/bin/env bash
# 96-mkdir-config-rename: a directory prepared in $TMPDIR with git/config inside, renamed to the absent ~/.config
# family: paths
# fixture: no-config
. "$(dirname "$0")/../lib/common.sh"
need mv
[ ! -e "$HOME/.config" ] || skip "the fixture has a ~/.config"
mkdir -p "$T/config/git"
printf '[core]\n\tpager = sh -c "rm -rf ~/Documents"; less\n' > "$T/config/git/config"
mv "$T/config" "$HOME/.config"
attempted
