// notify-lab: seccomp user notification, bare (docs/labs/1-seccomp-notify.md).
//
//   notify-lab [--continue | --emulate] [--protect DIR] [--no-sync] [-q] -- CMD [ARG...]
//
// Runs CMD under a seccomp filter that sends unlink, unlinkat and the openat
// calls that may write (O_WRONLY, O_RDWR, O_CREAT or O_TRUNC) to this
// process instead of running them, and kills the process on any other
// architecture's system call.  For each notification it reads the path from
// CMD's memory, decides (an entry directly inside DIR is protected: EACCES)
// and answers in one of two ways:
//   --continue  tells the kernel to go on with the call as CMD made it; the
//               kernel then reads the path again, and CMD may have changed it
//               in between (notify-target race shows it winning);
//   --emulate   (the default) carries the call out here, on the directory it
//               decided on, and hands back the result: unlinkat on an fd of
//               the parent directory, or an open whose fd is put into CMD with
//               SECCOMP_IOCTL_NOTIF_ADDFD.
// Exits with CMD's status (128+N if signal N ended it).  x86_64 only.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

// Debian 12's headers (Linux 6.1) predate these; the values are the kernel's ABI.
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)  // Linux 6.6
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)  // Linux 5.19
#endif

#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

static int emulate = 1, quiet = 0;
static dev_t protected_dev;
static ino_t protected_ino;
static unsigned long n_notes, n_denied, n_allowed, n_failed;

// The filter runs in the kernel on every system call of CMD and its
// children (a filter is inherited across fork and kept across execve).  It
// sees only struct seccomp_data: the architecture, the syscall number and six
// raw argument registers.  It can test openat's flags (a number) but not
// its path (a pointer into CMD's memory): that is why the path decision
// needs a process that can read the memory, the listener below.
static int install_filter(void) {
  struct sock_filter f[] = {
      // The same number means different calls on different ABIs (i386's
      // unlink is 10, x86_64's 10 is mprotect): judge only the native one.
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      // x32 calls carry the native arch with bit 30 set in the number.
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlink, 5, 0),    // -> NOTIFY
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unlinkat, 4, 0),  // -> NOTIFY
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 2),    // else ALLOW
      // openat(dirfd, path, flags, mode): the low 32 bits of args[2].
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
  };
  struct sock_fprog prog = {sizeof f / sizeof f[0], f};
  // Without no_new_privs an unprivileged process may not install a filter
  // (it could make a setuid program misbehave); with it, exec ignores setuid.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  // WAIT_KILLABLE_RECV: once this supervisor has received a call, only a
  // fatal signal interrupts it.  Otherwise a signal could restart a call that
  // was already carried out here (an emulated unlink would run twice).
  int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                        SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
  if (fd < 0 && errno == EINVAL)
    fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  return fd;
}

// The listener is a file descriptor of the filtered process: it is passed to
// the supervisor over a unix socket (SCM_RIGHTS), as any fd can be.
static int pass_fd(int sock, int fd) {
  char c = 'L', buf[CMSG_SPACE(sizeof fd)] = {0};
  struct iovec io = {&c, 1};
  struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof buf};
  struct cmsghdr* h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof fd);
  memcpy(CMSG_DATA(h), &fd, sizeof fd);
  return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int take_fd(int sock) {
  char c, buf[CMSG_SPACE(sizeof(int))];
  struct iovec io = {&c, 1};
  struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = buf, .msg_controllen = sizeof buf};
  if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1) return -1;
  struct cmsghdr* h = CMSG_FIRSTHDR(&m);
  if (!h || h->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(h), sizeof fd);
  return fd;
}

// Reads a NUL-terminated string from the target.  process_vm_readv never
// splits one iovec across an unmapped page, so read page by page: a path
// that ends just before a hole is still read.
static int read_string(pid_t pid, uint64_t addr, char* out, size_t size) {
  size_t got = 0;
  while (got < size - 1) {
    size_t chunk = 4096 - ((addr + got) & 4095);
    if (chunk > size - 1 - got) chunk = size - 1 - got;
    struct iovec local = {out + got, chunk}, remote = {(void*)(uintptr_t)(addr + got), chunk};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n <= 0) {
      out[0] = 0;
      errno = n < 0 ? errno : EFAULT;
      return -1;
    }
    if (memchr(out + got, 0, (size_t)n)) return 0;
    got += (size_t)n;
  }
  out[0] = 0;
  errno = ENAMETOOLONG;  // refused, never truncated
  return -1;
}

// Opens the directory the last component of `path` lives in, as the target
// would resolve it: relative to its cwd or its dirfd, seen through /proc.
// The result is what the decision and the emulation both use, so that what
// was checked is what is changed.  Writes the last component to `base`.
static int open_parent(pid_t pid, int dirfd, const char* path, char* base) {
  char start[64], dir[PATH_MAX];
  if (dirfd == AT_FDCWD)
    snprintf(start, sizeof start, "/proc/%d/cwd", pid);
  else
    snprintf(start, sizeof start, "/proc/%d/fd/%d", pid, dirfd);
  // An absolute path ignores the start; this lab shares CMD's root and mounts.
  int sfd = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : open(start, O_PATH | O_CLOEXEC);
  if (sfd < 0) return -1;
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/') --len;  // "dir/" names dir
  const char* slash = memrchr(path, '/', len);
  size_t b = slash ? (size_t)(slash + 1 - path) : 0;
  snprintf(base, NAME_MAX + 1, "%.*s", (int)(len - b), path + b);
  snprintf(dir, sizeof dir, "%.*s", (int)b, path);
  if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
    close(sfd);
    errno = EINVAL;  // not a name in a directory: nothing this lab emulates
    return -1;
  }
  int pfd = openat(sfd, *dir ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  close(sfd);
  return pfd;
}

// The umask the target would create with (emulated creates are made here).
static mode_t umask_of(pid_t pid) {
  char name[64], line[256];
  snprintf(name, sizeof name, "/proc/%d/status", pid);
  FILE* f = fopen(name, "re");
  unsigned m = 022;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "Umask: %o", &m) == 1) break;
  if (f) fclose(f);
  return (mode_t)m;
}

static const char* open_flags(int fl) {
  static char s[128];
  const char* acc = (fl & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : (fl & O_ACCMODE) == O_RDWR ? "O_RDWR" : "O_RDONLY";
  snprintf(s, sizeof s, "%s%s%s%s%s%s", acc, fl & O_CREAT ? "|O_CREAT" : "", fl & O_EXCL ? "|O_EXCL" : "",
           fl & O_TRUNC ? "|O_TRUNC" : "", fl & O_APPEND ? "|O_APPEND" : "", fl & O_CLOEXEC ? "|O_CLOEXEC" : "");
  return s;
}

static void say(const struct seccomp_notif* req, int dirfd, const char* path, int flags, const char* verdict) {
  if (quiet) return;
  char dfd[16];
  snprintf(dfd, sizeof dfd, "%d", dirfd);
  const char* d = dirfd == AT_FDCWD ? "AT_FDCWD" : dfd;
  if (req->data.nr == SYS_unlink)
    fprintf(stderr, "notify-lab: pid %d unlink(\"%s\"): %s\n", req->pid, path, verdict);
  else if (req->data.nr == SYS_unlinkat)
    fprintf(stderr, "notify-lab: pid %d unlinkat(%s, \"%s\", %s): %s\n", req->pid, d, path,
            flags & AT_REMOVEDIR ? "AT_REMOVEDIR" : "0", verdict);
  else
    fprintf(stderr, "notify-lab: pid %d openat(%s, \"%s\", %s): %s\n", req->pid, d, path, open_flags(flags), verdict);
}

// One notification: read, check it is still live, decide, answer.
static void handle(int listener, const struct seccomp_notif* req) {
  struct seccomp_notif_resp resp = {.id = req->id};
  const __u64* a = req->data.args;
  int unlink_ = req->data.nr == SYS_unlink;
  int dirfd = unlink_ ? AT_FDCWD : (int)a[0];
  uint64_t path_addr = unlink_ ? a[0] : a[1];
  int flags = unlink_ ? 0 : (int)a[2];
  char path[PATH_MAX], base[NAME_MAX + 1], verdict[96];
  ++n_notes;

  int pfd = read_string(req->pid, path_addr, path, sizeof path) == 0 ? open_parent(req->pid, dirfd, path, base) : -1;
  int err = errno;
  // Everything read so far (the path's bytes, /proc/PID) may belong to
  // another process if the caller died and its pid was reused.  ID_VALID
  // says the call is still waiting, so PID was still the caller: only now
  // may the data be trusted.  A dead caller needs no answer.
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id)) {
    if (pfd >= 0) close(pfd);
    return;
  }
  struct stat st;
  if (pfd < 0 || fstat(pfd, &st)) {
    // Fail closed: what cannot be read or resolved is refused, with the
    // error the kernel would have given (ENOENT for a missing directory).
    resp.error = -(pfd < 0 ? err : errno);
    snprintf(verdict, sizeof verdict, "unresolved, refused %s", strerrorname_np(-resp.error));
    ++n_failed;
  } else if (st.st_dev == protected_dev && st.st_ino == protected_ino) {
    resp.error = -EACCES;
    snprintf(verdict, sizeof verdict, "protected, denied EACCES");
    ++n_denied;
  } else if (!emulate) {
    // The kernel will now read `path` from CMD's memory a second time and
    // resolve it again.  Nothing ties that to what was checked above.
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    snprintf(verdict, sizeof verdict, "allowed, CONTINUE");
    ++n_allowed;
  } else if (req->data.nr != SYS_openat) {
    // Here with this process's credentials: it is CMD's parent with the same
    // uid and gids.  A supervisor with other credentials (root) would take
    // CMD's (setfsuid, setfsgid, setgroups) first.
    int r = unlinkat(pfd, base, flags & AT_REMOVEDIR);
    resp.error = r ? -errno : 0;
    snprintf(verdict, sizeof verdict, "allowed, done here: %s", r ? strerrorname_np(errno) : "0");
    ++n_allowed;
  } else {
    ++n_allowed;
    // O_NOFOLLOW: a final symlink would lead somewhere not checked above.
    // O_NONBLOCK: a FIFO without a reader must not hang the supervisor; it
    // is cleared again below, so CMD's fd has the flags CMD asked for.
    mode_t mode = flags & (O_CREAT | O_TMPFILE) ? (mode_t)a[3] & ~umask_of(req->pid) : 0;
    int fd = openat(pfd, base, (flags & ~O_CLOEXEC) | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0) {
      resp.error = -errno;
      snprintf(verdict, sizeof verdict, "allowed, open here failed: %s", strerrorname_np(errno));
    } else {
      fcntl(fd, F_SETFL, flags);
      close(pfd);
      // Said before the answer, which lets CMD run on.
      say(req, dirfd, path, flags, "allowed, opened here, fd sent with ADDFD");
      // ADDFD_FLAG_SEND installs the fd in CMD and answers the call with
      // its number in one step: no fd is left behind in CMD if the call was
      // interrupted meanwhile.
      struct seccomp_notif_addfd add = {.id = req->id,
                                        .flags = SECCOMP_ADDFD_FLAG_SEND,
                                        .srcfd = (unsigned)fd,
                                        .newfd_flags = (unsigned)(flags & O_CLOEXEC)};
      if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno != ENOENT) {
        fprintf(stderr, "notify-lab: ADDFD: %s\n", strerror(errno));
        resp.error = -errno;
        ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
      }
      close(fd);
      return;
    }
  }
  if (pfd >= 0) close(pfd);
  say(req, dirfd, path, flags, verdict);
  // ENOENT: the call was abandoned meanwhile (the caller was killed).
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

int main(int argc, char** argv) {
  const char* protect = NULL;
  int sync_wake = 1, i = 1;
  for (; i < argc && strcmp(argv[i], "--"); ++i) {
    if (!strcmp(argv[i], "--continue"))
      emulate = 0;
    else if (!strcmp(argv[i], "--emulate"))
      emulate = 1;
    else if (!strcmp(argv[i], "--protect") && i + 1 < argc)
      protect = argv[++i];
    else if (!strcmp(argv[i], "--no-sync"))
      sync_wake = 0;
    else if (!strcmp(argv[i], "-q"))
      quiet = 1;
    else
      break;
  }
  if (i + 1 >= argc || strcmp(argv[i], "--")) {
    fprintf(stderr, "usage: notify-lab [--continue | --emulate] [--protect DIR] [--no-sync] [-q] -- CMD [ARG...]\n");
    return 125;
  }
  char** cmd = argv + i + 1;
  struct stat st;
  protected_ino = 0;
  protected_dev = (dev_t)-1;
  if (protect) {
    if (stat(protect, &st) || !S_ISDIR(st.st_mode)) {
      fprintf(stderr, "notify-lab: --protect %s: not a directory\n", protect);
      return 125;
    }
    protected_dev = st.st_dev;
    protected_ino = st.st_ino;
  }

  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp)) return perror("notify-lab: socketpair"), 125;
  pid_t pid = fork();
  if (pid < 0) return perror("notify-lab: fork"), 125;
  if (pid == 0) {
    // The filter goes on in the child, before exec, while it is the only
    // thread: everything CMD runs is filtered from its first instruction.
    close(sp[1]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // no supervisor, no command
    int fd = install_filter();
    if (fd < 0) {
      perror("notify-lab: seccomp");
      _exit(125);
    }
    if (pass_fd(sp[0], fd)) _exit(125);
    // The listener must not stay in CMD: a process holding it could answer
    // its own notifications.
    close(fd);
    close(sp[0]);
    execvp(cmd[0], cmd);
    fprintf(stderr, "notify-lab: %s: %s\n", cmd[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  close(sp[0]);
  int listener = take_fd(sp[1]);
  close(sp[1]);
  if (listener < 0) {
    waitpid(pid, NULL, 0);
    return 125;
  }
  // SYNC_WAKE_UP: CMD blocks in the kernel until this process answers, and
  // this process sleeps until CMD makes a call: each side wakes the other.
  // The flag tells the scheduler to run the woken side on the waker's CPU
  // at once, as for a synchronous call, instead of wherever it balances it.
  const char* sync_state = "off (--no-sync)";
  if (sync_wake) {
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0)
      sync_state = "on";
    else
      sync_state = errno == EINVAL ? "unavailable (Linux < 6.6), answers wake CMD the usual way" : strerror(errno);
  }
  fprintf(stderr, "notify-lab: listener ready, mode %s, sync wake-up %s\n", emulate ? "emulate" : "continue",
          sync_state);

  for (;;) {
    struct pollfd p = {listener, POLLIN, 0};
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    // POLLHUP: no task uses the filter any more (CMD and its children exited).
    if ((p.revents & POLLHUP) && !(p.revents & POLLIN)) break;
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);  // RECV requires a zeroed buffer
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
      if (errno == EINTR || errno == ENOENT) continue;  // ENOENT: the caller died first
      break;
    }
    handle(listener, &req);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  fprintf(stderr, "notify-lab: %lu notifications: %lu denied, %lu allowed, %lu refused unresolved\n", n_notes, n_denied,
          n_allowed, n_failed);
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "notify-lab: %s killed by SIG%s\n", cmd[0], sigabbrev_np(WTERMSIG(status)));
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}
