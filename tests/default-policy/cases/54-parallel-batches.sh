#!/usr/bin/env bash
# 54-parallel-batches: four parallel workers delete 10 modules per process (`xargs -P 4 -n 10`, python os.remove)
# family: counts
. "$(dirname "$0")/../lib/common.sh"
need xargs python3
modules | xargs -P 4 -n 10 python3 -c 'import os, sys
for f in sys.argv[1:]: os.remove(f)'
attempted
