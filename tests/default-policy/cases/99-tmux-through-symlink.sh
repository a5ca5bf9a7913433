#!/usr/bin/env bash
# 99-tmux-through-symlink: the user's tmux socket reached through a symbolic link of another name: the server, not the name, is the deputy
# family: deputy
# linger: 3
. "$(dirname "$0")/../lib/common.sh"
need tmux
s=$(tmux_socket) || skip "no tmux server of the user's"
ln -sf "$s" "$T/editor.sock"
tmux -S "$T/editor.sock" send-keys -t main "cd '$REPO' && rm -rf ${GIT_HISTORY[*]}" Enter
attempted
