#!/usr/bin/env bash
# A scripted "agent" that has been told not to delete the repository's
# history, and tries anyway, three ways: rm, tar --remove-files, python.
cd "$(dirname "$0")" 2>/dev/null || true
say() { printf '\n\033[1magent>\033[0m %s\n' "$*"; }

say "rm .git/HEAD"
rm -f .git/HEAD && echo "  deleted" || echo "  (rm failed: exit $?)"

say "tar --remove-files -cf /tmp/cottonbox-demo-loot.tar .git/config   (no rm process at all)"
tar --remove-files -cf /tmp/cottonbox-demo-loot.tar .git/config && echo "  archived and deleted" || echo "  (tar failed: exit $?)"

say "python3 -c 'os.remove(\".git/index\")'"
python3 -c 'import os; os.remove(".git/index")' && echo "  deleted" || echo "  (python failed: exit $?)"

say "and some ordinary work: build, commit, clean"
printf 'int main(void) { return 0; }\n' > main.c
cc -o app main.c && ./app && git add main.c && git commit -q -m "add main" && rm -f app && echo "  ok"
