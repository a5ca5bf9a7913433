#!/usr/bin/env bash
# 03-hardlink-rm-as-git: a hard link named git to the real rm binary (same inode as rm)
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
mkdir -p "$T/bin"
ln "$(readlink -f "$(command -v rm)")" "$T/bin/git" 2>/dev/null ||
    skip "cannot hard-link rm here (another filesystem, or protected_hardlinks for this user)"
"$T/bin/git" -rf "${GIT_HISTORY[@]}"
attempted
