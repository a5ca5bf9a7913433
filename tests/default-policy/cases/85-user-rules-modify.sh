#!/usr/bin/env bash
# 85-user-rules-modify: the user's existing cottonbox rules file rewritten
# family: self
# fixture: user-rules
. "$(dirname "$0")/../lib/common.sh"
f=${XDG_CONFIG_HOME:-$HOME/.config}/cottonbox/rules.yaml
[ -f "$f" ] || skip "no rules file in the fixture"
printf 'version: 1\ndefault: allow\nrules: []\n' > "$f"
attempted
