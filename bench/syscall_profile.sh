#!/usr/bin/env bash
# What the workload asks of the kernel: one run under `strace -f`, outside
# any timed run, and the system calls it made, by family.
#
#   bench/syscall_profile.sh [WORKLOAD OPTIONS] [DIR]
#
# WORKLOAD OPTIONS are workload.sh's (--size, --files, --seds, --compiles);
# DIR defaults to a fresh directory in /dev/shm, removed afterwards.
# "file-mutating" = opens for writing/creating/truncating, unlink/rmdir,
# rename, mkdir, link/symlink, mknod, truncate/fallocate, chmod/chown,
# utimes and xattr changes: what a policy on files could have to decide.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
opts=() dir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --size|--files|--seds|--compiles) opts+=("$1" "$2"); shift 2 ;;
        -*) echo "usage: syscall_profile.sh [--size S|--files N|--seds N|--compiles N] [DIR]" >&2; exit 2 ;;
        *) dir=$1; shift ;;
    esac
done
command -v strace > /dev/null || { echo "syscall_profile: strace is not installed" >&2; exit 1; }
tmp=""
if [ -z "$dir" ]; then
    tmp=$(mktemp -d /dev/shm/cottonbox-profile.XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
    dir=$tmp
fi
"$here/workload.sh" "${opts[@]}" --prepare "$dir"
log=$dir/strace.log
strace -f -qq -o "$log" "$here/workload.sh" "${opts[@]}" "$dir"
awk '
    / \+\+\+ | --- / { next }
    / <\.\.\. [a-z0-9_]+ resumed>/ { next }
    {
        if (!match($0, /^[0-9]+ +[a-z0-9_]+\(/)) next
        s = substr($0, RSTART, RLENGTH - 1); sub(/^[0-9]+ +/, "", s)
        total++; n[s]++
        fam = ""
        if (s ~ /^(open|openat|openat2)$/) fam = ($0 ~ /O_(WRONLY|RDWR|CREAT|TRUNC)/) ? "open (write/create/truncate)" : "open (read-only)"
        else if (s == "creat") fam = "open (write/create/truncate)"
        else if (s ~ /^(unlink|unlinkat|rmdir)$/) fam = "unlink/rmdir"
        else if (s ~ /^rename/) fam = "rename"
        else if (s ~ /^mkdir/) fam = "mkdir"
        else if (s ~ /^(link|linkat|symlink|symlinkat)$/) fam = "link/symlink"
        else if (s ~ /^mknod/) fam = "mknod"
        else if (s ~ /^(truncate|ftruncate|fallocate)$/) fam = "truncate/fallocate"
        else if (s ~ /^(chmod|fchmod|fchmodat|fchmodat2)$/) fam = "chmod"
        else if (s ~ /^(chown|fchown|lchown|fchownat)$/) fam = "chown"
        else if (s ~ /^(utime|utimes|utimensat|futimesat)$/) fam = "utimes"
        else if (s ~ /^(setxattr|lsetxattr|fsetxattr|removexattr|lremovexattr|fremovexattr)$/) fam = "xattr"
        else if (s ~ /^execve/) fam = "exec"
        if (fam != "") f[fam]++
        if (fam != "" && fam != "exec" && fam != "open (read-only)") mut++
    }
    END {
        printf "system calls:        %d\n", total
        printf "file-mutating:       %d\n", mut
        printf "exec (execve*):      %d (including failed PATH lookups)\n", f["exec"]
        print "by family:"
        for (k in f) printf "  %-30s %d\n", k, f[k] | "sort"
        close("sort")
        print "most frequent system calls:"
        for (k in n) printf "  %-16s %d\n", k, n[k] | "sort -k2,2nr | head -25"
    }' "$log"
rm -f "$log"
