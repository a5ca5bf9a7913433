#!/usr/bin/env bash
# An agent-like workload for the benchmark suite (issue 5): untar a source
# tree, grep it (and ls -lR, wc), compile C files, git init/add/commit, a
# `cp -a` backup of a fifth of the tree, many grep-then-`sed -i` edits and a
# second commit, `find -delete` of part of the tree, `rm -rf` of the rest.
#
#   bench/workload.sh [OPTIONS] DIR
#
#   --files N      files in the source tree (default 5000)
#   --seds N       grep-then-`sed -i` edits (default 500)
#   --compiles N   C files compiled with gcc, then linked and run (default 20)
#   --size S       preset: full (5000/500/20), small (1000/100/5), tiny (100/10/1)
#   --prepare      only create DIR/input (the tarball) and DIR/ref, then exit
#   --phase-log F  append "phase seconds" lines to F (bash's clock, no exec)
#   -q             no summary line
#
# DIR holds everything: input/ (the generated tarball, reused when the
# parameters match), ref/ (reference headers and docs that the workload reads
# and never modifies: the directory the Houdini policy protects), tmp/ (TMPDIR),
# home/ (HOME) and w/ (the working tree, created and removed by every run).
# Put DIR on tmpfs (/dev/shm) or on disk to choose the filesystem.
#
# Deterministic: the tree comes from a fixed-seed generator, the tarball has
# fixed names, order, owners and times, git commits have fixed identities and
# dates, so the final commit id is the same on every run (it is printed).
# No network. Exits 0 only if every step did what it should.
set -euo pipefail
export LC_ALL=C

files=5000 seds=500 compiles=20 prepare_only=0 phase_log="" quiet=0
usage() { sed -n '2,/^set -e/p' "$0" | sed -n 's/^# \{0,1\}//p' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --files) files=$2; shift 2 ;;
        --seds) seds=$2; shift 2 ;;
        --compiles) compiles=$2; shift 2 ;;
        --size)
            case "$2" in
                full) files=5000 seds=500 compiles=20 ;;
                small) files=1000 seds=100 compiles=5 ;;
                tiny) files=100 seds=10 compiles=1 ;;
                *) echo "workload: unknown size $2" >&2; exit 2 ;;
            esac
            shift 2 ;;
        --prepare) prepare_only=1; shift ;;
        --phase-log) phase_log=$2; shift 2 ;;
        -q) quiet=1; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        -*) echo "workload: unknown option $1" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || usage
for n in "$files" "$seds" "$compiles"; do
    [[ $n =~ ^[0-9]+$ ]] || { echo "workload: not a number: $n" >&2; exit 2; }
done
[ "$compiles" -ge 1 ] || { echo "workload: --compiles must be at least 1" >&2; exit 2; }
# Every edit needs its own .c file (6 in 10 files are .c).
[ $((files * 6 / 10)) -ge "$seds" ] || { echo "workload: --seds $seds needs more than --files $files" >&2; exit 2; }

mkdir -p "$1"
DIR=$(cd "$1" && pwd)
IN=$DIR/input
REF=$DIR/ref
stamp="files=$files compiles=$compiles seds=$seds v=1"

# ---------------------------------------------------------------------------
# Preparation (untimed when run.sh calls --prepare first): the tarball, the
# list of files to edit and the protected reference directory.
prepare() {
    if [ -f "$IN/stamp" ] && [ "$(cat "$IN/stamp")" = "$stamp" ] && [ -f "$REF/include/common.h" ]; then
        return 0
    fi
    rm -rf "$IN" "$REF"
    mkdir -p "$IN/gen" "$REF/include" "$REF/docs"
    # One awk process writes the whole tree (no per-file exec), from a
    # Park-Miller generator with a fixed seed (exact in double arithmetic).
    awk -v N="$files" -v C="$compiles" -v OUT="$IN/gen/proj" -v REF="$REF" '
    function rnd(n) { seed = (seed * 48271) % 2147483647; return seed % n }
    function word(   w) { w = words[rnd(nwords)]; return w }
    BEGIN {
        seed = 20240905
        nwords = split("alpha beta gamma delta buffer index count parse emit token node tree list map key value state flush open close read write queue event", tmp, " ")
        for (i = 1; i <= nwords; i++) words[i - 1] = tmp[i]
        ndirs = int((N + 49) / 50)
        for (d = 0; d < ndirs; d++) system("mkdir -p " OUT "/src/mod" d)
        system("mkdir -p " OUT "/cc")
        for (i = 0; i < N; i++) {
            d = int(i / 50); k = i % 10
            ext = k < 6 ? "c" : k < 8 ? "h" : k == 8 ? "txt" : "md"
            f = OUT "/src/mod" d "/f" i "." ext
            lines = 40 + rnd(120)
            if (ext == "c") {
                print "#include \"f" (i - i % 10 + 6) ".h\"" > f
                print "/* old_name: renamed by the edit step */" > f
                print "static int old_name = " rnd(1000) ";" > f
            }
            for (l = 0; l < lines; l++) {
                r = rnd(100)
                if (r < 3) print "  /* TODO(" word() "): handle " word() " " word() " */" > f
                else if (r < 5) print "  /* FIXME: " word() "_" rnd(100) " leaks */" > f
                else if (ext == "c" || ext == "h")
                    print "int fn_" i "_" l "(int " word() ") { return " rnd(97) " * " word() " + " rnd(1000) "; }" > f
                else
                    print word() " " word() " " word() " " word() " " word() " " word() " " rnd(100000) > f
            }
            close(f)
        }
        # The compiled units: unit0 holds main() and calls every unit.
        for (u = 0; u < C; u++) {
            f = OUT "/cc/unit" u ".c"
            print "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"common.h\"" > f
            for (j = 0; j < 40; j++)
                print "static int u" u "_f" j "(int x) { char b[32]; snprintf(b, sizeof b, \"%d\", x * " (j + 1) "); return (int)strlen(b) + x % " (rnd(90) + 7) "; }" > f
            print "int unit" u "_entry(void) { int s = 0; for (int i = 0; i < 100; i++) {" > f
            for (j = 0; j < 40; j++) print "  s += u" u "_f" j "(i);" > f
            print "} return s % COMMON_MOD; }" > f
            if (u == 0) {
                for (v = 0; v < C; v++) print "int unit" v "_entry(void);" > f
                print "int main(void) { long t = 0;" > f
                for (v = 0; v < C; v++) print "  t += unit" v "_entry();" > f
                print "  printf(\"%ld\\n\", t); return 0; }" > f
            }
            close(f)
        }
        f = REF "/include/common.h"
        print "#ifndef COMMON_H\n#define COMMON_H\n#define COMMON_MOD 1009\n#endif" > f
        close(f)
        for (i = 0; i < 100; i++) {
            f = REF "/docs/guide" i ".md"
            for (l = 0; l < 60; l++) print word() " " word() " TODO " word() " " rnd(1000) > f
            close(f)
        }
    }'
    # The files to edit: the first $seds .c files, spread over the tree.
    (cd "$IN/gen" && find proj/src -name '*.c' | sort -V | awk -v S="$seds" '
        { a[n++] = $0 } END { for (i = 0; i < S; i++) print a[int(i * n / S)] }') > "$IN/edits.lst"
    tar -C "$IN/gen" --sort=name --mtime=@1700000000 --owner=0 --group=0 --numeric-owner \
        --format=gnu -cf - proj | gzip -n -1 > "$IN/src.tar.gz"
    rm -rf "$IN/gen"
    echo "$stamp" > "$IN/stamp"
}

mkdir -p "$DIR/tmp" "$DIR/home"
prepare
[ "$prepare_only" = 1 ] && exit 0

# ---------------------------------------------------------------------------
# The timed workload.
export TMPDIR=$DIR/tmp HOME=$DIR/home
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
export GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
W=$DIR/w
rm -rf "$W"
mkdir -p "$W"
cd "$W"

usec() { local t=${1/,/.}; echo $(( 10#${t%.*} * 1000000 + 10#${t#*.} )); }
t_last=$(usec "$EPOCHREALTIME")
phase() {  # phase NAME: log the time since the previous phase (no exec)
    local now
    now=$(usec "$EPOCHREALTIME")
    if [ -n "$phase_log" ]; then
        printf '%s %d.%06d\n' "$1" $(((now - t_last) / 1000000)) $(((now - t_last) % 1000000)) >> "$phase_log"
    fi
    t_last=$now
}
fail() { echo "workload: $*" >&2; exit 1; }

# 1. untar
tar -xzf "$IN/src.tar.gz"
n=$(find proj -type f | wc -l)
[ "$n" -eq $((files + compiles)) ] || fail "untar produced $n files, expected $((files + compiles))"
phase untar

# 2. grep the tree and the reference docs, as an agent looks around
todo=$(grep -rn 'TODO' proj | wc -l)
[ "$todo" -gt 0 ] || fail "grep found no TODO"
grep -rlE 'fn_[0-9]+7_1[0-9]\b' proj > /dev/null || fail "grep -rlE found nothing"
grep -rc 'FIXME' proj > /dev/null || true
grep -rlw 'leaks' proj > /dev/null || fail "grep -rlw found nothing"
grep -rn 'TODO' "$REF" > /dev/null || fail "grep of $REF found nothing"
grep -rniw 'token' proj > /dev/null || fail "grep -rniw found nothing"
ls -lR proj > /dev/null
find proj -name '*.c' -exec wc -l {} + > /dev/null
phase grep

# 3. compile, link and run
mkdir -p build
for ((u = 0; u < compiles; u++)); do
    gcc -O1 -c -I "$REF/include" "proj/cc/unit$u.c" -o "build/unit$u.o"
done
gcc build/*.o -o build/app
out=$(./build/app)
[ -n "$out" ] || fail "build/app printed nothing"
phase compile

# 4. git
git init -q -b main .
git add -A
git commit -q -m "import"
[ -z "$(git status --porcelain)" ] || fail "git status is not clean after the import"
phase git

# 5. a backup copy of a fifth of the tree before editing it (cp -a)
ndirs=$(((files + 49) / 50))
backup=()
for ((d = 0; d < (ndirs + 4) / 5; d++)); do backup+=("proj/src/mod$d"); done
mkdir backup
cp -a "${backup[@]}" backup/
[ "$(find backup -type f | wc -l)" -gt 0 ] || fail "cp -a copied nothing"
phase copy

# 6. edits: look, then sed -i (two execs per edit, as an agent's tool calls)
mapfile -t edits < "$IN/edits.lst"
[ "${#edits[@]}" -eq "$seds" ] || fail "edit list has ${#edits[@]} entries, expected $seds"
for f in "${edits[@]}"; do
    grep -q 'old_name' "$f" || fail "$f: nothing to edit"
    sed -i 's/old_name/new_name/g' "$f"
done
renamed=$(grep -rl 'new_name' proj | wc -l)
[ "$renamed" -eq "$seds" ] || fail "grep finds $renamed edited files, expected $seds"
grep -rn 'old_name' proj > /dev/null || [ "$seds" -eq $((files * 6 / 10)) ] || fail "every old_name is gone"
git diff --stat > /dev/null
changed=$(git status --porcelain --untracked-files=no | wc -l)
[ "$changed" -eq "$seds" ] || fail "git sees $changed changed files, expected $seds"
git commit -q -a -m "rename old_name"
head=$(git rev-parse HEAD)
phase edit

# 7. delete part of the tree with find, the rest with rm -rf
find proj -name '*.txt' -delete
find proj -name '*.md' -delete
find backup -name '*.h' -delete
left=$(find proj -type f | wc -l)
[ "$left" -eq $((files + compiles - (files + 1) / 10 - files / 10)) ] || fail "find -delete left $left files"
phase find-delete
cd "$DIR"
rm -rf "$W"
[ ! -e "$W" ] || fail "rm -rf left $W"
phase rm

[ "$quiet" = 1 ] || echo "workload: ok files=$files seds=$seds compiles=$compiles head=$head app=$out"
