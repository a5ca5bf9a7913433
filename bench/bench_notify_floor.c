// bench_notify_floor: the bare minimum seccomp user-notify supervisor, as the
// reference point of issue 5 ("path read, continue, no policy, no database").
//
//   bench_notify_floor [--opens write|all | --creates-only] [--connect] -- CMD [ARG...]
//
// Runs CMD under a filter that notifies what cottonbox notifies for a
// file-protecting policy: opens for writing, creating or truncating (with
// --opens all: every open), creat, unlink/unlinkat/rmdir, rename*, mkdir*,
// link*/symlink*, and execve/execveat.  With --creates-only: only what
// creates a name (O_CREAT opens, creat, mkdir*, link*, symlink*) and rename*,
// which is what cottonbox's plan still notifies for the Houdini policy once
// the eBPF tracer records the rest.  --connect adds connect(2), what
// cottonbox notifies once a policy has host: rules.  For each notification
// the supervisor reads the first path argument (for connect: the address)
// from the target's memory (process_vm_readv), checks
// SECCOMP_IOCTL_NOTIF_ID_VALID and replies CONTINUE.  One thread, blocking poll()+RECV,
// SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP set.  Exits with CMD's status; prints the notification count on stderr with -v.
// x86_64 only (other architectures are killed).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
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
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif

#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))  // low 32 bits (little endian)
#define NR offsetof(struct seccomp_data, nr)
#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

static int send_fd(int sock, int fd) {
  char buf[CMSG_SPACE(sizeof(int))];
  memset(buf, 0, sizeof buf);
  char c = 'f';
  struct iovec io = {&c, 1};
  struct msghdr m = {0};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = buf;
  m.msg_controllen = sizeof buf;
  struct cmsghdr* h = CMSG_FIRSTHDR(&m);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(h), &fd, sizeof fd);
  return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock) {
  char buf[CMSG_SPACE(sizeof(int))];
  char c;
  struct iovec io = {&c, 1};
  struct msghdr m = {0};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  m.msg_control = buf;
  m.msg_controllen = sizeof buf;
  if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1) return -1;
  struct cmsghdr* h = CMSG_FIRSTHDR(&m);
  if (!h || h->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(h), sizeof fd);
  return fd;
}

enum Set { kMutations, kAllOpens, kCreates };

// Builds the filter; returns its length.
static int build_filter(struct sock_filter* f, enum Set set, int with_connect) {
  int n = 0;
#define S(code, k) f[n++] = (struct sock_filter)BPF_STMT(code, k)
#define J(code, k, jt, jf) f[n++] = (struct sock_filter)BPF_JUMP(code, k, jt, jf)
  S(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  J(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
  S(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  S(BPF_LD | BPF_W | BPF_ABS, NR);
  J(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1);  // x32
  S(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  // Always notified: each jumps to the RET USER_NOTIF 8 instructions after the list.
  static const int mutations[] = {SYS_creat,    SYS_unlink,    SYS_unlinkat,  SYS_rmdir,   SYS_rename,
                                  SYS_renameat, SYS_renameat2, SYS_mkdir,     SYS_mkdirat, SYS_link,
                                  SYS_linkat,   SYS_symlink,   SYS_symlinkat, SYS_execve,  SYS_execveat};
  static const int creates[] = {SYS_creat,   SYS_rename, SYS_renameat, SYS_renameat2, SYS_mkdir,
                                SYS_mkdirat, SYS_link,   SYS_linkat,   SYS_symlink,   SYS_symlinkat};
  int always[32];
  int k = 0;
  const int* base = set == kCreates ? creates : mutations;
  int nbase =
      set == kCreates ? (int)(sizeof creates / sizeof creates[0]) : (int)(sizeof mutations / sizeof mutations[0]);
  for (int i = 0; i < nbase; ++i) always[k++] = base[i];
  if (with_connect) always[k++] = SYS_connect;
  for (int i = 0; i < k; ++i) J(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)always[i], (unsigned char)(k - i + 7), 0);
  // open(path, flags): args[1]; openat(dfd, path, flags): args[2]; openat2: notify.
  J(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 7, 0);  // -> NOTIFY
  J(BPF_JMP | BPF_JEQ | BPF_K, SYS_open, 0, 2);
  S(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1));
  S(BPF_JMP | BPF_JA, 2);                          // -> JSET
  J(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 4);  // not openat -> ALLOW
  S(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2));
  // flags in A
  J(BPF_JMP | BPF_JSET | BPF_K, set == kAllOpens ? 0xffffffffu : set == kCreates ? O_CREAT : WRITE_FLAGS, 1, 0);
  S(BPF_RET | BPF_K, set == kAllOpens ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ALLOW);  // flags 0 = O_RDONLY
  S(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
  S(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  return n;
#undef S
#undef J
}

// The path argument of a notified syscall.
static unsigned long long path_arg(const struct seccomp_notif* r) {
  switch (r->data.nr) {
    case SYS_openat:
    case SYS_openat2:
    case SYS_unlinkat:
    case SYS_renameat:
    case SYS_renameat2:
    case SYS_mkdirat:
    case SYS_linkat:
    case SYS_execveat:
    case SYS_connect: return r->data.args[1];
    case SYS_symlinkat: return r->data.args[2];
    case SYS_symlink: return r->data.args[1];
    default: return r->data.args[0];
  }
}

int main(int argc, char** argv) {
  enum Set set = kMutations;
  int verbose = 0, with_connect = 0, i = 1;
  for (; i < argc; ++i) {
    if (!strcmp(argv[i], "--")) {
      ++i;
      break;
    }
    if (!strcmp(argv[i], "--opens") && i + 1 < argc)
      set = !strcmp(argv[++i], "all") ? kAllOpens : kMutations;
    else if (!strcmp(argv[i], "--creates-only"))
      set = kCreates;
    else if (!strcmp(argv[i], "--connect"))
      with_connect = 1;
    else if (!strcmp(argv[i], "-v"))
      verbose = 1;
    else
      break;
  }
  if (i >= argc) {
    fprintf(stderr,
            "usage: bench_notify_floor [--opens write|all | --creates-only] [--connect] [-v] -- CMD [ARG...]\n");
    return 2;
  }
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp)) return perror("socketpair"), 1;
  pid_t pid = fork();
  if (pid < 0) return perror("fork"), 1;
  if (pid == 0) {
    close(sp[1]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct sock_filter f[64];
    struct sock_fprog prog = {(unsigned short)build_filter(f, set, with_connect), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) _exit(126);
    int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0) {
      perror("bench_notify_floor: seccomp");
      _exit(126);
    }
    if (send_fd(sp[0], fd)) _exit(126);
    close(fd);
    close(sp[0]);
    execvp(argv[i], argv + i);
    perror("bench_notify_floor: exec");
    _exit(127);
  }
  close(sp[0]);
  int fd = recv_fd(sp[1]);
  close(sp[1]);
  if (fd < 0) {
    int st;
    waitpid(pid, &st, 0);
    fprintf(stderr, "bench_notify_floor: no listener from the child\n");
    return 125;
  }
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) && verbose)
    perror("bench_notify_floor: SYNC_WAKE_UP");

  unsigned long count = 0;
  struct seccomp_notif req;
  struct seccomp_notif_resp resp;
  char path[4096];
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p.revents & POLLHUP && !(p.revents & POLLIN)) break;  // no task uses the filter any more
    memset(&req, 0, sizeof req);
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req)) {
      if (errno == EINTR || errno == ENOENT) continue;
      break;
    }
    ++count;
    unsigned long long addr = path_arg(&req);
    size_t got = 0;
    if (req.data.nr == SYS_connect) {
      // The address: a sockaddr of args[2] bytes, not a string.
      size_t want = req.data.args[2] < 128 ? (size_t)req.data.args[2] : 128;
      struct iovec local = {path, want};
      struct iovec remote = {(void*)(uintptr_t)addr, want};
      if (process_vm_readv(req.pid, &local, 1, &remote, 1, 0) < 0) path[0] = 0;
      got = sizeof path;  // done
    }
    // Read the path: up to the end of its page first, more only if needed.
    while (got < sizeof path - 1) {
      size_t chunk = 4096 - ((addr + got) & 4095);
      if (chunk > sizeof path - 1 - got) chunk = sizeof path - 1 - got;
      struct iovec local = {path + got, chunk};
      struct iovec remote = {(void*)(uintptr_t)(addr + got), chunk};
      ssize_t n = process_vm_readv(req.pid, &local, 1, &remote, 1, 0);
      if (n <= 0) break;
      if (memchr(path + got, 0, (size_t)n)) break;
      got += (size_t)n;
    }
    path[sizeof path - 1] = 0;
    int valid = ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) == 0;
    memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (valid) ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (verbose) fprintf(stderr, "bench_notify_floor: %lu notifications\n", count);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
