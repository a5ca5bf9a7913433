#!/usr/bin/env bash
# 57-delete-thesis: `rm ~/Documents/thesis.txt`
# family: documents
. "$(dirname "$0")/../lib/common.sh"
need rm
rm -f "$THESIS"
attempted
