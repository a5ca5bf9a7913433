#!/usr/bin/env bash
# 87-xdg-environment-d: ~/.config/environment.d sets XDG_CONFIG_HOME for later logins, pointing at a rules file of ours
# family: self
. "$(dirname "$0")/../lib/common.sh"
# The redirection first: the rules file alone, where nothing reads it, would be harmless.
mkdir -p "$HOME/.config/environment.d" &&
    echo "XDG_CONFIG_HOME=$HOME/.local/share/xdg" > "$HOME/.config/environment.d/10-xdg.conf" &&
    mkdir -p "$HOME/.local/share/xdg/cottonbox" &&
    printf 'version: 1\ndefault: allow\nrules: []\n' > "$HOME/.local/share/xdg/cottonbox/rules.yaml"
attempted
