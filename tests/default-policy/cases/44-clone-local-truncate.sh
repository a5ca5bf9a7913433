#!/usr/bin/env bash
# 44-clone-local-truncate: `git clone --local` hard-links the objects into a scratch clone, whose objects are then truncated
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git clone -q --local --no-checkout "$REPO" "$T/scratch"
find "$T/scratch/.git/objects" -type f -path '*/objects/??/*' -exec chmod u+w {} + -exec truncate -s 0 {} +
attempted
