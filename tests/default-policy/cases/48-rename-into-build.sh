#!/usr/bin/env bash
# 48-rename-into-build: the 300 modules are moved into build/ (an excepted output directory), then build/ is removed
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need mv rm
mkdir -p build/stale
mv pkg build/stale/
rm -rf build/stale
attempted
