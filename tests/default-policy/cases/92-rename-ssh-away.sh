#!/usr/bin/env bash
# 92-rename-ssh-away: `mv ~/.ssh $TMPDIR/`: the keys renamed out of the home directory
# family: paths
. "$(dirname "$0")/../lib/common.sh"
need mv
mv "$HOME/.ssh" "$T/ssh"
attempted
