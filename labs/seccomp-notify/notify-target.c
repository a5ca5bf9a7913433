// notify-target: programs to run under notify-lab (docs/labs/1-seccomp-notify.md).
//
//   notify-target race N          N unlinkat calls on a path that another thread
//                                 flips between temp/victim and keep/victim
//   notify-target x32-unlink F    unlinks F with the x32 ABI's syscall number
//   notify-target opens N         N write-opens of /dev/null, and their mean time
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The path handed to unlinkat.  Its first four bytes are "temp" or "keep",
// written as one aligned 32-bit store, so the kernel and the supervisor only
// ever read one of the two whole paths, never a mix.
static char path[16] __attribute__((aligned(4))) = "temp/victim";
static int stop;

static void* flip(void* unused) {
  (void)unused;
  uint32_t temp, keep;
  memcpy(&temp, "temp", 4);
  memcpy(&keep, "keep", 4);
  // Each value is held for 20 pause instructions: with bare back-to-back
  // stores, the supervisor read keep/victim in 85-97% of the calls here, and
  // the race won less often.
  while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
    __atomic_store_n((uint32_t*)path, keep, __ATOMIC_RELAXED);
    for (int i = 0; i < 20; ++i) __builtin_ia32_pause();
    __atomic_store_n((uint32_t*)path, temp, __ATOMIC_RELAXED);
    for (int i = 0; i < 20; ++i) __builtin_ia32_pause();
  }
  return NULL;
}

// The race: a supervisor that reads the path, finds temp/victim, and answers
// CONTINUE lets the kernel read it again; by then it may say keep/victim.
static int race(long n) {
  // mknod makes the regular files without an openat, so only the unlinkat
  // calls are notified.
  if (mkdir("keep", 0755) && errno != EEXIST) return perror("keep"), 1;
  if (mkdir("temp", 0755) && errno != EEXIST) return perror("temp"), 1;
  pthread_t t;
  pthread_create(&t, NULL, flip, NULL);
  long refused = 0, kept_lost = 0, other = 0;
  for (long i = 0; i < n; ++i) {
    mknod("keep/victim", S_IFREG | 0644, 0);
    mknod("temp/victim", S_IFREG | 0644, 0);
    if (unlinkat(AT_FDCWD, path, 0) != 0) {
      if (errno == EACCES)
        ++refused;
      else
        ++other;
    }
    if (access("keep/victim", F_OK) != 0) ++kept_lost;
  }
  __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
  pthread_join(t, NULL);
  printf("notify-target: %ld unlinkat calls on a path flipping between temp/victim and keep/victim\n", n);
  printf("notify-target: %ld refused with EACCES, %ld allowed", refused, n - refused - other);
  if (other) printf(", %ld failed otherwise", other);
  if (kept_lost)
    printf("; keep/victim was deleted %ld times\n", kept_lost);
  else
    printf("; keep/victim was never deleted\n");
  return 0;
}

// The x32 ABI reaches the same entry as x86_64 with bit 30 set in the
// number (unlink is 87 in both).  A filter that compared numbers without
// that bit would judge x32 calls as native ones.
#define X32_SYSCALL_BIT 0x40000000

static int opens(long n) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; ++i) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0) return perror("notify-target: /dev/null"), 1;
    close(fd);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 / (double)n;
  printf("notify-target: %ld write-opens of /dev/null, %.1f us each\n", n, us);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && !strcmp(argv[1], "race")) return race(atol(argv[2]));
  if (argc == 3 && !strcmp(argv[1], "opens")) return opens(atol(argv[2]));
  if (argc == 3 && !strcmp(argv[1], "x32-unlink")) {
    long r = syscall(X32_SYSCALL_BIT | SYS_unlink, argv[2]);
    if (r < 0) return printf("notify-target: x32 unlink(\"%s\"): %s\n", argv[2], strerrorname_np(errno)), 1;
    printf("notify-target: x32 unlink(\"%s\"): done\n", argv[2]);
    return 0;
  }
  fprintf(stderr, "usage: notify-target race N | x32-unlink FILE | opens N\n");
  return 2;
}
