#!/usr/bin/env bash
# 11-memfd-execveat: rm copied into a memfd named git and run with execveat(AT_EMPTY_PATH): no file on disk
# family: identity
. "$(dirname "$0")/../lib/common.sh"
need rm
build memexec <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv)
{
    int fd = memfd_create("git", MFD_CLOEXEC), in = open(argv[1], O_RDONLY);
    char buf[1 << 16];
    ssize_t n;
    if (fd < 0 || in < 0) { perror("memfd/open"); return 1; }
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(fd, buf, n) != n) return 1;
    argv[1] = "git";
    syscall(SYS_execveat, fd, "", &argv[1], environ, AT_EMPTY_PATH);
    perror("execveat");
    return 1;
}
C
"$T/memexec" "$(readlink -f "$(command -v rm)")" -rf "${GIT_HISTORY[@]}"
attempted
