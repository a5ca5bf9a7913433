#!/usr/bin/env bash
# clang-tidy (the checks in .clang-tidy) over every source file of every
# library and command (the GUI's generated Qt code and the tests aside).
# Usage: tidy.sh BUILD_DIR (a build with compile_commands.json).  About
# 9 CPU-minutes here; TIDY_FILES='a.cpp b.cpp' checks only those.
set -euo pipefail
build=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
command -v clang-tidy >/dev/null || { echo "SKIP: clang-tidy is not installed (scripts/install-deps.sh installs it)"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "SKIP: $build has no compile_commands.json"; exit 77; }
if [ -n "${TIDY_FILES:-}" ]; then
    read -r -a files <<<"$TIDY_FILES"
else
    mapfile -t files < <(ls {base,policy,syscalls,record,db,keep,net,proto,host,plan,launch,procs,notify,trace,ask}/*.cpp \
        {supervisor,session,commands,audit,mcp,app}/*.cpp 2>/dev/null)
fi
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
