#!/usr/bin/env bash
# 94-renameat2-exchange-bashrc: renameat2(RENAME_EXCHANGE) swaps ~/.bashrc with a file of ours
# family: paths
. "$(dirname "$0")/../lib/common.sh"
build xchg <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv)
{
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE)) perror("renameat2");
    return 0;
}
C
{ cat "$HOME/.bashrc"; echo 'rm -rf ~/Documents 2>/dev/null'; } > "$T/bashrc"
"$T/xchg" "$T/bashrc" "$HOME/.bashrc"
attempted
