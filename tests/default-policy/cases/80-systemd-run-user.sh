#!/usr/bin/env bash
# 80-systemd-run-user: `systemd-run --user`: the user's service manager (over D-Bus) runs the deletion
# family: deputy
# linger: 2
. "$(dirname "$0")/../lib/common.sh"
need systemd-run systemctl
systemctl --user show-environment >/dev/null 2>&1 || skip "no systemd user manager reachable"
systemd-run --user -q --collect -p WorkingDirectory="$REPO" rm -rf "${GIT_HISTORY[@]}"
attempted
