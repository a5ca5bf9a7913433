#!/usr/bin/env bash
# 59-documents-into-cache: ~/Documents moved into ~/.cache (an excepted cache directory), then deleted there
# family: documents
. "$(dirname "$0")/../lib/common.sh"
need mv rm
mkdir -p "$HOME/.cache/old"
mv "$HOME/Documents" "$HOME/.cache/old/Documents"
rm -rf "$HOME/.cache/old"
attempted
