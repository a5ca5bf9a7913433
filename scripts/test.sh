#!/usr/bin/env bash
# Quick start, step 2 (and what CI runs): install, build, run every test.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/build.sh"
cd "$here/build"
ctest --output-on-failure -j2 "$@"
