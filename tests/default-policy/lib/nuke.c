/* nuke: remove every path given, recursively, with unlinkat() and no rm process.
 * With NUKE_COMM set it first renames its own thread (prctl PR_SET_NAME), the
 * way a forged identity would. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

void nuke_at(int dirfd, const char *name) {
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (fd >= 0) {
      DIR *d = fdopendir(fd);
      struct dirent *e;
      while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) nuke_at(fd, e->d_name);
      if (d) closedir(d);
    }
    if (unlinkat(dirfd, name, AT_REMOVEDIR)) perror(name);
  } else if (unlinkat(dirfd, name, 0)) {
    perror(name);
  }
}

#ifndef NUKE_NO_MAIN
int main(int argc, char **argv) {
  const char *comm = getenv("NUKE_COMM");
  if (comm) prctl(PR_SET_NAME, comm, 0, 0, 0);
  for (int i = 1; i < argc; i++) nuke_at(AT_FDCWD, argv[i]);
  return 0;
}
#endif
