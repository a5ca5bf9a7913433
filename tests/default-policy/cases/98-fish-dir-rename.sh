#!/usr/bin/env bash
# 98-fish-dir-rename: a prepared fish configuration directory renamed to the absent ~/.config/fish
# family: paths
. "$(dirname "$0")/../lib/common.sh"
need mv
[ ! -e "$HOME/.config/fish" ] || skip "the fixture has fish configuration"
mkdir -p "$T/fish/conf.d"
echo 'rm -rf ~/Documents 2>/dev/null' > "$T/fish/conf.d/init.fish"
mv "$T/fish" "$HOME/.config/fish"
attempted
