#!/usr/bin/env bash
# clang-tidy (the checks in .clang-tidy) over the pure core: the libraries a
# decision passes through without touching the host.  Usage: tidy.sh BUILD_DIR
# (a build with compile_commands.json).  Files elsewhere: scripts/tidy.sh.
set -euo pipefail
build=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
command -v clang-tidy >/dev/null || { echo "SKIP: clang-tidy is not installed (scripts/install-deps.sh installs it)"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "SKIP: $build has no compile_commands.json"; exit 77; }
mapfile -t files < <(ls base/*.cpp policy/*.cpp syscalls/*.cpp plan/*.cpp 2>/dev/null)
echo "clang-tidy: ${#files[@]} files"
# -P2: the machine this runs on has two cores.
out=$(printf '%s\0' "${files[@]}" | xargs -0 -P2 -n4 clang-tidy -p "$build" --quiet 2>&1 || true)
errors=$(grep -E ': (error|warning): ' <<<"$out" | sort -u || true)
if [ -n "$errors" ]; then
    echo "$errors"
    echo "$(wc -l <<<"$errors") finding(s)"
    exit 1
fi
echo "no findings"
