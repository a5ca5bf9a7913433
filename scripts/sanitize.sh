#!/usr/bin/env bash
# CI, after the test suite: the pure core's unit tests under AddressSanitizer
# and UndefinedBehaviorSanitizer, then each libFuzzer target (the policy
# loader, the expression parser, the DNS parser) for a bounded time from its
# seeds.  Built with clang in build-san/, apart from the main build.
#   CB_FUZZ_SECONDS  seconds per fuzz target (default 20; 0 skips fuzzing)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$here/build-san
seconds=${CB_FUZZ_SECONDS:-20}
command -v clang++ >/dev/null || { echo "sanitize.sh: clang++ is missing (scripts/install-deps.sh installs it)" >&2; exit 125; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" \
    -DCOTTONBOX_FUZZ=ON -DCOTTONBOX_WITH_GUI=OFF -DCOTTONBOX_WITH_EBPF=OFF >/dev/null
tests=(test_policy test_plan test_net)
fuzzers=(policy_fuzz expr_fuzz dns_fuzz)
ninja -C "$build" -j2 "${tests[@]}" "${fuzzers[@]}" | grep -v '^\[' || true

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for t in "${tests[@]}"; do
    bin=$(find "$build/tests" -name "$t" -type f -perm -u+x | head -1)
    if "$bin" --gtest_brief=1 >"$build/$t.log" 2>&1; then
        echo "sanitize: $t under ASan+UBSan: $(grep -oE 'PASSED.*' "$build/$t.log" | tail -1 | tr -s ' ]' ' ')"
    else
        echo "sanitize: $t FAILED under ASan/UBSan:"; tail -40 "$build/$t.log"; status=1
    fi
done
[ "$seconds" = 0 ] && exit $status

# Seeds: the shipped policies, every `when:` in them, recorded DNS messages.
seeds=$build/seeds
rm -rf "$seeds" && mkdir -p "$seeds"/{policy_fuzz,expr_fuzz,dns_fuzz}
cp "$here"/rules/*.yaml "$seeds/policy_fuzz/"
grep -hoE "when: *'[^']+'" "$here"/rules/*.yaml | sed -E "s/when: *'(.*)'/\1/" |
    awk -v d="$seeds/expr_fuzz" '{ print > (d "/w" NR) }'
"$here/fuzz/seed_corpus.sh" "$seeds/dns_fuzz" >/dev/null
for f in "${fuzzers[@]}"; do
    mkdir -p "$build/corpus/$f"
    if "$build/fuzz/$f" "$build/corpus/$f" "$seeds/$f" -max_total_time="$seconds" -rss_limit_mb=2048 \
        -artifact_prefix="$build/$f-" >"$build/$f.log" 2>&1; then
        echo "sanitize: $f: $(grep -oE '^Done [0-9]+ runs in [0-9]+ second\(s\)' "$build/$f.log" | tail -1), no failure"
    else
        echo "sanitize: $f FOUND A FAILURE (input saved as $build/$f-*):"; tail -40 "$build/$f.log"; status=1
    fi
done
exit $status
