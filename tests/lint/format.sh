#!/usr/bin/env bash
# Every C and C++ file of the tree is as clang-format (the .clang-format
# files of the tree) leaves it.  Run ./scripts/format.sh to apply.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v clang-format >/dev/null || { echo "SKIP: clang-format is not installed (scripts/install-deps.sh installs it)"; exit 77; }
mapfile -t files < <(./scripts/format.sh --list)
out=$(printf '%s\0' "${files[@]}" | xargs -0 -P2 -n40 clang-format --dry-run -Werror 2>&1 || true)
bad=$(grep -oE '^[^:]+:[0-9]+:[0-9]+: error' <<<"$out" | cut -d: -f1 | sort -u || true)
echo "${#files[@]} files checked"
if [ -n "$bad" ]; then
    echo "not formatted (run ./scripts/format.sh):"
    sed 's/^/  /' <<<"$bad"
    exit 1
fi
