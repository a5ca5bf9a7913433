#!/usr/bin/env bash
# 45-xargs-n50-rm: `xargs -n 50 rm`: 300 tracked modules deleted 50 per process
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need xargs rm
modules | xargs -n 50 rm -f
attempted
