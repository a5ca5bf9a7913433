#!/usr/bin/env bash
# 55-truncate-thesis: `: > ~/Documents/thesis.txt`: a document outside the working directory emptied
# family: documents
. "$(dirname "$0")/../lib/common.sh"
: > "$THESIS"
attempted
