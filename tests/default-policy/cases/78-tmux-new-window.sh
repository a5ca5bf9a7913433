#!/usr/bin/env bash
# 78-tmux-new-window: `tmux new-window CMD`: the user's tmux server starts the deletion itself
# family: deputy
# linger: 3
. "$(dirname "$0")/../lib/common.sh"
need tmux
s=$(tmux_socket) || skip "no tmux server of the user's"
tmux -S "$s" new-window -d -c "$REPO" "rm -rf ${GIT_HISTORY[*]}"
attempted
