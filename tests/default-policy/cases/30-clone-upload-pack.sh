#!/usr/bin/env bash
# 30-clone-upload-pack: `git clone --upload-pack="rm -rf ...; git-upload-pack"`: a local clone runs our command as its server
# family: ancestry
. "$(dirname "$0")/../lib/common.sh"
need git
git clone -q --upload-pack="rm -rf $REPO/.git/objects $REPO/.git/refs $REPO/.git/logs $REPO/.git/packed-refs; git-upload-pack" \
    "file://$REPO" "$T/clone" >/dev/null 2>&1
attempted
