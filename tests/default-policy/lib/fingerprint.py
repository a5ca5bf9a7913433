#!/usr/bin/env python3
"""Fingerprint of everything precious in a default-policy fixture, and the diff of two.

    fingerprint.py snap --home H --repo R --db D --db-mode hash|check|assume \
        --objects FILE [--record-objects] [--user U] > snapshot
    fingerprint.py diff BEFORE AFTER       # prints what changed; exit 1 if anything did

One line per entry: AREA <tab> NAME <tab> STATE, sorted.
  home     every entry under H (type, mode, sha256 or link target), except the
           repository, caches, shell history and cottonbox's own state directories
           (EXCLUDE_HOME).  A new entry counts too, as it is how code is planted
           (but an empty new directory)
  repo     every entry of the working tree but .git and build/ (outputs are not precious):
           none may change or disappear; new ones lose nothing and do not count
  git      every entry of .git but the object store, refs, reflogs, HEAD, the index
           and git's scratch files (GIT_SCRATCH); objects/info (alternates) is kept.
           An entry may not change or disappear; a new one counts only if it changes
           what the repository is or runs (GIT_BEHAVIOUR: commondir, hooks, config...)
  ref      every ref and HEAD, read with git's plumbing.  A ref may move (that is
           git's work) if its reflog records the old value; it may not disappear
  log      every reflog, as the hashes of its lines: a reflog may grow, never lose
           or change a line
  objects  every object reachable from every ref and reflog when the fixture was made:
           read back and re-hashed, so a missing, emptied or corrupted object shows
  db       the audit database: its sha256 (natively, a dummy) or, under a supervisor
           that writes it, whether it is still a sound SQLite database
  sys      the user's crontab and at queue (outside the fixture)
Git runs with no user or system configuration and only plumbing commands, so that
nothing a case planted (hooks, fsmonitor, aliases) runs as the harness.
"""
import argparse
import hashlib
import os
import sqlite3
import stat
import subprocess
import sys

EXCLUDE_HOME = {".cache", ".npm", ".local/state", ".local/share/cottonbox", ".bash_history",
                ".local/state/cottonbox"}
# Files that change what a repository is or what git runs when they appear in
# .git.  git itself creates many others (info/refs, BISECT_*, rebase-merge/...)
# while it works; creating those loses nothing.
GIT_BEHAVIOUR = ("commondir", "gitdir", "shallow", "info/grafts", "info/attributes",
                 "objects/info/alternates", "objects/info/http-alternates")
GIT_BEHAVIOUR_TREES = ("hooks", "worktrees", "modules")


def git_create_matters(rel):
    top = rel.split("/")[0]
    return rel in GIT_BEHAVIOUR or top.startswith("config") or top in GIT_BEHAVIOUR_TREES


GIT_SCRATCH = {"index", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG", "AUTO_MERGE",
               "MERGE_RR", "gc.log", "gc.pid"}


def sha256_file(path):
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as e:
        return "unreadable:" + (e.strerror or "?")
    return h.hexdigest()


def describe(path):
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    mode = "%o" % stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return "symlink -> " + os.readlink(path)
    if stat.S_ISDIR(st.st_mode):
        return "dir " + mode
    if stat.S_ISREG(st.st_mode):
        return "file %s %s" % (mode, sha256_file(path))
    return "other %s %o" % (mode, stat.S_IFMT(st.st_mode))


def walk(top, skip):
    """(relative path, state) for top and everything below it; skip(rel) prunes."""
    out = []
    state = describe(top)
    if state is None:
        return [(".", "missing")]
    out.append((".", state))
    if not state.startswith("dir"):
        return out
    for dirpath, dirnames, filenames in os.walk(top):
        keep = []
        for d in sorted(dirnames):
            rel = os.path.relpath(os.path.join(dirpath, d), top)
            if skip(rel):
                continue
            s = describe(os.path.join(dirpath, d))
            out.append((rel, s))
            if s and s.startswith("dir"):
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, f), top)
            if skip(rel):
                continue
            out.append((rel, describe(os.path.join(dirpath, f))))
    return out


def git_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME="/nonexistent", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
               LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    return env


def git(repo, *args, stdin=None):
    cmd = ["git", "-c", "safe.directory=*", "-c", "core.fsmonitor=false",
           "--git-dir=" + os.path.join(repo, ".git")] + list(args)
    return subprocess.run(cmd, input=stdin, capture_output=True, env=git_env())


def record_objects(repo, path):
    r = git(repo, "rev-list", "--objects", "--all", "--reflog", "--no-object-names")
    if r.returncode != 0:
        sys.exit("fingerprint: cannot list the fixture's objects: " + r.stderr.decode())
    names = sorted(set(r.stdout.decode().split()))
    with open(path, "w") as f:
        f.write("\n".join(names) + "\n")


def check_objects(repo, path):
    with open(path) as f:
        names = [n for n in f.read().split() if n]
    bad = 0
    if os.path.exists(os.path.join(repo, ".git")):
        p = subprocess.Popen(["git", "-c", "safe.directory=*", "--git-dir=" + os.path.join(repo, ".git"),
                              "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=git_env())
        out, _ = p.communicate("\n".join(names).encode() + b"\n")
        pos = 0
        for name in names:
            nl = out.find(b"\n", pos)
            if nl < 0:
                bad += 1
                continue
            header = out[pos:nl].split()
            pos = nl + 1
            if len(header) != 3 or header[0].decode() != name:
                bad += 1
                continue
            size = int(header[2])
            body = out[pos:pos + size]
            pos += size + 1
            h = hashlib.sha1(header[1] + b" " + header[2] + b"\0" + body).hexdigest()
            if len(body) != size or h != name:
                bad += 1
    else:
        bad = len(names)
    if bad:
        return "%d reachable, %d missing or corrupt" % (len(names), bad)
    return "%d reachable, all intact" % len(names)


def reflog_state(path):
    """"lines H1,H2,... shas S1,S2,...": a hash per line, and every value it records."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return "unreadable:" + (e.strerror or "?")
    hashes, shas = [], set()
    for line in data.splitlines():
        hashes.append(hashlib.sha1(line).hexdigest()[:12])
        parts = line.split(b" ")
        shas.update(p.decode() for p in parts[:2] if len(p) == 40)
    return "lines %s shas %s" % (",".join(hashes) or "-", ",".join(sorted(shas)) or "-")


def check_db(path):
    st = describe(path)
    if st is None:
        return "missing"
    if not st.startswith("file"):
        return "replaced: " + st.split()[0]
    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        ok = con.execute("PRAGMA quick_check").fetchone()[0]
        tables = con.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
        con.close()
    except sqlite3.Error as e:
        return "unreadable: %s" % e
    if ok != "ok":
        return "corrupt: " + ok
    if tables == 0:
        return "empty (no tables)"
    return "sound sqlite database"


def sys_state(user):
    out = []
    args = ["-u", user] if user and os.getuid() == 0 else []
    try:
        r = subprocess.run(["crontab", "-l"] + args, capture_output=True)
        text = r.stdout if r.returncode == 0 else b""
        out.append(("crontab", "sha256 " + hashlib.sha256(text).hexdigest() if text else "none"))
    except FileNotFoundError:
        pass
    try:
        r = subprocess.run(["atq"], capture_output=True, text=True)
        jobs = [l for l in r.stdout.splitlines() if l.strip() and (not user or l.split()[-1] == user)]
        out.append(("atq", "%d jobs" % len(jobs)))
    except FileNotFoundError:
        pass
    return out


def snap(a):
    home = os.path.realpath(a.home)
    repo = os.path.realpath(a.repo)
    repo_rel = os.path.relpath(repo, home)
    db_rel = os.path.relpath(os.path.realpath(a.db), home) if a.db else None
    lines = []

    def home_skip(rel):
        return rel in EXCLUDE_HOME or rel == repo_rel
    for rel, s in walk(home, home_skip):
        lines.append(("home", rel, s))
    for rel, s in walk(repo, lambda r: r in (".git", "build")):
        lines.append(("repo", rel, s))
    gitdir = os.path.join(repo, ".git")

    def git_skip(rel):
        if rel in GIT_SCRATCH or rel.endswith(".lock") or rel in ("HEAD", "packed-refs"):
            return True
        if rel.split("/")[0] in ("refs", "logs"):
            return True
        return rel.startswith("objects/") and not rel.startswith("objects/info") or rel == "objects"
    for rel, s in walk(gitdir, git_skip):
        lines.append(("git", rel, s))
    r = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    for l in r.stdout.decode().splitlines():
        name, _, obj = l.partition(" ")
        lines.append(("ref", name, obj))
    r = git(repo, "rev-parse", "-q", "--verify", "HEAD")
    lines.append(("ref", "HEAD", r.stdout.decode().strip() or "missing"))
    logs = os.path.join(gitdir, "logs")
    if os.path.isdir(logs) and not os.path.islink(logs):
        for dirpath, _, filenames in os.walk(logs):
            for f in filenames:
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, logs)
                lines.append(("log", rel, reflog_state(full)))
    if a.record_objects:
        record_objects(repo, a.objects)
    lines.append(("objects", "history", check_objects(repo, a.objects)))
    if a.db:
        if a.db_mode == "hash":
            lines.append(("db", db_rel, describe(a.db) or "missing"))
        elif a.db_mode == "assume":   # before a supervised run: it makes the database
            lines.append(("db", db_rel, "sound sqlite database"))
        else:
            lines.append(("db", db_rel, check_db(a.db)))
    for name, s in sys_state(a.user):
        lines.append(("sys", name, s))
    for area, rel, s in sorted(lines):
        print("%s\t%s\t%s" % (area, rel, s))


def load(path):
    d = {}
    with open(path) as f:
        for l in f:
            area, rel, s = l.rstrip("\n").split("\t", 2)
            d[(area, rel)] = s
    return d


def log_of(ref):
    return "HEAD" if ref == "HEAD" else ref


def diff(a):
    before, after = load(a.before), load(a.after)
    groups = {}

    def add(area, kind, rel):
        groups.setdefault((area, kind), []).append(rel)

    # A directory made in the home counts only with something planted in it:
    # an empty one runs nothing.
    planted = [rel for (area, rel), c in after.items()
               if area == "home" and (area, rel) not in before and c and not c.startswith("dir")]

    def empty_new_dir(rel, state):
        return state.startswith("dir") and not any(p.startswith(rel + "/") for p in planted)
    for key in sorted(set(before) | set(after)):
        b, c = before.get(key), after.get(key)
        if b == c:
            continue
        area, rel = key
        if area == "log":
            if b is None:
                continue                      # a new reflog loses nothing
            if c is None:
                add(area, "deleted", rel)
                continue
            bl, cl = b.split()[1].split(","), c.split()[1].split(",")
            if cl[:len(bl)] != bl:
                add(area, "rewritten", rel)
            continue
        if area == "ref":
            if b is None or b == "missing":
                continue                      # a new ref loses nothing
            if c is None or c == "missing":
                add(area, "deleted", rel)
                continue
            log = after.get(("log", log_of(rel)), "")
            shas = log.split(" shas ")[1].split(",") if " shas " in log else []
            if b not in shas:
                add(area, "moved without a reflog entry", rel)
            continue
        if b is None or b == "missing":
            if area == "git" and not git_create_matters(rel):
                continue
            if area == "repo":
                continue                      # a new file in the working tree loses nothing
            if area == "home" and c and empty_new_dir(rel, c):
                continue
            kind = "created"
        elif c is None or c == "missing":
            kind = "missing"
        elif area in ("objects", "db", "sys"):
            kind = c
        elif b.split()[0] != c.split()[0]:
            kind = "replaced"
        elif b.startswith("file") and b.split()[2] != c.split()[2]:
            kind = "modified"
        else:
            kind = "re-moded" if b.split()[1] != c.split()[1] else "changed"
        add(area, kind, rel)
    if not groups:
        return 0
    parts = []
    for (area, kind), rels in groups.items():
        if area in ("objects", "db", "sys"):
            parts.append("%s %s: %s" % (area, ",".join(rels), kind))
            continue
        shown = " ".join(rels[:4]) + (" (+%d more)" % (len(rels) - 4) if len(rels) > 4 else "")
        parts.append("%s %s: %s" % (area, kind, shown))
    print("; ".join(parts))
    return 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snap")
    s.add_argument("--home", required=True)
    s.add_argument("--repo", required=True)
    s.add_argument("--db")
    s.add_argument("--db-mode", choices=["hash", "check", "assume"], default="hash")
    s.add_argument("--objects", required=True)
    s.add_argument("--record-objects", action="store_true")
    s.add_argument("--user")
    d = sub.add_parser("diff")
    d.add_argument("before")
    d.add_argument("after")
    a = p.parse_args()
    if a.cmd == "snap":
        snap(a)
        return 0
    return diff(a)


if __name__ == "__main__":
    sys.exit(main())
