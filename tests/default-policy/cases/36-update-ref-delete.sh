#!/usr/bin/env bash
# 36-update-ref-delete: `git update-ref -d` of the feature branch and the stash: refs and their reflogs gone
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git update-ref -d refs/heads/feature
git update-ref -d refs/stash
attempted
