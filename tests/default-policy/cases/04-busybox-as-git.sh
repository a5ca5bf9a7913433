#!/usr/bin/env bash
# 04-busybox-as-git: busybox copied to a file named git, its rm applet chosen by argv[0] (exec -a rm)
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need busybox
mkdir -p "$T/bin"
cp "$(command -v busybox)" "$T/bin/git"
( exec -a rm "$T/bin/git" -rf "${GIT_HISTORY[@]}" )
attempted
