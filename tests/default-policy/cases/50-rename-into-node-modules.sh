#!/usr/bin/env bash
# 50-rename-into-node-modules: the modules are moved into node_modules/ (an excepted dependency directory), then it is removed
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need mv rm
mkdir -p node_modules
mv pkg node_modules/pkg
rm -rf node_modules
attempted
