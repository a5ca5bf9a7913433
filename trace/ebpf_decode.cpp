#include "trace/ebpf_decode.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>

#include "syscalls/compat.h"
#include "syscalls/table.h"

namespace cb {

namespace {

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
  const Syscall* row = find_syscall(r.nr);
  if (!row || !row->traced) return garbled("syscall number " + std::to_string(r.nr) + " is not traced");
  const SyscallArgs* s = &row->args;
  rec.syscall_nr = r.nr;
  rec.syscall = std::string(row->name);
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
    if (!tail.take(r.len[i], &blobs[i])) return garbled(std::string(row->name) + " record cut short");
  if (!tail.done()) return garbled(std::string(row->name) + " record has trailing bytes");
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
    *out = row->cwd_result && r.ret == 0 ? join_path(base, "") : join_path(base, p);
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

cb_sysdesc to_sysdesc(const Syscall& s) {
  static_assert(kNoArg == CB_ARG_NONE && kAtCwd == CB_AT_CWD && kAtRaw == CB_AT_RAW,
                "the table's argument roles are the wire's");
  cb_sysdesc d{};
  d.traced = s.traced;
  d.path1 = s.args.path1;
  d.dirfd1 = s.args.dirfd1;
  d.path2 = s.args.path2;
  d.dirfd2 = s.args.dirfd2;
  d.fd = s.args.fd;
  d.sock = s.args.sock;
  d.addr = s.args.addr;
  d.addrlen = s.args.addrlen;
  d.how = s.args.how;
  d.pidfd = s.args.pidfd;
  d.oflags = CB_ARG_NONE;
  if (s.family == Family::Open) d.oflags = (s.args.implied_flags & O_CREAT) ? CB_OPEN_CREAT : s.args.flags;
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
