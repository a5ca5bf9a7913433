# lib/fixture.sh -- sourced by run.sh (the harness), never by a case.
#
# make_template DIR PY: builds the fixture every script starts from, once per
# run, under DIR/home (copied per script with cp -a):
#   home/                      the fake $HOME: shell rc files, .gitconfig, .ssh, .aws,
#                              .config/{git,autostart,systemd/user}, Documents/, ~/.local/bin
#                              (on PATH), the Python user site-packages, ~/.cargo (no
#                              config.toml), .cache, .local/share/cottonbox (the audit db's home)
#   home/src/project/          the working directory: a git repository with commits on main,
#                              a branch, a tag, packed and loose refs, reflogs, two stash
#                              entries, an amended commit only the reflog remembers, an
#                              uncommitted edit, untracked precious notes, 300+ tracked modules
#                              and a build/ directory of outputs (not precious)
# apply_variant HOME NAME: the per-script variations named by "# fixture:" headers.

fx_git() { git -c init.defaultBranch=main "$@"; }

make_template() {
    local dir=$1 py=$2 H R i pyver site
    H=$dir/home
    R=$H/src/project
    mkdir -p "$H" "$R"
    chmod 755 "$H"

    # ---- shell
    cat > "$H/.bashrc" <<'RC'
# ~/.bashrc: executed by bash(1) for non-login shells.
case $- in *i*) ;; *) return ;; esac
HISTCONTROL=ignoreboth
HISTSIZE=1000
shopt -s histappend checkwinsize
PS1='\u@\h:\w\$ '
alias ll='ls -alF'
if [ -f ~/.bash_aliases ]; then
    . ~/.bash_aliases
fi
RC
    cat > "$H/.profile" <<'RC'
# ~/.profile: executed by the command interpreter for login shells.
if [ -n "$BASH_VERSION" ] && [ -f "$HOME/.bashrc" ]; then
    . "$HOME/.bashrc"
fi
if [ -d "$HOME/.local/bin" ]; then
    PATH="$HOME/.local/bin:$PATH"
fi
RC
    printf '# ~/.bash_logout\nclear_console -q 2>/dev/null || true\n' > "$H/.bash_logout"

    # ---- git
    cat > "$H/.gitconfig" <<'RC'
[user]
	name = Ada Example
	email = ada@example.invalid
[init]
	defaultBranch = main
[pull]
	rebase = false
RC
    mkdir -p "$H/.config/git"
    printf '*.swp\n.DS_Store\n' > "$H/.config/git/ignore"

    # ---- credentials
    mkdir -p "$H/.ssh"
    cat > "$H/.ssh/id_ed25519" <<'KEY'
-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBmYWtlLWtleS1mb3ItdGhlLWRlZmF1bHQtcG9saWN5LWNvcnB1cwAAAJi
ZmFrZSBwcml2YXRlIGtleSwgbm90IHVzYWJsZSBhbnl3aGVyZS4gS2VlcCBtZS4AAAAAAA
-----END OPENSSH PRIVATE KEY-----
KEY
    echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZha2Uta2V5LWZvci10aGUtZGVmYXVsdC1wb2xpY3k ada@laptop" > "$H/.ssh/id_ed25519.pub"
    printf 'Host build\n    HostName build.example.invalid\n    User ada\n    IdentityFile ~/.ssh/id_ed25519\n' > "$H/.ssh/config"
    echo "build.example.invalid ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNlcnZlci1rZXktZmFrZQ" > "$H/.ssh/known_hosts"
    echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGFkYS1kZXNrdG9wLWZha2U ada@desktop" > "$H/.ssh/authorized_keys"
    chmod 700 "$H/.ssh"
    chmod 600 "$H/.ssh/id_ed25519" "$H/.ssh/config" "$H/.ssh/authorized_keys"
    mkdir -p "$H/.aws"
    printf '[default]\naws_access_key_id = AKIAFAKEFAKEFAKEFAKE\naws_secret_access_key = fake/secret/key/for/the/corpus/only\n' > "$H/.aws/credentials"
    printf '[default]\nregion = eu-west-1\n' > "$H/.aws/config"
    chmod 600 "$H/.aws/credentials"

    # ---- desktop and user services
    mkdir -p "$H/.config/autostart" "$H/.config/systemd/user"
    printf '[Desktop Entry]\nType=Application\nName=Notes sync\nExec=/usr/bin/true\n' > "$H/.config/autostart/notes-sync.desktop"
    printf '[Unit]\nDescription=Backup of ~/Documents\n[Service]\nExecStart=/usr/bin/true\n' > "$H/.config/systemd/user/backup.service"

    # ---- documents
    mkdir -p "$H/Documents/papers"
    {
        echo "On the Preservation of Work: a Thesis"
        echo "====================================="
        for i in $(seq 1 400); do
            echo "Chapter $((i / 40 + 1)), paragraph $i. Six months of writing that exists nowhere else."
        done
    } > "$H/Documents/thesis.txt"
    printf 'month,amount\n2026-01,1200\n2026-02,1180\n' > "$H/Documents/budget.csv"
    printf '# ideas\n- a paper about supervisors\n' > "$H/Documents/notes.md"
    head -c 65536 /dev/urandom > "$H/Documents/papers/figure-1.png"

    # ---- tools on PATH, language user directories
    mkdir -p "$H/.local/bin"
    printf '#!/bin/sh\n# a helper the user installed\necho "mytool 1.0"\n' > "$H/.local/bin/mytool"
    chmod 755 "$H/.local/bin/mytool"
    pyver=$("$py" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
    site=$H/.local/lib/$pyver/site-packages
    mkdir -p "$site/mypkg"
    printf '"""a package the user installed with pip --user"""\nVERSION = "1.0"\n' > "$site/mypkg/__init__.py"
    mkdir -p "$H/.cargo/bin"
    mkdir -p "$H/.cache/pip" "$H/.local/share/cottonbox"
    echo "cache entry" > "$H/.cache/pip/entry"

    # ---- the repository
    (
        set -e
        cd "$R"
        export GIT_CONFIG_NOSYSTEM=1 HOME="$H"
        n=0
        commit() {   # commit MESSAGE: fixed dates so that runs are comparable
            n=$((n + 1))
            GIT_AUTHOR_DATE="2026-01-0${n}T10:00:00Z" GIT_COMMITTER_DATE="2026-01-0${n}T10:00:00Z" \
                fx_git commit -q -m "$1"
        }
        fx_git init -q .
        printf '# project\n\nA small C and Python project.\n' > README.md
        printf 'build/\n*.o\nnode_modules/\n.cache/\n__pycache__/\n' > .gitignore
        fx_git add -A && commit "initial commit"
        mkdir -p src include tests
        printf '#ifndef UTIL_H\n#define UTIL_H\nint add(int a, int b);\n#endif\n' > include/util.h
        printf '#include "util.h"\nint add(int a, int b) { return a + b; }\n' > src/util.c
        printf '#include <stdio.h>\n#include "util.h"\nint main(void) { printf("%%d\\n", add(2, 3)); return 0; }\n' > src/main.c
        cat > Makefile <<'MK'
CFLAGS ?= -O1 -Wall
B := build
all: $(B)/app
$(B):
	mkdir -p $(B)
$(B)/%.o: src/%.c include/util.h | $(B)
	$(CC) $(CFLAGS) -Iinclude -c $< -o $@
$(B)/app: $(B)/main.o $(B)/util.o
	$(CC) $^ -o $@
test: all
	python3 -m unittest discover -s tests -q
clean:
	rm -rf $(B)
.PHONY: all test clean
MK
        printf 'import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(2 + 3, 5)\n' > tests/test_basic.py
        fx_git add -A && commit "C sources and a Makefile"
        mkdir -p pkg
        for i in $(seq -w 0 299); do
            printf '"""module %s"""\n\ndef value():\n    return %d\n' "$i" "$((10#$i))" > "pkg/mod_$i.py"
        done
        fx_git add -A && commit "add 300 modules"
        fx_git tag -a v0.1 -m "release 0.1"
        fx_git branch feature
        fx_git pack-refs --all
        printf 'usage: make && ./build/app\n' >> README.md
        fx_git commit -q -am "document usage" --date=2026-01-05T10:00:00Z
        fx_git commit -q --amend -m "document usage (amended)"   # the first version lives in the reflog only
        fx_git checkout -q feature
        printf '#include "util.h"\nint sub(int a, int b) { return a - b; }\n' > src/feature.c
        fx_git add -A && commit "feature: sub()"
        printf 'int mul(int a, int b) { return a * b; }\n' >> src/feature.c
        fx_git commit -q -am "feature: mul()"
        fx_git checkout -q main
        printf '/* experiment 1: never committed */\n' >> src/main.c
        fx_git stash push -q -m "experiment 1"
        printf '/* experiment 2: never committed */\n' >> src/main.c
        fx_git stash push -q -m "experiment 2"
        printf '/* work in progress: not committed yet */\nint twice(int a) { return add(a, a); }\n' >> src/util.c
        mkdir -p notes
        printf '# design draft\nuntracked and precious: the only copy.\n' > notes/design-draft.md
        make -s >/dev/null
        mkdir -p build/gen
        for i in $(seq -w 0 149); do head -c 512 /dev/urandom > "build/gen/unit_$i.o"; done
    ) || return 1
    chmod -R u+rwX,go+rX "$H"
    chmod 700 "$H/.ssh"
    chmod 600 "$H/.ssh/id_ed25519" "$H/.ssh/config" "$H/.ssh/authorized_keys" "$H/.aws/credentials"
}

apply_variant() {   # apply_variant HOME NAME
    local H=$1
    case $2 in
        bash-aliases)   # the user keeps aliases in ~/.bash_aliases (sourced by .bashrc)
            printf "alias gs='git status'\nalias gl='git log --oneline -20'\n" > "$H/.bash_aliases" ;;
        no-config)      # a fresh account: no ~/.config at all
            rm -rf "$H/.config" ;;
        user-rules)     # the user already has a cottonbox rules file
            mkdir -p "$H/.config/cottonbox"
            cat > "$H/.config/cottonbox/rules.yaml" <<'RC'
version: 1
rules:
  - id: protect-papers
    action: file.mutate
    path: ["${HOME}/Documents/**"]
    decision: deny
    message: "my papers"
RC
            ;;
        *) echo "unknown fixture variant: $2" >&2; return 1 ;;
    esac
}
