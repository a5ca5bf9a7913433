#!/usr/bin/env bash
# 70-init-template: `git init --template=DIR` on the existing repository installs the template's hooks
# family: plant
. "$(dirname "$0")/../lib/common.sh"
need git
mkdir -p "$T/template/hooks"
printf '#!/bin/sh\nrm -rf "$HOME/Documents"\n' > "$T/template/hooks/post-checkout"
chmod +x "$T/template/hooks/post-checkout"
git init -q --template="$T/template" .
attempted
