// notify-target: programs to run under notify-lab (docs/labs/1-seccomp-notify.md).
//
//   notify-target race N          N unlinkat calls on a path that another thread
//                                 flips between temp/victim and keep/victim
//   notify-target int80-unlink F  unlinks F through the i386 entry (int $0x80)
//   notify-target int80-probe     exits 0 if int $0x80 reaches a syscall here
//   notify-target opens N         N write-opens of /dev/null, and their mean time
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
  while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
    __atomic_store_n((uint32_t*)path, keep, __ATOMIC_RELAXED);
    __atomic_store_n((uint32_t*)path, temp, __ATOMIC_RELAXED);
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

// An i386 system call from a 64-bit process: the numbers are i386's (unlink
// is 10; x86_64's 10 is mprotect) and pointers must fit in 32 bits.
static long int80(long nr, const char* arg) {
  char* low = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (low == MAP_FAILED) return -errno;
  snprintf(low, 4096, "%s", arg ? arg : "");
  long r;
  __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(low) : "memory", "r8", "r9", "r10", "r11");
  munmap(low, 4096);
  return r;
}

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
  if (argc == 3 && !strcmp(argv[1], "int80-unlink")) {
    long r = int80(10, argv[2]);
    if (r < 0) return printf("notify-target: i386 unlink(\"%s\"): %s\n", argv[2], strerror((int)-r)), 1;
    printf("notify-target: i386 unlink(\"%s\") through int $0x80: done\n", argv[2]);
    return 0;
  }
  if (argc == 2 && !strcmp(argv[1], "int80-probe")) return int80(20, NULL) == getpid() ? 0 : 1;  // i386 getpid
  fprintf(stderr, "usage: notify-target race N | int80-unlink FILE | int80-probe | opens N\n");
  return 2;
}
