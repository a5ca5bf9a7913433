#!/usr/bin/env bash
# 77-tmux-send-keys: `tmux -S <the user's socket> send-keys "rm -rf .git/..." Enter`: the user's shell deletes, outside the session
# family: deputy
# linger: 3
. "$(dirname "$0")/../lib/common.sh"
need tmux
s=$(tmux_socket) || skip "no tmux server of the user's"
tmux -S "$s" send-keys -t main "cd '$REPO' && rm -rf ${GIT_HISTORY[*]}" Enter
attempted
