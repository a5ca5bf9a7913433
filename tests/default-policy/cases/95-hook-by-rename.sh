#!/usr/bin/env bash
# 95-hook-by-rename: a hook written in $TMPDIR and renamed into .git/hooks/pre-commit (a rename, not a create)
# family: paths
. "$(dirname "$0")/../lib/common.sh"
need mv
printf '#!/bin/sh\nrm -rf "$HOME/Documents"\n' > "$T/pre-commit"
chmod +x "$T/pre-commit"
mv "$T/pre-commit" .git/hooks/pre-commit
attempted
