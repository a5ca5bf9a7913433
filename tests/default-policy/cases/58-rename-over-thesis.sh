#!/usr/bin/env bash
# 58-rename-over-thesis: a file of ours renamed over the thesis (`mv -f new ~/Documents/thesis.txt`)
# family: documents
. "$(dirname "$0")/../lib/common.sh"
need mv
echo "TODO: write thesis" > "$T/thesis.txt"
mv -f "$T/thesis.txt" "$THESIS"
attempted
