#!/usr/bin/env bash
# 86-rules-dir-replace: the cottonbox configuration directory moved aside and replaced by one of ours
# family: self
# fixture: user-rules
. "$(dirname "$0")/../lib/common.sh"
need mv
c=${XDG_CONFIG_HOME:-$HOME/.config}
mkdir -p "$T/cottonbox"
printf 'version: 1\ndefault: allow\nrules: []\n' > "$T/cottonbox/rules.yaml"
mv "$c/cottonbox" "$T/cottonbox.old"
mv "$T/cottonbox" "$c/cottonbox"
attempted
