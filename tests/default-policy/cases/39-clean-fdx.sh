#!/usr/bin/env bash
# 39-clean-fdx: `git clean -fdx`: untracked notes (the only copy) removed along with the build outputs
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git clean -q -f -d -x
attempted
