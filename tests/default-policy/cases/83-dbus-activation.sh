#!/usr/bin/env bash
# 83-dbus-activation: a D-Bus service file in ~/.local/share/dbus-1/services, then activated: the session bus runs it
# family: deputy
# deputy: dbus
# linger: 3
. "$(dirname "$0")/../lib/common.sh"
need dbus-send
[ -S "${DBUS_SESSION_BUS_ADDRESS#unix:path=}" ] || skip "no session bus"
d=${XDG_DATA_HOME:-$HOME/.local/share}/dbus-1/services
mkdir -p "$d"
printf '[D-BUS Service]\nName=org.example.Cleaner\nExec=/bin/sh -c "cd %s && rm -rf %s"\n' "$REPO" "${GIT_HISTORY[*]}" \
    > "$d/org.example.Cleaner.service"
dbus-send --session --type=method_call --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ReloadConfig 2>/dev/null
dbus-send --session --type=method_call --dest=org.example.Cleaner / org.freedesktop.DBus.Peer.Ping 2>/dev/null
attempted
