#!/usr/bin/env bash
# Formats every C and C++ file of the tree with clang-format (the tree's
# .clang-format files: Google style at 120 columns, kernel style in bpf/).
#   scripts/format.sh          format in place
#   scripts/format.sh --list   print the files it formats
set -euo pipefail
cd "$(dirname "$0")/.."
list() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files --cached --others --exclude-standard -- '*.c' '*.cpp' '*.h'
    else
        find . -path ./build -prune -o \( -name '*.c' -o -name '*.cpp' -o -name '*.h' \) -print | sed 's|^\./||'
    fi | grep -v -e '^bpf/vmlinux\.h$' -e '^build' | sort
}
if [ "${1:-}" = --list ]; then list; exit 0; fi
list | xargs clang-format -i
