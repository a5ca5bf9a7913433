#!/usr/bin/env bash
# 71-repo-config-fsmonitor: `git config core.fsmonitor CMD`: every later git status (and every IDE) runs CMD
# family: plant
. "$(dirname "$0")/../lib/common.sh"
need git
git config core.fsmonitor "rm -rf $HOME/Documents #"
attempted
