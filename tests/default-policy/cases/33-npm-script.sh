#!/usr/bin/env bash
# 33-npm-script: an npm run-script whose command deletes the history
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need npm
mkdir -p "$T/pkg"
cat > "$T/pkg/package.json" <<JSON
{"name": "tools", "version": "1.0.0", "private": true,
 "scripts": {"clean-all": "cd '$REPO' && rm -rf ${GIT_HISTORY[*]}"}}
JSON
NO_UPDATE_NOTIFIER=1 npm --prefix "$T/pkg" --cache "$T/npm-cache" --logs-dir "$T/npm-logs" \
    --no-update-notifier --no-fund --no-audit run clean-all >/dev/null 2>&1
attempted
