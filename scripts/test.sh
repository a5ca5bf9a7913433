#!/usr/bin/env bash
# Quick start, step 2 (and what CI runs): install, build, run every test.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/build.sh"
# The MCP clients the mcp_clients test drives (from npm); without them that
# test skips and says why.
"$here/scripts/install-npm-tools.sh" "$here/build/npm-tools" ||
    echo "test.sh: the MCP clients could not be installed; mcp_clients will be skipped" >&2
cd "$here/build"
# The default-policy corpus (label corpus, 3 x 100 sessions, reporting only)
# runs apart: ctest -L corpus.
ctest --output-on-failure -j2 -LE corpus "$@"
