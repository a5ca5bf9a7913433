#include "trace/ebpf_decode.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>

#include "syscalls/compat.h"

namespace cb {

namespace {

// The traced syscalls (x86_64).  Kernel-side fields first, then what the
// decoder reads from args[].
constexpr TracedSyscall kTraced[] = {
    // opens
    {.nr = SYS_open, .name = "open", .nargs = 3, .path1 = 0, .flags = 1, .mode = 2},
    {.nr = SYS_openat, .name = "openat", .nargs = 4, .path1 = 1, .dirfd1 = 0, .flags = 2, .mode = 3},
    // openat2's struct open_how is copied at sys_enter into args[2..4].
    {.nr = SYS_openat2, .name = "openat2", .nargs = 4, .path1 = 1, .dirfd1 = 0, .how = 2, .flags = 2, .mode = 3},
    {.nr = SYS_creat,
     .name = "creat",
     .nargs = 2,
     .path1 = 0,
     .mode = 1,
     .implied_flags = O_CREAT | O_WRONLY | O_TRUNC},
    // removal
    {.nr = SYS_unlink, .name = "unlink", .nargs = 1, .path1 = 0},
    {.nr = SYS_unlinkat, .name = "unlinkat", .nargs = 3, .path1 = 1, .dirfd1 = 0, .flags = 2},
    {.nr = SYS_rmdir, .name = "rmdir", .nargs = 1, .path1 = 0},
    // renames
    {.nr = SYS_rename, .name = "rename", .nargs = 2, .path1 = 0, .path2 = 1},
    {.nr = SYS_renameat, .name = "renameat", .nargs = 4, .path1 = 1, .dirfd1 = 0, .path2 = 3, .dirfd2 = 2},
    {.nr = SYS_renameat2,
     .name = "renameat2",
     .nargs = 5,
     .path1 = 1,
     .dirfd1 = 0,
     .path2 = 3,
     .dirfd2 = 2,
     .flags = 4},
    // links: path1 the existing file, path2 the new name; symlink: path1 the
    // new link, path2 its contents (not a path to resolve)
    {.nr = SYS_link, .name = "link", .nargs = 2, .path1 = 0, .path2 = 1},
    {.nr = SYS_linkat, .name = "linkat", .nargs = 5, .path1 = 1, .dirfd1 = 0, .path2 = 3, .dirfd2 = 2, .flags = 4},
    {.nr = SYS_symlink, .name = "symlink", .nargs = 2, .path1 = 1, .path2 = 0, .dirfd2 = CB_AT_RAW},
    {.nr = SYS_symlinkat, .name = "symlinkat", .nargs = 3, .path1 = 2, .dirfd1 = 1, .path2 = 0, .dirfd2 = CB_AT_RAW},
    // creation of other inodes
    {.nr = SYS_mkdir, .name = "mkdir", .nargs = 2, .path1 = 0, .mode = 1},
    {.nr = SYS_mkdirat, .name = "mkdirat", .nargs = 3, .path1 = 1, .dirfd1 = 0, .mode = 2},
    {.nr = SYS_mknod, .name = "mknod", .nargs = 3, .path1 = 0, .mode = 1},
    {.nr = SYS_mknodat, .name = "mknodat", .nargs = 4, .path1 = 1, .dirfd1 = 0, .mode = 2},
    // size
    {.nr = SYS_truncate, .name = "truncate", .nargs = 2, .path1 = 0, .length = 1},
    {.nr = SYS_ftruncate, .name = "ftruncate", .nargs = 2, .fd = 0, .length = 1},
    {.nr = SYS_fallocate, .name = "fallocate", .nargs = 4, .fd = 0, .flags = 1, .offset = 2, .length = 3},
    // attributes
    {.nr = SYS_chmod, .name = "chmod", .nargs = 2, .path1 = 0, .mode = 1},
    {.nr = SYS_fchmod, .name = "fchmod", .nargs = 2, .fd = 0, .mode = 1},
    {.nr = SYS_fchmodat, .name = "fchmodat", .nargs = 3, .path1 = 1, .dirfd1 = 0, .mode = 2},
    {.nr = __NR_fchmodat2, .name = "fchmodat2", .nargs = 4, .path1 = 1, .dirfd1 = 0, .flags = 3, .mode = 2},
    // times: tar and touch set them on every file they write
    {.nr = SYS_utime, .name = "utime", .nargs = 2, .path1 = 0},
    {.nr = SYS_utimes, .name = "utimes", .nargs = 2, .path1 = 0},
    {.nr = SYS_futimesat, .name = "futimesat", .nargs = 3, .path1 = 1, .dirfd1 = 0},
    {.nr = SYS_utimensat, .name = "utimensat", .nargs = 4, .path1 = 1, .dirfd1 = 0, .flags = 3},
    {.nr = SYS_chown, .name = "chown", .nargs = 3, .path1 = 0, .uid = 1, .gid = 2},
    {.nr = SYS_lchown,
     .name = "lchown",
     .nargs = 3,
     .path1 = 0,
     .uid = 1,
     .gid = 2,
     .implied_flags = AT_SYMLINK_NOFOLLOW},
    {.nr = SYS_fchown, .name = "fchown", .nargs = 3, .fd = 0, .uid = 1, .gid = 2},
    {.nr = SYS_fchownat, .name = "fchownat", .nargs = 5, .path1 = 1, .dirfd1 = 0, .flags = 4, .uid = 2, .gid = 3},
    // extended attributes (ACLs, security labels, capabilities)
    {.nr = SYS_setxattr, .name = "setxattr", .nargs = 5, .path1 = 0},
    {.nr = SYS_lsetxattr, .name = "lsetxattr", .nargs = 5, .path1 = 0, .implied_flags = AT_SYMLINK_NOFOLLOW},
    {.nr = SYS_fsetxattr, .name = "fsetxattr", .nargs = 5, .fd = 0},
    {.nr = __NR_setxattrat, .name = "setxattrat", .nargs = 6, .path1 = 1, .dirfd1 = 0, .flags = 2},
    {.nr = SYS_removexattr, .name = "removexattr", .nargs = 2, .path1 = 0},
    {.nr = SYS_lremovexattr, .name = "lremovexattr", .nargs = 2, .path1 = 0, .implied_flags = AT_SYMLINK_NOFOLLOW},
    {.nr = SYS_fremovexattr, .name = "fremovexattr", .nargs = 2, .fd = 0},
    {.nr = __NR_removexattrat, .name = "removexattrat", .nargs = 4, .path1 = 1, .dirfd1 = 0, .flags = 2},
    // network
    {.nr = SYS_connect, .name = "connect", .nargs = 3, .sock = 0, .addr = 1, .addrlen = 2},
    {.nr = SYS_bind, .name = "bind", .nargs = 3, .sock = 0, .addr = 1, .addrlen = 2},
    // signals
    {.nr = SYS_kill, .name = "kill", .nargs = 2, .sig = 1, .target = 0},
    {.nr = SYS_tkill, .name = "tkill", .nargs = 2, .sig = 1, .target = 0},
    {.nr = SYS_tgkill, .name = "tgkill", .nargs = 3, .sig = 2, .target = 0, .target_tid = 1},
    {.nr = SYS_pidfd_send_signal, .name = "pidfd_send_signal", .nargs = 4, .pidfd = 0, .flags = 3, .sig = 1},
    // where a process is, and who it is
    {.nr = SYS_chdir, .name = "chdir", .nargs = 1, .path1 = 0, .cwd_result = true},
    {.nr = SYS_fchdir, .name = "fchdir", .nargs = 1, .fd = 0},
    {.nr = SYS_setuid, .name = "setuid", .nargs = 1, .uid = 0},
    {.nr = SYS_setgid, .name = "setgid", .nargs = 1, .gid = 0},
    {.nr = SYS_setreuid, .name = "setreuid", .nargs = 2},
    {.nr = SYS_setregid, .name = "setregid", .nargs = 2},
    {.nr = SYS_setresuid, .name = "setresuid", .nargs = 3},
    {.nr = SYS_setresgid, .name = "setresgid", .nargs = 3},
};

constexpr std::string_view kIoUringOps[] = {
    "NOP",
    "READV",
    "WRITEV",
    "FSYNC",
    "READ_FIXED",
    "WRITE_FIXED",
    "POLL_ADD",
    "POLL_REMOVE",
    "SYNC_FILE_RANGE",
    "SENDMSG",
    "RECVMSG",
    "TIMEOUT",
    "TIMEOUT_REMOVE",
    "ACCEPT",
    "ASYNC_CANCEL",
    "LINK_TIMEOUT",
    "CONNECT",
    "FALLOCATE",
    "OPENAT",
    "CLOSE",
    "FILES_UPDATE",
    "STATX",
    "READ",
    "WRITE",
    "FADVISE",
    "MADVISE",
    "SEND",
    "RECV",
    "OPENAT2",
    "EPOLL_CTL",
    "SPLICE",
    "PROVIDE_BUFFERS",
    "REMOVE_BUFFERS",
    "TEE",
    "SHUTDOWN",
    "RENAMEAT",
    "UNLINKAT",
    "MKDIRAT",
    "SYMLINKAT",
    "LINKAT",
    "MSG_RING",
    "FSETXATTR",
    "SETXATTR",
    "FGETXATTR",
    "GETXATTR",
    "SOCKET",
    "URING_CMD",
    "SEND_ZC",
    "SENDMSG_ZC",
    "READ_MULTISHOT",
    "WAITID",
    "FUTEX_WAIT",
    "FUTEX_WAKE",
    "FUTEX_WAITV",
    "FIXED_FD_INSTALL",
    "FTRUNCATE",
    "BIND",
    "LISTEN",
    "RECV_ZC",
    "EPOLL_WAIT",
    "READV_FIXED",
    "WRITEV_FIXED",
    "PIPE",
};

// Reads the tail of a record blob by blob, refusing to run past its end.
class Tail {
 public:
  explicit Tail(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool take(size_t n, std::string* out) {
    if (n > bytes_.size() - pos_) return false;
    out->assign(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

Error garbled(std::string what) { return Error{EBADMSG, "eBPF record: " + std::move(what)}; }

template <typename T>
bool read_struct(std::span<const uint8_t> bytes, T* out) {
  if (bytes.size() < sizeof(T)) return false;
  std::memcpy(out, bytes.data(), sizeof(T));
  return true;
}

std::string comm_of(const cb_rec_hdr& h) { return std::string(h.comm, strnlen(h.comm, sizeof(h.comm))); }

bool flag(uint32_t flags, uint32_t bit) { return (flags & bit) != 0; }

int64_t id_arg(uint64_t v) {
  // uid_t/gid_t -1 means "leave unchanged"
  auto u = static_cast<uint32_t>(v);
  return u == UINT32_MAX ? -1 : static_cast<int64_t>(u);
}

std::string proto_name(uint16_t type, uint16_t proto) {
  switch (proto) {
    case IPPROTO_TCP: return "tcp";
    case IPPROTO_UDP: return "udp";
    case IPPROTO_UDPLITE: return "udp";
    case IPPROTO_SCTP: return "sctp";
    case IPPROTO_ICMP:
    case IPPROTO_ICMPV6: return "icmp";
    case 262 /* IPPROTO_MPTCP */: return "tcp";
    default: break;
  }
  switch (type) {
    case SOCK_STREAM: return "tcp";
    case SOCK_DGRAM: return "udp";
    case SOCK_RAW: return "raw";
    default: return "ip";
  }
}

Result<Ok> decode_syscall(std::span<const uint8_t> bytes, TraceRecord& rec) {
  cb_rec_syscall r;
  if (!read_struct(bytes, &r)) return garbled("syscall record shorter than its header");
  const TracedSyscall* s = find_traced_syscall(r.nr);
  if (!s) return garbled("syscall number " + std::to_string(r.nr) + " is not traced");
  rec.syscall_nr = r.nr;
  rec.syscall = std::string(s->name);
  rec.ret = r.ret;
  std::copy(std::begin(r.args), std::end(r.args), rec.args.begin());
  rec.dirfd = r.dirfd1;
  rec.dirfd2 = r.dirfd2;
  rec.fd = r.fd;
  rec.sock_type = r.sock_type;
  rec.sock_proto = r.sock_proto;

  std::string blobs[CB_SYS_NBLOBS];
  Tail tail(bytes.subspan(sizeof(r)));
  for (int i = 0; i < CB_SYS_NBLOBS; ++i)
    if (!tail.take(r.len[i], &blobs[i])) return garbled(std::string(s->name) + " record cut short");
  if (!tail.done()) return garbled(std::string(s->name) + " record has trailing bytes");
  if (r.len[CB_SYS_ADDR] > CB_ADDR_MAX) return garbled("sockaddr longer than sockaddr_storage");

  const uint32_t f = r.hdr.flags;
  auto make_path = [&](int pb, int8_t dirfd_role, std::string* out, bool* trunc, bool* unresolved) {
    const std::string& p = blobs[pb];
    const std::string& base = blobs[pb + 1];
    *trunc = flag(f, CB_F_TRUNC(pb)) || flag(f, CB_F_TRUNC(pb + 1));
    if (flag(f, CB_F_FAULT(pb))) {
      *unresolved = true;
      out->clear();
      return;
    }
    if (dirfd_role == CB_AT_RAW) {
      *out = p;
      return;
    }
    if (!p.empty() && p[0] == '/') {
      *out = join_path("", p);
      return;
    }
    if (base.empty() || base[0] != '/' || flag(f, CB_F_FAULT(pb + 1))) {
      *unresolved = true;
      *out = p;
      return;
    }
    *out = s->cwd_result && r.ret == 0 ? join_path(base, "") : join_path(base, p);
  };

  if (s->path1 >= 0) {
    make_path(CB_SYS_PATH1, s->dirfd1, &rec.path, &rec.path_truncated, &rec.path_unresolved);
  } else if (s->fd >= 0) {
    rec.path_truncated = flag(f, CB_F_TRUNC(CB_SYS_BASE1));
    if (flag(f, CB_F_FAULT(CB_SYS_BASE1)) || blobs[CB_SYS_BASE1].empty())
      rec.path_unresolved = true;
    else
      rec.path = blobs[CB_SYS_BASE1];
  }
  if (s->path2 >= 0) make_path(CB_SYS_PATH2, s->dirfd2, &rec.path2, &rec.path2_truncated, &rec.path2_unresolved);
  if (s->addr >= 0) {
    rec.addr_raw = blobs[CB_SYS_ADDR];
    auto raw = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(rec.addr_raw.data()), rec.addr_raw.size());
    rec.addr = render_sockaddr(raw, r.sock_type, r.sock_proto, blobs[CB_SYS_BASE1]);
    rec.path = rec.addr;
  }

  rec.created = flag(f, CB_F_CREATED);
  rec.flags = s->implied_flags;
  if (s->flags >= 0) rec.flags |= r.args[s->flags];
  if (s->mode >= 0) rec.mode = static_cast<uint32_t>(r.args[s->mode]);
  if (s->uid >= 0) rec.owner_uid = id_arg(r.args[s->uid]);
  if (s->gid >= 0) rec.owner_gid = id_arg(r.args[s->gid]);
  if (s->offset >= 0) rec.offset = r.args[s->offset];
  if (s->length >= 0) rec.length = r.args[s->length];
  if (s->sig >= 0) rec.signal = static_cast<int32_t>(r.args[s->sig]);
  if (s->target >= 0) rec.target_arg = static_cast<int32_t>(r.args[s->target]);
  if (s->target_tid >= 0) rec.target_tid_arg = static_cast<int32_t>(r.args[s->target_tid]);
  rec.target_pid = r.target_pid;
  rec.target_global_pid = r.target_gpid;
  return Ok{};
}

Result<Ok> decode_exec(std::span<const uint8_t> bytes, TraceRecord& rec) {
  cb_rec_exec r;
  if (!read_struct(bytes, &r)) return garbled("exec record shorter than its header");
  rec.old_global_tid = r.old_gtid;
  std::string blobs[CB_EXEC_NBLOBS];
  Tail tail(bytes.subspan(sizeof(r)));
  for (int i = 0; i < CB_EXEC_NBLOBS; ++i)
    if (!tail.take(r.len[i], &blobs[i])) return garbled("exec record cut short");
  if (!tail.done()) return garbled("exec record has trailing bytes");
  const uint32_t f = r.hdr.flags;
  const std::string& file = blobs[CB_EXEC_FILE];
  const std::string& base = blobs[CB_EXEC_BASE];
  rec.path_truncated = flag(f, CB_F_TRUNC(CB_EXEC_FILE)) || flag(f, CB_F_TRUNC(CB_EXEC_BASE));
  if (flag(f, CB_F_FAULT(CB_EXEC_FILE))) {
    rec.path_unresolved = true;
  } else if (!file.empty() && file[0] == '/') {
    rec.path = join_path("", file);
  } else if (base.empty() || base[0] != '/' || flag(f, CB_F_FAULT(CB_EXEC_BASE))) {
    rec.path = file;
    rec.path_unresolved = true;
  } else {
    rec.path = join_path(base, file);
  }
  rec.argv_truncated = flag(f, CB_F_TRUNC(CB_EXEC_ARGV)) || flag(f, CB_F_FAULT(CB_EXEC_ARGV));
  const std::string& a = blobs[CB_EXEC_ARGV];
  size_t start = 0;
  while (start < a.size()) {
    size_t nul = a.find('\0', start);
    if (nul == std::string::npos) {
      rec.argv.push_back(a.substr(start));  // cut by the bound
      rec.argv_truncated = true;
      break;
    }
    rec.argv.push_back(a.substr(start, nul - start));
    start = nul + 1;
  }
  return Ok{};
}

}  // namespace

std::string_view trace_kind_name(TraceKind k) {
  switch (k) {
    case TraceKind::Fork: return "fork";
    case TraceKind::Exec: return "exec";
    case TraceKind::Exit: return "exit";
    case TraceKind::Syscall: return "syscall";
    case TraceKind::IoUring: return "io_uring";
  }
  return "?";
}

std::span<const TracedSyscall> traced_syscalls() { return kTraced; }

const TracedSyscall* find_traced_syscall(int nr) {
  for (const auto& s : kTraced)
    if (s.nr == nr) return &s;
  return nullptr;
}

cb_sysdesc to_sysdesc(const TracedSyscall& s) {
  cb_sysdesc d{};
  d.traced = 1;
  d.path1 = s.path1;
  d.dirfd1 = s.dirfd1;
  d.path2 = s.path2;
  d.dirfd2 = s.dirfd2;
  d.fd = s.fd;
  d.sock = s.sock;
  d.addr = s.addr;
  d.addrlen = s.addrlen;
  d.how = s.how;
  d.pidfd = s.pidfd;
  d.oflags = CB_ARG_NONE;
  if (s.nr == SYS_open || s.nr == SYS_openat || s.nr == SYS_openat2) d.oflags = s.flags;
  if (s.nr == SYS_creat) d.oflags = CB_OPEN_CREAT;
  return d;
}

std::string render_sockaddr(std::span<const uint8_t> addr, uint16_t sock_type, uint16_t sock_proto,
                            std::string_view cwd) {
  if (addr.size() < sizeof(sa_family_t)) return "family:?";
  sa_family_t family;
  std::memcpy(&family, addr.data(), sizeof(family));
  char buf[INET6_ADDRSTRLEN];
  switch (family) {
    case AF_UNSPEC: return "unspec:";
    case AF_INET: {
      if (addr.size() < 8) break;
      uint16_t port;
      std::memcpy(&port, addr.data() + 2, 2);
      if (!inet_ntop(AF_INET, addr.data() + 4, buf, sizeof(buf))) break;
      return proto_name(sock_type, sock_proto) + ":" + buf + ":" + std::to_string(ntohs(port));
    }
    case AF_INET6: {
      if (addr.size() < 24) break;
      uint16_t port;
      std::memcpy(&port, addr.data() + 2, 2);
      if (!inet_ntop(AF_INET6, addr.data() + 8, buf, sizeof(buf))) break;
      return proto_name(sock_type, sock_proto) + ":[" + buf + "]:" + std::to_string(ntohs(port));
    }
    case AF_UNIX: {
      auto name = addr.subspan(2);
      if (name.empty()) return "unix:";
      if (name[0] == 0) return "unix:@" + std::string(reinterpret_cast<const char*>(name.data()) + 1, name.size() - 1);
      std::string p(reinterpret_cast<const char*>(name.data()),
                    strnlen(reinterpret_cast<const char*>(name.data()), name.size()));
      if (p[0] != '/' && !cwd.empty()) p = join_path(cwd, p);
      return "unix:" + p;
    }
    case AF_VSOCK: {
      if (addr.size() < 12) break;
      uint32_t port, cid;
      std::memcpy(&port, addr.data() + 4, 4);
      std::memcpy(&cid, addr.data() + 8, 4);
      return "vsock:" + std::to_string(cid) + ":" + std::to_string(port);
    }
    default: break;
  }
  return "family:" + std::to_string(family);
}

std::string io_uring_op_name(uint8_t opcode) {
  if (opcode < std::size(kIoUringOps)) return std::string(kIoUringOps[opcode]);
  return "OP_" + std::to_string(opcode);
}

Result<Ok> decode_into(std::span<const uint8_t> bytes, int64_t realtime_offset_ns, TraceRecord& rec) {
  cb_rec_hdr h;
  if (!read_struct(bytes, &h)) return garbled("shorter than a record header");
  if (h.size != bytes.size())
    return garbled("size field " + std::to_string(h.size) + " but " + std::to_string(bytes.size()) + " bytes");
  if (h.version != CB_WIRE_VERSION) return garbled("wire version " + std::to_string(h.version));

  rec.ts_ns = static_cast<int64_t>(h.ts_ns) + realtime_offset_ns;
  rec.pid = h.pid;
  rec.tid = h.tid;
  rec.global_pid = h.gpid;
  rec.global_tid = h.gtid;
  rec.uid = h.uid;
  rec.comm = comm_of(h);

  switch (h.kind) {
    case CB_REC_FORK: {
      cb_rec_fork r;
      if (bytes.size() != sizeof(r)) return garbled("fork record of " + std::to_string(bytes.size()) + " bytes");
      read_struct(bytes, &r);
      rec.kind = TraceKind::Fork;
      rec.child_pid = r.child_pid;
      rec.child_global_pid = r.child_gpid;
      rec.ppid = r.ppid;
      rec.global_ppid = r.gppid;
      return Ok{};
    }
    case CB_REC_EXEC: rec.kind = TraceKind::Exec; return decode_exec(bytes, rec);
    case CB_REC_EXIT: {
      cb_rec_exit r;
      if (bytes.size() != sizeof(r)) return garbled("exit record of " + std::to_string(bytes.size()) + " bytes");
      read_struct(bytes, &r);
      rec.kind = TraceKind::Exit;
      rec.wait_status = r.status;
      if ((r.status & 0x7f) == 0) {
        rec.exit_code = (r.status >> 8) & 0xff;
      } else {
        rec.exit_signal = r.status & 0x7f;
        rec.core_dumped = (r.status & 0x80) != 0;
      }
      return Ok{};
    }
    case CB_REC_SYSCALL: rec.kind = TraceKind::Syscall; return decode_syscall(bytes, rec);
    case CB_REC_IO_URING: {
      cb_rec_io_uring r;
      if (bytes.size() != sizeof(r)) return garbled("io_uring record of " + std::to_string(bytes.size()) + " bytes");
      read_struct(bytes, &r);
      rec.kind = TraceKind::IoUring;
      rec.io_uring_opcode = r.opcode;
      rec.io_uring_op = io_uring_op_name(r.opcode);
      rec.user_data = r.user_data;
      rec.flags = r.req_flags;
      rec.syscall = "io_uring:" + rec.io_uring_op;
      return Ok{};
    }
    default: return garbled("unknown kind " + std::to_string(h.kind));
  }
}

Result<TraceRecord> decode(std::span<const uint8_t> bytes, int64_t realtime_offset_ns) {
  TraceRecord rec;
  if (auto ok = decode_into(bytes, realtime_offset_ns, rec); !ok) return ok.error();
  return rec;
}

}  // namespace cb
