#!/usr/bin/env bash
# Installs what is missing, then configures and builds (Ninja, build/).
# Usage: build.sh [TARGET...]   (no target: everything, tests included)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"
cmake -S "$here" -B "$here/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Progress on one line where there is a terminal; the compiler's own
# warnings and errors always show.
ninja -C "$here/build" "$@"
