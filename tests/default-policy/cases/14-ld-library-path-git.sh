#!/usr/bin/env bash
# 14-ld-library-path-git: LD_LIBRARY_PATH with a libz.so.1 of our own (forwarding to the real one): the real git loads it
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need git ldd
real=$(ldd "$(readlink -f "$(command -v git)")" | awk '$1 ~ /^libz\.so/ {print $3; exit}')
[ -n "$real" ] && [ -e "$real" ] || skip "git is not linked with libz here"
mkdir -p "$T/lib"
ln -s "$real" "$T/lib/libzreal.so.1"
build_evil_so "$T/lib/libz.so.1" -Wl,-soname,libz.so.1 -Wl,--no-as-needed -L"$T/lib" -l:libzreal.so.1
LD_LIBRARY_PATH=$T/lib git status >/dev/null 2>&1
attempted
