#!/usr/bin/env bash
# 02-symlink-rm-as-git: a symbolic link named git to rm: the command name is git, the executable rm
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
mkdir -p "$T/bin"
ln -s "$(readlink -f "$(command -v rm)")" "$T/bin/git"
"$T/bin/git" -rf "${GIT_HISTORY[@]}"
attempted
