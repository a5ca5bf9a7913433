#include "launch/launch.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

#include "syscalls/compat.h"

namespace cb {
namespace {

// ------------------------------------------------- state recorded in main --

constexpr int kMaxInherited = 256;
int g_inherited[kMaxInherited];
int g_inherited_count = 0;

struct SavedSignals {
  sigset_t mask;
  struct sigaction actions[NSIG];
  bool recorded = false;
};
SavedSignals g_signals;

// ------------------------------------------------ async-signal-safe bits --

long raw_getpid() { return syscall(SYS_getpid); }

bool send_msg(int fd, CtlType t, int a = 0, int b = 0, int c = 0, int d = 0) {
  CtlMsg m{t, a, b, c, d};
  return send(fd, &m, sizeof m, MSG_NOSIGNAL) == sizeof m;
}

// Receives one message; false on EOF or error.
bool recv_msg(int fd, CtlMsg* m) {
  for (;;) {
    ssize_t n = recv(fd, m, sizeof *m, 0);
    if (n == sizeof *m) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// Says where the listener is with a plain send(): a sendto without an
// address, which no filter notifies, where sendmsg may be (a policy that
// judges sends), and the listener that would answer it is this one.  The
// kernel adds our credentials (the supervisor's end has SO_PASSCRED),
// translated into the supervisor's pid namespace: that is how it learns
// the command's pid.  It takes the listener with pidfd_getfd, then wakes
// `ack`.
bool send_listener(int ctl, int listener, int ack, int killable, int abi) {
  if (!send_msg(ctl, CtlType::Listener, killable, abi, listener, ack)) return false;
  if (listener < 0) return true;
  pollfd p{ack, POLLIN, 0};
  int n;
  while ((n = poll(&p, 1, 30000)) < 0 && errno == EINTR) {
  }
  uint64_t v;
  return n == 1 && read(ack, &v, sizeof v) == sizeof v;
}

int set_mount_attr(const char* path, uint64_t attr_set, bool recursive) {
  int fd = open(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  struct mount_attr a {};
  a.attr_set = attr_set;
  int rc = static_cast<int>(
      syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof a));
  int e = errno;
  close(fd);
  errno = e;
  return rc;
}

int apply_mount(const MountOp& op) {
  const char* p = op.path.c_str();
  switch (op.kind) {
    case MountKind::RoBind:
      if (mount(p, p, nullptr, MS_BIND | MS_REC, nullptr)) return -1;
      return set_mount_attr(p, MOUNT_ATTR_RDONLY, true);
    case MountKind::HideDir:
      if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0500")) return -1;
      return set_mount_attr(p, MOUNT_ATTR_RDONLY, false);
    case MountKind::BlockNode:
    case MountKind::HideFile:
    case MountKind::ReplaceFile:
      if (mount(op.source.c_str(), p, nullptr, MS_BIND, nullptr)) return -1;
      return set_mount_attr(p, MOUNT_ATTR_RDONLY, false);
    case MountKind::Proc: {
      if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr)) return -1;
      // A second, whole procfs where nothing can reach it: on the always
      // empty binfmt_misc directory, which the read-only /proc/sys mounted
      // next covers.  The kernel lets a sandbox inside the session mount a
      // proc of its own only while some proc in its namespace shows every
      // part of itself (fs/namespace.c, mnt_already_visible), and the
      // session's own no longer does once parts of it are read-only.
      // Without binfmt_misc there is no such place: sandboxes inside then
      // cannot mount a proc, and nothing else changes.
      (void)mount("proc", "/proc/sys/fs/binfmt_misc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
      return 0;
    }
  }
  errno = EINVAL;
  return -1;
}

void restore_signals() {
  if (!g_signals.recorded) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    return;
  }
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    // Handlers do not survive exec anyway; ignored signals do, so restore
    // exactly what cottonbox itself inherited.
    struct sigaction sa {};
    sa.sa_handler = g_signals.actions[s].sa_handler == SIG_IGN ? SIG_IGN : SIG_DFL;
    sigaction(s, &sa, nullptr);
  }
  sigprocmask(SIG_SETMASK, &g_signals.mask, nullptr);
}

// Every fd cottonbox opened itself is marked close-on-exec; the ones it
// inherited (a caller's redirections, a jobserver pipe) reach the command.
void cloexec_own_fds() {
  unsigned lo = 3;
  for (int i = 0; i < g_inherited_count; ++i) {
    unsigned fd = static_cast<unsigned>(g_inherited[i]);
    if (fd < lo) continue;
    if (fd > lo) syscall(SYS_close_range, lo, fd - 1, CLOSE_RANGE_CLOEXEC);
    lo = fd + 1;
  }
  syscall(SYS_close_range, lo, ~0U, CLOSE_RANGE_CLOEXEC);
}

bool write_file(const std::string& path, const std::string& text) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd && write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

void drop_capabilities() {
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  for (int c = 0; c <= CAP_LAST_CAP; ++c) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
  __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct d[2] = {};
  syscall(SYS_capset, &h, d);
}

int apply_landlock(int abi) {
  if (abi < 1) return 0;
  cb_landlock_ruleset_attr attr{};
  size_t size = sizeof attr;
  if (abi >= 6) {
    // Signals may not leave the session's domain: the supervisor, init and
    // every process outside the session are out of reach, even for root.
    attr.scoped = LANDLOCK_SCOPE_SIGNAL;
  } else {
    // Older ABIs: a domain still confines ptrace to itself; it needs one
    // handled right to exist, so handle MAKE_BLOCK (creating block devices)
    // and grant it nowhere.
    attr.handled_access_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK;
    size = sizeof(unsigned long long);
  }
  int rs = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (rs < 0) return -1;
  int rc = static_cast<int>(syscall(SYS_landlock_restrict_self, rs, 0));
  int e = errno;
  close(rs);
  errno = e;
  return rc;
}

// Root's command in a user namespace of its own, every id mapped to
// itself, with a mount namespace made in it: copies of mounts made for a
// less privileged user namespace are locked by the kernel (MNT_LOCKED,
// MNT_LOCK_READONLY), so root there may mount over them or beside them but
// not unmount, move or remount them.  A process inside the new namespace
// may not write its own full map: a child made before the unshare, still
// root outside, writes it.  Returns 0 or an errno.
int enter_locked_mounts() {
  // Neither malloc nor glibc's fork() here: this process was cloned from a
  // multithreaded one without fork's handlers, so an allocator lock another
  // thread held at that moment is held here for good, and fork() takes every
  // one of them.  The writer is a raw clone that uses only the stack.
  int go[2];
  if (pipe2(go, O_CLOEXEC)) return errno;
  pid_t self = static_cast<pid_t>(syscall(SYS_getpid));
  char uid_map[64], gid_map[64];
  snprintf(uid_map, sizeof uid_map, "/proc/%d/uid_map", self);
  snprintf(gid_map, sizeof gid_map, "/proc/%d/gid_map", self);
  long writer = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, 0);
  if (writer == 0) {
    close(go[1]);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(ECANCELED);  // the unshare failed
    static const char kAll[] = "0 0 4294967295\n";
    for (const char* file : {uid_map, gid_map}) {
      int fd = open(file, O_WRONLY | O_CLOEXEC);
      if (fd < 0) _exit(errno);
      if (write(fd, kAll, sizeof kAll - 1) != static_cast<ssize_t>(sizeof kAll - 1)) _exit(errno ? errno : EIO);
      close(fd);
    }
    _exit(0);
  }
  close(go[0]);
  int err = writer < 0 ? errno : 0;
  if (!err && unshare(CLONE_NEWUSER | CLONE_NEWNS)) err = errno;
  if (!err && write(go[1], "g", 1) != 1) err = errno;
  close(go[1]);
  if (writer > 0) {
    int st = 0;
    if (waitpid(static_cast<pid_t>(writer), &st, 0) != writer || !WIFEXITED(st))
      err = err ? err : EIO;
    else if (!err && WEXITSTATUS(st))
      err = WEXITSTATUS(st);
  }
  return err;
}

[[noreturn]] void command_main(const LaunchSpec& spec, char* const* argv, int ctl) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  restore_signals();
  if (spec.locked_mounts)
    if (int e = enter_locked_mounts()) {
      send_msg(ctl, CtlType::ExecFailed, e, 1);
      _exit(125);
    }
  if (spec.drop_caps) drop_capabilities();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
    send_msg(ctl, CtlType::ExecFailed, errno, 1);
    _exit(125);
  }
  // init made itself not dumpable, and so this copy of it: the supervisor
  // takes the listener from here with pidfd_getfd, which needs it dumpable
  // (exec would make it so anyway).
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  int ack = spec.listener ? eventfd(0, EFD_CLOEXEC) : -1;
  int abi = spec.landlock_abi;
  if (apply_landlock(abi)) abi = 0;  // the supervisor marks the session degraded
  bool killable = false;
  int listener = spec.listener ? install_filter_raw(spec.filter, &killable) : install_filter_plain(spec.filter);
  if (listener < 0 || (spec.listener && ack < 0)) {
    send_msg(ctl, CtlType::ExecFailed, errno, 1);
    _exit(125);
  }
  if (!spec.listener) listener = -1;
  if (!send_listener(ctl, listener, ack, killable, abi)) _exit(125);
  if (listener >= 0) close(listener);
  if (ack >= 0) close(ack);
  cloexec_own_fds();
  execvp(argv[0], argv);
  int e = errno;
  send_msg(ctl, CtlType::ExecFailed, e, 0);
  _exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

// Kills every process of the session.  In a pid namespace that is everything
// but init; without one (fallback), only init's descendants.
void kill_session(bool pidns) {
  if (pidns) {
    kill(-1, SIGKILL);
    return;
  }
  // Without a pid namespace init is a subreaper: kill its children until
  // none is left (orphans of killed processes come back to it).
  for (int round = 0; round < 64; ++round) {
    int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    for (char* p = buf; *p;) {
      long pid = strtol(p, &p, 10);
      if (pid > 0) kill(static_cast<pid_t>(pid), SIGKILL);
      while (*p == ' ') ++p;
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
}

[[noreturn]] void init_main(const LaunchSpec& spec, char* const* argv, int ctl) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  CtlMsg m{};
  if (!recv_msg(ctl, &m) || m.type != CtlType::Mapped) _exit(1);  // supervisor gone
  prctl(PR_SET_NAME, "cottonbox-init", 0, 0, 0);
  bool pidns = raw_getpid() == 1;
  if (!pidns) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

  if (spec.new_mountns) {
    // Slave, not private: mounts the host makes later still appear here,
    // while ours never propagate back out.
    if (mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr)) {
      send_msg(ctl, CtlType::MountFailed, -1, errno);
      _exit(1);
    }
    bool fatal = false;
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
      if (apply_mount(spec.mounts[i]) == 0) continue;
      send_msg(ctl, CtlType::MountFailed, static_cast<int>(i), errno);
      if (!spec.mounts[i].optional) fatal = true;
    }
    if (fatal) _exit(1);
  }
  // Not dumpable: the session's processes cannot open init's memory or fds.
  // Only now: a supervisor above (this session inside another) judges the
  // mounts above through init's fds, which it opens as the same user.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // The cwd was resolved before the mounts: enter it again so that it sits
  // on the read-only mounts too.
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str())) {
    send_msg(ctl, CtlType::ExecFailed, errno, 1);
    _exit(1);
  }
  send_msg(ctl, CtlType::Ready);
  if (!recv_msg(ctl, &m) || m.type != CtlType::Go) _exit(1);

  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  long child = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, 0);
  if (child == 0) command_main(spec, argv, ctl);
  if (child < 0) {
    send_msg(ctl, CtlType::ExecFailed, errno, 1);
    _exit(1);
  }

  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  bool command_done = false;
  for (;;) {
    int st = 0;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
      if (p == child && !command_done) {
        command_done = true;
        send_msg(ctl, CtlType::Exited, st);
      }
    }
    if (p < 0 && errno == ECHILD) {
      send_msg(ctl, CtlType::Done);
      _exit(0);
    }
    pollfd pfd[2] = {{sfd, POLLIN, 0}, {ctl, POLLIN, 0}};
    if (poll(pfd, 2, -1) < 0) continue;
    if (pfd[0].revents) {
      signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == sizeof si) {
      }
    }
    if (pfd[1].revents) {
      if (!recv_msg(ctl, &m) || m.type == CtlType::Kill) {
        kill_session(pidns);
        if (pidns) _exit(0);  // the kernel kills the rest of the namespace
      }
    }
  }
}

}  // namespace

int g_reserved_ctl_fd = -1;

int try_locked_mounts() {
  pid_t child = fork();
  if (child == 0) _exit(enter_locked_mounts());
  if (child < 0) return errno;
  int st = 0;
  if (waitpid(child, &st, 0) != child || !WIFEXITED(st)) return EIO;
  return WEXITSTATUS(st);
}

void record_inherited_fds() {
  g_inherited_count = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    int self = dirfd(d);
    while (dirent* e = readdir(d)) {
      int fd = atoi(e->d_name);
      if (e->d_name[0] == '.' || fd < 3 || fd == self) continue;
      if (g_inherited_count < kMaxInherited) g_inherited[g_inherited_count++] = fd;
    }
    closedir(d);
  }
  std::sort(g_inherited, g_inherited + g_inherited_count);
  g_reserved_ctl_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  sigprocmask(SIG_SETMASK, nullptr, &g_signals.mask);
  for (int s = 1; s < NSIG; ++s) sigaction(s, nullptr, &g_signals.actions[s]);
  g_signals.recorded = true;
}

std::vector<InheritedFile> inherited_files() {
  std::vector<InheritedFile> out;
  auto look = [&](int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return;
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISBLK(st.st_mode)) return;
    InheritedFile f;
    f.fd = fd;
    f.dir = !S_ISREG(st.st_mode);
    f.nlink = st.st_nlink;
    char link[64], buf[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, buf, sizeof buf - 1);
    if (n > 0) f.path.assign(buf, static_cast<size_t>(n));
    out.push_back(std::move(f));
  };
  for (int fd = 0; fd < 3; ++fd) look(fd);
  for (int i = 0; i < g_inherited_count; ++i) look(g_inherited[i]);
  return out;
}

Launcher::Launcher(LaunchSpec spec) : spec_(std::move(spec)) {}

Launcher::~Launcher() {
  if (init_pid_ > 0 && ctl_) kill_all();
}

Result<Ok> Launcher::prepare(std::vector<MountFailure>* failures) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) return Error::from_errno("socketpair");
  if (g_reserved_ctl_fd >= 0 && dup3(sv[0], g_reserved_ctl_fd, O_CLOEXEC) == g_reserved_ctl_fd) {
    close(sv[0]);
    sv[0] = g_reserved_ctl_fd;
    g_reserved_ctl_fd = -1;  // one session per process
  }
  UniqueFd mine(sv[0]), theirs(sv[1]);
  int one = 1;
  setsockopt(mine.get(), SOL_SOCKET, SO_PASSCRED, &one, sizeof one);

  // argv as the C array execvp wants, built before the clone.
  argv_.clear();
  for (auto& a : spec_.argv) argv_.push_back(a.data());
  argv_.push_back(nullptr);

  unsigned long flags = SIGCHLD | CLONE_PIDFD;
  if (spec_.new_userns) flags |= CLONE_NEWUSER;
  if (spec_.new_pidns) flags |= CLONE_NEWPID;
  if (spec_.new_mountns) flags |= CLONE_NEWNS;
  int pidfd = -1;
  uid_t uid = getuid();
  gid_t gid = getgid();
  long pid = syscall(SYS_clone, flags, nullptr, &pidfd, nullptr, 0);
  if (pid == 0) {
    mine.release();
    init_main(spec_, argv_.data(), theirs.get());
  }
  if (pid < 0) return Error::from_errno("clone (pid/mount namespaces)");
  init_pid_ = static_cast<pid_t>(pid);
  pidfd_.reset(pidfd);
  theirs.reset();
  ctl_ = std::move(mine);

  if (spec_.new_userns) {
    // The command keeps its own ids inside: uid and gid map to themselves.
    // Written by a single-threaded child: inside another cottonbox session
    // the outer supervisor lets the kernel open id maps only for a caller
    // no other thread can change the arguments of (notify/fixed_args.h).
    std::string base = "/proc/" + std::to_string(init_pid_);
    const std::string files[3] = {base + "/uid_map", base + "/setgroups", base + "/gid_map"};
    const std::string texts[3] = {std::to_string(uid) + " " + std::to_string(uid) + " 1\n", "deny\n",
                                  std::to_string(gid) + " " + std::to_string(gid) + " 1\n"};
    int err = 0;
    pid_t writer = fork();
    if (writer == 0) {
      for (int i = 0; i < 3; ++i)
        if (!write_file(files[i], texts[i])) _exit(errno ? errno : EIO);
      _exit(0);
    }
    int status = 0;
    if (writer < 0)
      err = errno;
    else if (waitpid(writer, &status, 0) != writer || !WIFEXITED(status))
      err = EIO;
    else
      err = WEXITSTATUS(status);
    if (err) {
      errno = err;
      Error e = Error::from_errno("writing the user namespace id maps");
      kill_all();
      return e;
    }
  }
  if (!send_msg(ctl_.get(), CtlType::Mapped)) return Error::from_errno("control channel");
  CtlMsg m{};
  std::vector<MountFailure> fails;
  bool fatal = false;
  for (;;) {
    if (!recv_msg(ctl_.get(), &m)) {
      fatal = true;
      break;
    }
    if (m.type == CtlType::Ready) break;
    if (m.type == CtlType::MountFailed) {
      fails.push_back({m.a < 0 ? SIZE_MAX : static_cast<size_t>(m.a), m.b});
      if (m.a < 0 || !spec_.mounts[m.a].optional) fatal = true;
    } else if (m.type == CtlType::ExecFailed) {
      waitpid(init_pid_, nullptr, 0);
      init_pid_ = -1;
      return Error{m.a, std::string("cannot enter the working directory: ") + strerror(m.a)};
    }
  }
  if (failures) *failures = fails;
  if (fatal) {
    waitpid(init_pid_, nullptr, 0);
    init_pid_ = -1;
    ctl_.reset();
    return Error{fails.empty() ? EIO : fails.front().err, "the session's private mounts could not be set up"};
  }
  return Ok{};
}

namespace {

// The command's listener, taken from it (pidfd_getfd), then the command
// woken to go on to exec.
Result<UniqueFd> take_listener(pid_t pid, int listener, int ack) {
  if (pid <= 0 || listener < 0) return Error{EIO, "no seccomp listener announced"};
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return Error::from_errno("pidfd_open of the command");
  UniqueFd fd(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), listener, 0)));
  if (!fd) return Error::from_errno("taking the seccomp listener from the command (pidfd_getfd)");
  UniqueFd wake(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), ack, 0)));
  uint64_t one = 1;
  if (!wake || write(wake.get(), &one, sizeof one) != sizeof one) return Error::from_errno("waking the command");
  return fd;
}

}  // namespace

Result<Launched> Launcher::start() {
  if (!send_msg(ctl_.get(), CtlType::Go)) return Error::from_errno("control channel");
  for (;;) {
    CtlMsg m{};
    iovec iov{&m, sizeof m};
    alignas(cmsghdr) char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(ucred))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = buf;
    msg.msg_controllen = sizeof buf;
    ssize_t n = recvmsg(ctl_.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof m) return Error{EIO, "the session's init exited before the command started"};
    if (m.type == CtlType::ExecFailed)
      return Error{m.a, std::string("cannot set up the command's sandbox: ") + strerror(m.a)};
    if (m.type != CtlType::Listener) continue;
    Launched l;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd;
        memcpy(&fd, CMSG_DATA(c), sizeof fd);
        close(fd);  // nobody sends one: not ours to keep
      } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred cr;
        memcpy(&cr, CMSG_DATA(c), sizeof cr);
        l.command_pid = cr.pid;
      }
    }
    if (spec_.listener) {
      auto taken = take_listener(l.command_pid, m.c, m.d);
      if (!taken) return taken.error();
      l.listener = std::move(*taken);
    }
    l.init_pid = init_pid_;
    l.killable_recv = m.a != 0;
    l.landlock_abi_applied = m.b;
    l.ctl = UniqueFd(dup(ctl_.get()));
    fcntl(l.ctl.get(), F_SETFD, FD_CLOEXEC);
    l.init_pidfd = UniqueFd(dup(pidfd_.get()));
    fcntl(l.init_pidfd.get(), F_SETFD, FD_CLOEXEC);
    return l;
  }
}

void Launcher::kill_all() {
  if (ctl_) send_msg(ctl_.get(), CtlType::Kill);
  if (init_pid_ > 0) {
    if (spec_.new_pidns) {
      if (pidfd_)
        syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
      else
        kill(init_pid_, SIGKILL);
    }
  }
}

}  // namespace cb
