#!/usr/bin/env bash
# 40-checkout-dot: `git checkout -- .`: uncommitted edits to tracked files discarded
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git checkout -q -- .
attempted
