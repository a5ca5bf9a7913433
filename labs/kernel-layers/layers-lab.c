// layers-lab: kernel layers, bare (docs/labs/3-kernel-layers.md).
//
//   layers-lab [--ro DIR]... [--rw DIR]... [--port N] [--no-landlock] [-v] -- CMD [ARG...]
//
// Runs CMD behind bounds the kernel enforces by itself, with no process
// deciding anything while CMD runs:
//   - a mount namespace of its own, where each --ro DIR is bind-mounted
//     read-only (writes there fail with EROFS, whoever makes them);
//   - a pid namespace of its own, where layers-lab is pid 1: it reaps the
//     orphans, and when CMD exits, its exit makes the kernel kill whatever
//     CMD left behind;
//   - a Landlock domain (unless --no-landlock): read and execute beneath /,
//     everything beneath each --rw DIR, writing to /dev/null; any other
//     change to the filesystem fails with EACCES.  With --port N (Landlock
//     ABI 4): TCP connect to port N only, no bind.  From ABI 6: no signal or
//     abstract unix socket reaches a process outside the domain.
// As a plain user, a user namespace first gives it the right to make the
// others (where the host allows unprivileged user namespaces).  Says what it
// set up on stderr; with -v, pid 1 also says which orphans it reaped.
// Exits with CMD's status (128+N if signal N ended it).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// Debian 12's <linux/landlock.h> knows ABI 2; the later values are the kernel's ABI.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)  // ABI 3
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)  // ABI 5
#endif
#define LAB_ACCESS_NET_BIND_TCP (1ULL << 0)  // ABI 4
#define LAB_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define LAB_RULE_NET_PORT 2
#define LAB_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  // ABI 6
#define LAB_SCOPE_SIGNAL (1ULL << 1)

// struct landlock_ruleset_attr as of ABI 6; the kernel takes a longer
// struct than it knows as long as the tail it does not know is zero.
struct ruleset_attr {
  uint64_t handled_access_fs, handled_access_net, scoped;
};
struct net_port_attr {
  uint64_t allowed_access, port;
};

#define MAX_DIRS 16
static const char *ro[MAX_DIRS], *rw[MAX_DIRS];
static int n_ro, n_rw, port = -1, landlock = 1, verbose;

static void die(const char* what) {
  fprintf(stderr, "layers-lab: %s: %s\n", what, strerror(errno));
  exit(125);
}

static void write_file(const char* path, const char* fmt, ...) {
  char buf[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, buf, (size_t)n) != n) die(path);
  close(fd);
}

// A plain user may make a user namespace, and is then root in it: it holds
// every capability over the namespaces it makes next (mount, pid), and over
// nothing else on the host.  Files keep their owners: the map says uid U
// outside is uid U inside, so CMD runs as the user it was.
static void enter_user_namespace(void) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER)) die("unshare(CLONE_NEWUSER)");
  write_file("/proc/self/uid_map", "%u %u 1\n", uid, uid);
  // A process that could drop a group could escape a rule that denies that
  // group: the kernel requires setgroups to be denied before an unprivileged
  // gid_map is written.
  write_file("/proc/self/setgroups", "deny");
  write_file("/proc/self/gid_map", "%u %u 1\n", gid, gid);
  fprintf(stderr, "layers-lab: user namespace: uid %u and gid %u mapped to themselves, setgroups denied\n", uid, gid);
}

// A read-only bind mount: the directory mounted onto itself, then the new
// mount (not the filesystem) made read-only.  Only this mount namespace sees
// it.  Inside a user namespace, the flags the host's mount already has
// (nosuid, nodev, noexec, atime) are locked and must be kept.
static void bind_read_only(const char* dir) {
  struct statvfs sv;
  if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) || statvfs(dir, &sv)) die(dir);
  unsigned long keep = 0;
  if (sv.f_flag & ST_NOSUID) keep |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) keep |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) keep |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) keep |= MS_RELATIME;
  if (mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL)) die(dir);
  fprintf(stderr, "layers-lab: mount namespace: %s bind-mounted read-only\n", dir);
}

static void add_path_rule(int ruleset, const char* path, uint64_t access) {
  struct landlock_path_beneath_attr pb = {.allowed_access = access};
  pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
  if (pb.parent_fd < 0) die(path);
  if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) die(path);
  close(pb.parent_fd);
}

// Landlock only grants: a ruleset names the rights it handles, and every
// handled right is denied except where a rule grants it.  Rights the kernel
// does not know (an older ABI) are left out: they stay unrestricted.
static void apply_landlock(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) {
    fprintf(stderr, "layers-lab: Landlock unavailable (%s): not applied\n", strerror(errno));
    return;
  }
  uint64_t fs = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1: bits 0..12
  if (abi >= 2) fs |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  struct ruleset_attr attr = {.handled_access_fs = fs};
  char net[64] = "TCP not restricted", scope[80] = "signals and abstract unix sockets not scoped (ABI < 6)";
  if (port >= 0 && abi >= 4) {
    attr.handled_access_net = LAB_ACCESS_NET_BIND_TCP | LAB_ACCESS_NET_CONNECT_TCP;
    snprintf(net, sizeof net, "TCP connect to port %d only, no bind", port);
  } else if (port >= 0) {
    snprintf(net, sizeof net, "TCP not restricted (ABI < 4)");
  }
  if (abi >= 6) {
    attr.scoped = LAB_SCOPE_SIGNAL | LAB_SCOPE_ABSTRACT_UNIX_SOCKET;
    snprintf(scope, sizeof scope, "signals and abstract unix sockets scoped to the domain");
  }
  int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (rs < 0) die("landlock_create_ruleset");
  const uint64_t read_exec = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  add_path_rule(rs, "/", read_exec);
  for (int i = 0; i < n_rw; ++i) add_path_rule(rs, rw[i], fs);
  // A rule on a file may grant only the rights that apply to files.
  add_path_rule(rs, "/dev/null", LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE);
  if (attr.handled_access_net) {
    struct net_port_attr np = {.allowed_access = LAB_ACCESS_NET_CONNECT_TCP, .port = (uint64_t)port};
    if (syscall(SYS_landlock_add_rule, rs, LAB_RULE_NET_PORT, &np, 0)) die("landlock_add_rule(port)");
  }
  // Without no_new_privs, a setuid program run later would gain privileges
  // the domain does not bound; the kernel refuses restrict_self without it
  // (or CAP_SYS_ADMIN).
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs");
  if (syscall(SYS_landlock_restrict_self, rs, 0)) die("landlock_restrict_self");
  close(rs);
  fprintf(stderr, "layers-lab: Landlock ABI %ld: read and execute beneath /", abi);
  for (int i = 0; i < n_rw; ++i) fprintf(stderr, ", everything beneath %s", rw[i]);
  fprintf(stderr, ", write /dev/null; %s; %s\n", net, scope);
}

// pid 1 of the new pid namespace.  Any process whose parent dies is
// reparented to it, and the kernel ignores signals sent to it from inside
// the namespace unless it handles them.  When it exits, the kernel kills
// every other process of the namespace: nothing CMD started survives it.
static int init(char** cmd) {
  // A /proc of this namespace: ps and /proc/PID show its processes only.
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) die("mount /proc");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    // The domain is made here, in CMD's process, so pid 1 stays outside it:
    // with signal scoping, CMD cannot signal it.
    if (landlock) apply_landlock();
    execvp(cmd[0], cmd);
    fprintf(stderr, "layers-lab: %s: %s\n", cmd[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  for (;;) {
    int st;
    pid_t p = wait(&st);
    if (p < 0 && errno == EINTR) continue;
    if (p < 0) die("wait");
    if (p == child) {
      if (verbose) fprintf(stderr, "layers-lab: pid 1: CMD (pid %d) ended; exiting ends the namespace\n", p);
      return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
    }
    if (verbose) fprintf(stderr, "layers-lab: pid 1: reaped orphan pid %d\n", p);
  }
}

int main(int argc, char** argv) {
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--"); ++i) {
    if (!strcmp(argv[i], "--ro") && i + 1 < argc && n_ro < MAX_DIRS)
      ro[n_ro++] = argv[++i];
    else if (!strcmp(argv[i], "--rw") && i + 1 < argc && n_rw < MAX_DIRS)
      rw[n_rw++] = argv[++i];
    else if (!strcmp(argv[i], "--port") && i + 1 < argc)
      port = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--no-landlock"))
      landlock = 0;
    else if (!strcmp(argv[i], "-v"))
      verbose = 1;
    else
      break;
  }
  if (i + 1 >= argc || strcmp(argv[i], "--")) {
    fprintf(stderr, "usage: layers-lab [--ro DIR]... [--rw DIR]... [--port N] [--no-landlock] [-v] -- CMD [ARG...]\n");
    return 125;
  }
  // Absolute paths, resolved before any mount changes what they lead to.
  for (int k = 0; k < n_ro + n_rw; ++k) {
    const char** d = k < n_ro ? &ro[k] : &rw[k - n_ro];
    char* abs = realpath(*d, NULL);
    if (!abs) die(*d);
    *d = abs;
  }

  if (geteuid() != 0)
    enter_user_namespace();
  else
    fprintf(stderr, "layers-lab: user namespace: none (root may make the others directly)\n");
  // CLONE_NEWPID moves the children made from now on, not this process.
  if (unshare(CLONE_NEWNS | CLONE_NEWPID)) die("unshare(CLONE_NEWNS|CLONE_NEWPID)");
  // New mounts would propagate back to the host's namespace through shared
  // mounts (systemd makes / shared): make every mount here private first.
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) die("make / private");
  for (int k = 0; k < n_ro; ++k) bind_read_only(ro[k]);
  fprintf(stderr, "layers-lab: pid namespace: layers-lab is pid 1, CMD is pid 2\n");

  pid_t pid1 = fork();
  if (pid1 < 0) die("fork");
  if (pid1 == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // no layers-lab, no namespace
    _exit(init(argv + i + 1));
  }
  int st;
  while (waitpid(pid1, &st, 0) < 0)
    if (errno != EINTR) die("waitpid");
  return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}
