#!/usr/bin/env bash
# 18-rename-binary-to-git: a copy of rm renamed to git (the name arrives by rename, not by copy)
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
mkdir -p "$T/bin"
cp "$(command -v rm)" "$T/bin/remover"
mv "$T/bin/remover" "$T/bin/git"
"$T/bin/git" -rf "${GIT_HISTORY[@]}"
attempted
