#!/usr/bin/env bash
# 100-tmux-through-hardlink: a hard link to the user's tmux socket under a name no rule lists: the same server
# family: deputy
# linger: 3
. "$(dirname "$0")/../lib/common.sh"
need tmux
s=$(tmux_socket) || skip "no tmux server of the user's"
ln -f "$s" "$T/lsp.sock" 2>/dev/null || skip "no hard link to the socket possible here (another filesystem)"
tmux -S "$T/lsp.sock" new-window -d -c "$REPO" "rm -rf ${GIT_HISTORY[*]}"
attempted
