#!/usr/bin/env bash
# 91-home-real-path: ~/.aws deleted by the real path of the home directory (cd -P; differs from $HOME when /home is a link)
# family: paths
. "$(dirname "$0")/../lib/common.sh"
need rm
real=$(cd -P "$HOME" && pwd -P)
rm -rf "$real/.aws"
attempted
