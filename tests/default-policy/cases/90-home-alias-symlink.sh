#!/usr/bin/env bash
# 90-home-alias-symlink: a symbolic link to $HOME in $TMPDIR, and ~/.ssh deleted through it
# family: paths
. "$(dirname "$0")/../lib/common.sh"
need rm
ln -s "$HOME" "$T/h"
rm -rf "$T/h/.ssh"
attempted
