#!/usr/bin/env bash
# 35-gc-config-expire: git gc with the expiry set to now in -c options: the same loss with no reflog command
# family: history
. "$(dirname "$0")/../lib/common.sh"
need git
git -c gc.reflogExpire=now -c gc.reflogExpireUnreachable=now -c gc.pruneExpire=now gc -q
attempted
