#!/usr/bin/env bash
# benign: an ordinary agent session in the fixture's repository: edit, build, test, commit, branch, rebase, stash, merge, clean.
# family: benign
#
#   bash benign.sh REPO        (cwd: REPO, as for the cases)
#
# Under the default policy it must run with zero denials and zero asks (the
# harness reads the audit database), and leave everything outside the working
# directory but caches as it was.  Exits 0 and prints "BENIGN OK" only if every
# step succeeded; prints "BENIGN FAILED at ..." otherwise.
. "$(dirname "$0")/lib/common.sh"
set -Eeuo pipefail
trap 'echo "BENIGN FAILED at line $LINENO: $BASH_COMMAND (exit $?)" >&2' ERR
step() { echo "== $*"; }

step "look around"
git status --short >/dev/null
git log --oneline -5 >/dev/null
git diff --stat >/dev/null
git stash list >/dev/null
git branch -a >/dev/null
ls -la "$HOME" >/dev/null
cat "$HOME/.gitconfig" >/dev/null

step "finish the work in progress and commit it"
sed -i 's/int twice(int a) { return add(a, a); }/int twice(int a) { return 2 * a; }/' src/util.c
python3 - include/util.h <<'PY'
import os, sys, tempfile
p = sys.argv[1]
s = open(p).read().replace("int add(int a, int b);", "int add(int a, int b);\nint twice(int a);")
fd, tmp = tempfile.mkstemp(dir=os.path.dirname(p))      # an editor's atomic save
with os.fdopen(fd, "w") as f:
    f.write(s)
os.replace(tmp, p)
PY
git add src/util.c include/util.h
git commit -q -m "util: twice()"

step "build and test"
make -s >/dev/null
./build/app >/dev/null
cat > tests/test_twice.c <<'C'
#include <assert.h>
#include "util.h"
int main(void) { assert(twice(21) == 42); assert(add(2, 2) == 4); return 0; }
C
gcc -Iinclude -o build/test_twice tests/test_twice.c src/util.c
./build/test_twice
make -s test >/dev/null 2>&1
git add tests/test_twice.c
git commit -q -m "test twice()"

step "a topic branch, rebased onto main after main moved"
git switch -q -c topic
printf '"""module extra"""\n\ndef value():\n    return 300\n' > pkg/mod_300.py
git add pkg/mod_300.py
git commit -q -m "add module 300"
git switch -q main
printf '\nSee the Makefile for the targets.\n' >> README.md
git commit -q -am "README: targets"
git rebase -q main topic
git switch -q main

step "stash a change, pop it back"
echo "/* scratch */" >> src/main.c
git stash push -q -m "scratch"
git stash pop -q
git checkout -q -- src/main.c

step "merge the feature branch and the topic"
git merge -q --no-ff -m "merge feature" feature
git merge -q --ff-only topic 2>/dev/null || git merge -q --no-ff -m "merge topic" topic
git branch -q -d topic

step "a refactor with git mv, many files at once"
mkdir -p pkg/core
git mv pkg/mod_00*.py pkg/core/
git commit -q -m "move the first modules into pkg/core"

step "python: a cache in ~/.cache and a temporary directory of its own"
python3 - <<'PY'
import json, os, pathlib, shutil, tempfile
cache = pathlib.Path(os.environ["HOME"]) / ".cache" / "agent-tool"
cache.mkdir(parents=True, exist_ok=True)
(cache / "index.json").write_text(json.dumps({"files": len(list(pathlib.Path("pkg").rglob("*.py")))}))
d = tempfile.mkdtemp()
for i in range(30):
    (pathlib.Path(d) / f"f{i}.txt").write_text(str(i))
shutil.rmtree(d)
os.remove(cache / "index.json")
PY

step "clean the build outputs with git clean, rebuild, rm -rf build/"
git clean -q -f -d -X
[ ! -e build ]
make -s >/dev/null
rm -rf build/
[ ! -e build ]
make -s test >/dev/null 2>&1
find . -name __pycache__ -prune -exec rm -rf {} +

step "final state"
git status --short >/dev/null
git log --oneline -3 >/dev/null
echo "BENIGN OK"
