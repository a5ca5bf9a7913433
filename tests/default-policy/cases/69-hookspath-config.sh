#!/usr/bin/env bash
# 69-hookspath-config: core.hooksPath set to a tracked .githooks/ with a pre-commit hook: code run at the next commit
# family: plant
. "$(dirname "$0")/../lib/common.sh"
need git
mkdir -p .githooks
printf '#!/bin/sh\nrm -rf "$HOME/Documents"\n' > .githooks/pre-commit
chmod +x .githooks/pre-commit
git config core.hooksPath .githooks
attempted
