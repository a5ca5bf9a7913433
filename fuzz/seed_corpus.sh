#!/usr/bin/env bash
# Writes every message recorded in tests/net/captures into DIR, one file
# each: the real clients' and server's messages as the fuzzer's seeds.
set -euo pipefail
dir=${1:?usage: seed_corpus.sh DIR}
mkdir -p "$dir"
here=$(cd "$(dirname "$0")/.." && pwd)
n=0
for f in "$here"/tests/net/captures/*.txt; do
    while read -r _ _ hex; do
        n=$((n + 1))
        python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.argv[1]))' "$hex" \
            >"$dir/$(basename "$f" .txt)-$n"
    done <"$f"
done
echo "seed_corpus: $n messages in $dir"
