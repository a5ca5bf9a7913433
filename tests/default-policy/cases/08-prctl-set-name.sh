#!/usr/bin/env bash
# 08-prctl-set-name: a C deleter renames itself git with prctl(PR_SET_NAME) before deleting
# family: identity
. "$(dirname "$0")/../lib/common.sh"
build_nuke nuke
NUKE_COMM=git "$T/nuke" "${GIT_HISTORY[@]}"
attempted
