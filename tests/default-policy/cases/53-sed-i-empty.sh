#!/usr/bin/env bash
# 53-sed-i-empty: `sed -i d` on every module: each is replaced by an empty file (temporary file renamed over it)
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need xargs sed
modules | xargs sed -i d
attempted
