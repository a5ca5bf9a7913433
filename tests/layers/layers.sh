#!/usr/bin/env bash
# Sandboxes inside a session (issue 18): bwrap and unshare run under the
# default policy, and what a child namespace makes possible (other names
# through bind mounts, a sandbox's own root, /proc/PID/root of a process in
# another namespace, uncovering or re-mounting a layer, entering the host's
# namespace) changes nothing about what the rules protect.
#   layers.sh COTTONBOX SOURCE_DIR root|user
set -uo pipefail
cb=$(readlink -f "$1")
src=$2
mode=$3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (makes fixtures for a throwaway user)"; exit 77; }
for t in bwrap unshare; do
    command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (scripts/install-deps.sh installs it)"; exit 77; }
done
# Probed natively first: a host without user namespaces cannot run these.
unshare -Urm true 2>/dev/null || { echo "SKIP: this host refuses unprivileged user+mount namespaces"; exit 77; }
bwrap --dev-bind / / --unshare-pid true 2>/dev/null || { echo "SKIP: bwrap cannot make namespaces on this host"; exit 77; }

work=$(mktemp -d /tmp/cb-layers.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
proj=$work/project
mkdir -p "$proj/.git/refs" "$work/b" "$work/home"
echo "ref: refs/heads/main" > "$proj/.git/HEAD"
db=$work/audit.db
as=()
if [ "$mode" = user ]; then
    user=cblayers
    id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user" ||
        { echo "SKIP: cannot create a user"; exit 77; }
    d=$(dirname "$cb")
    while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null; d=$(dirname "$d"); done
    chown -R "$user" "$work"
    as=(runuser -u "$user" --)
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
session() {  # the embedded default policy, in the project, as a new user would
    (cd "$proj" && "${as[@]}" env HOME="$work/home" "$cb" run --db "$db" --ask deny -q -- "$@")
}
# (Into a file first: grep -q would end the pipe early, which pipefail reports.)
denials() {
    "${as[@]}" "$cb" events --db "$db" --json > "$work/events.json" 2>/dev/null
    grep '"decision":"deny"' "$work/events.json"
}
has_denial() { denials > "$work/denials.json"; grep -q "$1" "$work/denials.json"; }
head_survives() { [ -s "$proj/.git/HEAD" ] || fail "$1: .git/HEAD was destroyed"; }
denied_at() {  # a denial recorded for the host's name of the object
    has_denial "\"path\":\"$2\"" || fail "$1: no denial recorded for $2"
}

# ---- the layering table: each runs, as root and as a plain user
row() {
    local name=$1; shift
    out=$(session "$@" 2>&1)
    if [ $? -ne 0 ] || ! grep -q '^ok$' <<<"$out"; then fail "$name: $out"; else echo "ok   $name"; fi
}
row "bwrap --dev-bind / / --proc /proc --unshare-pid" \
    bwrap --dev-bind / / --proc /proc --unshare-pid sh -c 'echo ok'
row "bwrap --ro-bind / / --bind --dev --proc --tmpfs --unshare-all --die-with-parent" \
    bwrap --ro-bind / / --bind "$work" "$work" --dev /dev --proc /proc --tmpfs /var/tmp --unshare-all \
    --die-with-parent sh -c "echo ok > $work/out-bwrap && touch /var/tmp/x && cat $work/out-bwrap"
row "unshare -Urm" unshare -Urm sh -c 'echo ok'
row "unshare -Urmpf --mount-proc" unshare -Urmpf --mount-proc sh -c '[ $$ = 1 ] && [ -d /proc/1 ] && echo ok'
row "unshare -Urn" unshare -Urn sh -c 'echo ok'
row "unshare -Urmn, a tmpfs of its own" unshare -Urmn sh -c "mount -t tmpfs none $work/b && touch $work/b/x && echo ok"
# The namespace's root owns what the user owns: chown to 0 and tar's
# extraction (which restores owners as root) work as natively.
mkdir -p "$work/own" && { [ "$mode" = root ] || chown "$user" "$work/own"; }
row "unshare -Urm, chown to the namespace's root and tar -x" unshare -Urm sh -c \
    "cd $work/own && touch f && chown 0:0 f && tar -czf a.tgz f && mkdir -p x && tar -xzf a.tgz -C x && echo ok"
if [ "$mode" = root ]; then
    row "unshare -m (root)" unshare -m sh -c 'echo ok'
    row "unshare -mpf --mount-proc (root)" unshare -mpf --mount-proc sh -c 'echo ok'
fi
# The sandboxes coding agents use, from npm (scripts/install-npm-tools.sh):
# each row probed natively first.
tools=${COTTONBOX_NPM_TOOLS:-$src/build/npm-tools}/node_modules/.bin
# Codex refuses to keep its helpers under /tmp: its home is in /var/tmp.
codex_home=$(mktemp -d /var/tmp/cb-layers-codex.XXXXXX)
chmod 755 "$codex_home"
[ "$mode" = user ] && chown "$user" "$codex_home"
trap 'rm -rf "$work" "$codex_home"' EXIT
codex=(env CODEX_HOME="$codex_home" "$tools/codex" sandbox --)
if [ -x "$tools/codex" ] && "${as[@]}" "${codex[@]}" true >/dev/null 2>&1; then
    row "codex sandbox (Codex CLI)" "${codex[@]}" sh -c 'echo ok'
    session "${codex[@]}" sh -c "rm -f $proj/.git/HEAD" >/dev/null 2>&1
    head_survives "codex sandbox"
    denied_at "codex sandbox" "$proj/.git/HEAD"
else
    echo "skip codex sandbox: Codex CLI is not installed in $tools or cannot sandbox natively here"
fi
if [ -x "$tools/srt" ] && (cd "$work" && "${as[@]}" env HOME="$work/home" "$tools/srt" -c true) >/dev/null 2>&1; then
    row "srt (Anthropic's sandbox runtime)" "$tools/srt" -c 'echo ok'
    session "$tools/srt" -c "rm -f $proj/.git/HEAD" >/dev/null 2>&1
    head_survives "srt"
    denied_at "srt" "$proj/.git/HEAD"
else
    echo "skip srt: not installed in $tools, or it cannot sandbox natively here (it needs bwrap, socat, ripgrep)"
fi
# firejail (a Debian package) declines to add its own sandbox inside any pid
# namespace ("an existing sandbox was detected"), inside bwrap as inside a
# session, and runs the command as it is: the row checks that it runs and
# that the rules still hold through it.
if command -v firejail >/dev/null && (cd "$work" && "${as[@]}" firejail --quiet --noprofile true) >/dev/null 2>&1; then
    row "firejail --noprofile" firejail --quiet --noprofile sh -c 'echo ok'
    session firejail --quiet --noprofile sh -c "rm -f $proj/.git/HEAD" >/dev/null 2>&1
    head_survives "firejail"
    denied_at "firejail" "$proj/.git/HEAD"
else
    echo "skip firejail: not installed, or it cannot run natively here"
fi

# ---- other names of a protected tree, made inside the session
session unshare -Urm sh -c "mount --bind $proj $work/b && rm -f $work/b/.git/HEAD" >/dev/null 2>&1
head_survives "a bind mount of the project"
denied_at "a bind mount of the project" "$proj/.git/HEAD"
session bwrap --dev-bind / / --bind "$proj" /srv sh -c 'rm -rf /srv/.git' >/dev/null 2>&1
head_survives "bwrap --bind of the project at /srv"
denied_at "bwrap --bind of the project at /srv" "$proj/.git/HEAD"
# /proc/PID/root of a process in another mount namespace: its bind mount.
session sh -c "unshare -Urm sh -c 'mount --bind $proj $work/b; sleep 3' & sleep 1; rm -f /proc/\$!/root$work/b/.git/HEAD; wait" \
    >/dev/null 2>&1
head_survives "/proc/PID/root of a process in another namespace"
denied_at "/proc/PID/root of a process in another namespace" "$proj/.git/HEAD"

# ---- undoing a layer: the session's audit trail is an empty read-only file
# bound over the database; a sandbox inside must not uncover it.
hidden() {  # what a process in the session reads of the trail after `$1`
    session unshare -Urm sh -c "$1 2>/dev/null; wc -c < $db" 2>/dev/null | tail -n 1
}
for attempt in "umount -l $db" "umount $db" "mount -o remount,bind,rw $db" "mount --bind $work $work/b && db=$work/b/audit.db"; do
    n=$(hidden "$attempt")
    [ "$n" = 0 ] || fail "after '$attempt' the session read $n bytes of its own trail"
done
if [ "$mode" = root ]; then
    # Root without a user namespace: nothing in the kernel locks these;
    # cottonbox refuses them itself (rule cottonbox:layers).
    for attempt in "umount -l $db" "mount -o remount,bind,rw $db" "mount --bind $work $work/b" \
        "mount --move $db $work/b" "mount -t overlay overlay -o lowerdir=$proj,upperdir=$work/u,workdir=$work/w $work/b" \
        "mount -o remount,ro /"; do
        before=$(denials | grep -c '"rule":"cottonbox:layers"')
        session unshare -m sh -c "$attempt" >/dev/null 2>&1
        after=$(denials | grep -c '"rule":"cottonbox:layers"')
        [ "$after" -gt "$before" ] || fail "root: '$attempt' was not refused as undoing a layer"
    done
    [ "$(session unshare -m sh -c "umount -l $db 2>/dev/null; wc -c < $db" 2>/dev/null | tail -n 1)" = 0 ] ||
        fail "root: umount -l uncovered the trail"
    # A mount in the session's own namespace would change every process's view.
    before=$(denials | grep -c "\"path\":\"$work/b\"")
    session mount -t tmpfs none "$work/b" >/dev/null 2>&1
    after=$(denials | grep -c "\"path\":\"$work/b\"")
    [ "$after" -gt "$before" ] || fail "root: a mount in the session's own namespace was not refused"
    # The host's mount namespace, handed in as a descriptor.
    session nsenter --mount=/proc/self/fd/7 true 7</proc/self/ns/mnt >/dev/null 2>&1 &&
        fail "root: setns into the host's mount namespace succeeded"
fi

# ---- the kernel's settings through a sandbox's own proc, sys or cgroup:
# the session's are read-only for root, a fresh mount of them is not, and
# core_pattern has the kernel run a program as root outside every namespace.
# Each attempt writes the value already there: were it let through, nothing
# would change.
if [ "$mode" = root ]; then
    cur=$(cat /proc/sys/kernel/core_pattern)
    if unshare -m --mount-proc sh -c "printf '%s\n' '$cur' > /proc/sys/kernel/core_pattern" 2>/dev/null; then
        for attempt in "unshare -m --mount-proc" "unshare -Urpf --mount-proc" "unshare -m sh -c 'mount -t proc p $work/b &&"; do
            case $attempt in
                *"&&") cmd="$attempt printf '%s\n' '$cur' > $work/b/sys/kernel/core_pattern && echo wrote'" ;;
                *) cmd="$attempt sh -c \"printf '%s\\n' '$cur' > /proc/sys/kernel/core_pattern && echo wrote\"" ;;
            esac
            before=$(denials | grep -c '"action":"sys.kernel"')
            out=$(session sh -c "$cmd" 2>&1)
            after=$(denials | grep -c '"action":"sys.kernel"')
            if grep -q wrote <<<"$out"; then fail "root: core_pattern written through '$attempt'"
            elif [ "$after" -le "$before" ]; then fail "root: no sys.kernel refusal recorded for '$attempt': $out"
            else echo "ok   core_pattern refused through '$attempt'"; fi
        done
        has_denial '"path":"/proc/sys/kernel/core_pattern"' || fail "root: the refusal does not name core_pattern"
    else
        echo "skip core_pattern: root cannot write it from a mount namespace of its own on this host"
    fi
    if unshare -m sh -c "mount -t cgroup2 c $work/b && cat $work/b/cgroup.subtree_control > $work/b/cgroup.subtree_control" 2>/dev/null; then
        out=$(session unshare -m sh -c "mount -t cgroup2 c $work/b && cat $work/b/cgroup.subtree_control > $work/b/cgroup.subtree_control && echo wrote" 2>&1)
        grep -q wrote <<<"$out" && fail "root: a fresh cgroup2 mount was written: $out"
        if has_denial '"action":"sys.kernel".*cgroup.subtree_control\|cgroup.subtree_control.*"action":"sys.kernel"'; then
            echo "ok   a fresh cgroup2 mount's cgroup.subtree_control refused"
        else
            fail "root: no sys.kernel refusal recorded for cgroup.subtree_control"
        fi
    else
        echo "skip cgroup2: root cannot mount and write it from a mount namespace of its own on this host"
    fi
    # A setting of the process's own network namespace is its own.
    row "unshare -nm --mount-proc, net.ipv4.ip_forward of its own namespace" \
        unshare -nm --mount-proc sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward && echo ok'
fi
# bwrap --disable-userns sets user.max_user_namespaces of the namespace it made
# (srt asks for it where it has no helper): only bwrap's own open reaches it.
if [ "$mode" = user ] && "${as[@]}" bwrap --unshare-user --disable-userns --dev-bind / / true 2>/dev/null; then
    row "bwrap --unshare-user --disable-userns" bwrap --unshare-user --disable-userns --dev-bind / / --proc /proc sh -c 'echo ok'
fi

echo "layers ($mode): $fails failure(s)"
[ "$fails" = 0 ]
