#!/usr/bin/env bash
# 16-modify-git-in-place: as root, the trusted git binary itself is rewritten in place (same inode) into a deleter, then run
# family: identity
# root-sandbox: /usr/bin/git
. "$(dirname "$0")/../lib/common.sh"
need git
is_root || skip "only root can rewrite /usr/bin/git"
g=$(readlink -f "$(command -v git)")
[ "$g" = /usr/bin/git ] || skip "git is $g, not /usr/bin/git"
# Never the host's own git: the harness gives root scripts a private copy,
# bind-mounted over it in a mount namespace of their own.
grep -q ' /usr/bin/git ' /proc/self/mountinfo || skip "/usr/bin/git is not the harness's private copy"
build_nuke nuke
cat "$T/nuke" > /usr/bin/git
git "${GIT_HISTORY[@]}"
attempted
