/* try_op: one raw operation per invocation, for the integration tests.
 * Exit status: 0 on success, else the errno (like bubblewrap's try-syscall):
 * a denial by cottonbox is EPERM (1) or EROFS (30), never a crash of ours. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int ret(long rc) { return rc < 0 ? errno : 0; }

static char flip_buf[4096];
static const char *flip_a, *flip_b;
static volatile int flip_stop;
static void *flipper(void *x) {
  size_t la = strlen(flip_a) + 1, lb = strlen(flip_b) + 1;
  while (!flip_stop) {
    memcpy(flip_buf, flip_a, la);
    for (volatile int i = 0; i < 50; i++)
      ;
    memcpy(flip_buf, flip_b, lb);
    for (volatile int i = 0; i < 50; i++)
      ;
  }
  return x;
}

/* The send races: a name flipped between an allowed and a denied address
 * under a thread that sends to it; a socket number re-pointed between a
 * netlink socket and a UDP socket under a thread that sends a denied name
 * through it. */
static struct sockaddr_in race_name, race_allowed, race_denied;
static int race_fd, race_netlink, race_udp;
static void *name_flipper(void *x) {
  while (!flip_stop) {
    memcpy(&race_name, &race_denied, sizeof race_name);
    __asm__ volatile("" ::: "memory"); /* each store happens: none is dead to the compiler */
    for (volatile int i = 0; i < 50; i++)
      ;
    memcpy(&race_name, &race_allowed, sizeof race_name);
    __asm__ volatile("" ::: "memory");
    for (volatile int i = 0; i < 50; i++)
      ;
  }
  return x;
}
static void *fd_swapper(void *x) {
  while (!flip_stop) {
    dup2(race_netlink, race_fd);
    dup2(race_udp, race_fd);
  }
  return x;
}
static struct sockaddr_in inet4(const char *ip, int port) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  inet_pton(AF_INET, ip, &a.sin_addr);
  return a;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: try_op OP ARGS\n");
    return 2;
  }
  const char *op = argv[1];
  if (!strcmp(op, "unlinkat")) return ret(syscall(SYS_unlinkat, AT_FDCWD, argv[2], 0));
  if (!strcmp(op, "dirfd_unlinkat")) {
    int d = open(argv[2], O_DIRECTORY | O_RDONLY);
    if (d < 0) return errno;
    return ret(syscall(SYS_unlinkat, d, argv[3], 0));
  }
  if (!strcmp(op, "int80_unlink")) {
    /* i386 unlink is 10; on the x86_64 table 10 is mprotect. */
    long rc;
    __asm__ volatile("int $0x80" : "=a"(rc) : "a"(10), "b"(argv[2]) : "memory");
    return rc < 0 ? (int)-rc : 0;
  }
  if (!strcmp(op, "x32_unlink")) return ret(syscall(87 | 0x40000000, argv[2]));
  if (!strcmp(op, "rename_exchange")) return ret(syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3], 2));
  if (!strcmp(op, "rename")) return ret(rename(argv[2], argv[3]));
  if (!strcmp(op, "open_trunc")) return ret(open(argv[2], O_WRONLY | O_TRUNC));
  if (!strcmp(op, "open_read")) return ret(open(argv[2], O_RDONLY));
  if (!strcmp(op, "create")) return ret(open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644));
  if (!strcmp(op, "truncate")) return ret(truncate(argv[2], 0));
  if (!strcmp(op, "link")) return ret(link(argv[2], argv[3]));
  if (!strcmp(op, "symlink")) return ret(symlink(argv[2], argv[3]));
  if (!strcmp(op, "chmod")) return ret(chmod(argv[2], 0777));
  if (!strcmp(op, "mkdir")) return ret(mkdir(argv[2], 0755));
  if (!strcmp(op, "chattr_i")) {
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) return errno;
    int f = FS_IMMUTABLE_FL;
    return ret(ioctl(fd, FS_IOC_SETFLAGS, &f));
  }
  if (!strcmp(op, "io_uring_setup")) {
    char params[120] = {0};
    return ret(syscall(SYS_io_uring_setup, 4, params));
  }
  if (!strcmp(op, "unshare")) {
    int flags = 0;
    if (strchr(argv[2], 'U')) flags |= CLONE_NEWUSER;
    if (strchr(argv[2], 'm')) flags |= CLONE_NEWNS;
    if (strchr(argv[2], 'n')) flags |= CLONE_NEWNET;
    return ret(unshare(flags));
  }
  if (!strcmp(op, "handle_trunc")) {
    /* Names the file by handle, then opens it for writing through the
     * root mount: a way around a read-only bind mount and around paths. */
    struct {
      unsigned int bytes;
      int type;
      unsigned char h[128];
    } fh = {.bytes = 128};
    int mount_id;
    if (syscall(SYS_name_to_handle_at, AT_FDCWD, argv[2], &fh, &mount_id, 0)) return errno;
    int m = open("/", O_RDONLY | O_DIRECTORY);
    return ret(syscall(SYS_open_by_handle_at, m, &fh, O_WRONLY | O_TRUNC));
  }
  if (!strcmp(op, "chroot")) return ret(chroot(argv[2]));
  if (!strcmp(op, "umount")) return ret(umount2(argv[2], MNT_DETACH));
  if (!strcmp(op, "kill")) return ret(kill(atoi(argv[2]), atoi(argv[3])));
  if (!strcmp(op, "ptrace_attach")) return ret(syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, atoi(argv[2]), 0, 0));
  if (!strcmp(op, "connect_unix")) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, argv[2], sizeof a.sun_path - 1);
    return ret(connect(s, (struct sockaddr *)&a, sizeof a));
  }
  if (!strcmp(op, "setuid_create")) {
    /* Drop to another uid (raw syscalls: every thread), then create a file. */
    uid_t u = (uid_t)atoi(argv[2]);
    if (syscall(SYS_setresgid, u, u, u) || syscall(SYS_setresuid, u, u, u)) return errno;
    return ret(open(argv[3], O_WRONLY | O_CREAT | O_EXCL, 0644));
  }
  if (!strcmp(op, "notify_fds")) {
    /* Counts seccomp listener fds this process holds: must be 0. */
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    char p[300], l[256];
    while ((e = readdir(d))) {
      snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
      ssize_t k = readlink(p, l, sizeof l - 1);
      if (k > 0) {
        l[k] = 0;
        if (strstr(l, "seccomp")) n++;
      }
    }
    printf("%d\n", n);
    return 0;
  }
  if (!strcmp(op, "flip_unlink")) {
    /* argv[2]: protected path, argv[3]: decoy, argv[4]: seconds */
    flip_a = argv[3];
    flip_b = argv[2];
    strcpy(flip_buf, flip_a);
    pthread_t th;
    pthread_create(&th, 0, flipper, 0);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct stat st;
    for (;;) {
      int fd = open(flip_a, O_CREAT | O_WRONLY, 0644);
      if (fd >= 0) close(fd);
      syscall(SYS_unlinkat, AT_FDCWD, flip_buf, 0);
      if (lstat(flip_b, &st) != 0) break;
      clock_gettime(CLOCK_MONOTONIC, &t);
      if (t.tv_sec - t0.tv_sec >= atoi(argv[4])) break;
    }
    flip_stop = 1;
    pthread_join(th, 0);
    return 0;
  }
  if (!strcmp(op, "send_flip") || !strcmp(op, "send_fdswap")) {
    /* argv[2]: allowed port on 127.0.0.1, argv[3]: denied port on
     * 127.0.0.2, argv[4]: sends.  Prints what the sends answered. */
    race_allowed = inet4("127.0.0.1", atoi(argv[2]));
    race_denied = inet4("127.0.0.2", atoi(argv[3]));
    int fdswap = !strcmp(op, "send_fdswap");
    race_udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    race_netlink = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE);
    race_fd = fdswap ? dup(race_netlink) : race_udp;
    memcpy(&race_name, fdswap ? &race_denied : &race_allowed, sizeof race_name);
    char payload[] = "race";
    struct iovec iov = {payload, 4};
    struct msghdr mh = {.msg_name = &race_name, .msg_namelen = sizeof race_name, .msg_iov = &iov, .msg_iovlen = 1};
    pthread_t th;
    pthread_create(&th, 0, fdswap ? fd_swapper : name_flipper, 0);
    int sent = 0, denied = 0, other = 0;
    for (int i = 0; i < atoi(argv[4]); i++) {
      if (sendmsg(race_fd, &mh, MSG_DONTWAIT) >= 0)
        sent++;
      else if (errno == EPERM)
        denied++;
      else
        other++;
    }
    flip_stop = 1;
    pthread_join(th, 0);
    printf("sent=%d denied=%d other=%d\n", sent, denied, other);
    return 0;
  }
  fprintf(stderr, "try_op: unknown op %s\n", op);
  return 2;
}
