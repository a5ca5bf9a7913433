// Decoding the eBPF tracer's ring-buffer records (bpf/cb_wire.h) into C++.
//
// Pure: no libbpf, no kernel, no clock.  Everything here is tested with
// hand-built byte buffers.  How each traced syscall's arguments are laid out
// is the syscall table's (syscalls/table.h): the loader (trace/ebpf.cpp)
// programs the kernel side from it, and the decoder reads records with it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/paths.h"
#include "base/result.h"
#include "bpf/cb_wire.h"
#include "syscalls/table.h"

namespace cb {

enum class TraceKind : uint8_t { Fork, Exec, Exit, Syscall, IoUring };
std::string_view trace_kind_name(TraceKind k);

constexpr int32_t kNoFd = CB_FD_NONE;

// One record, decoded.  Passive data; which fields are meaningful depends on
// `kind` (and, for syscalls, on the syscall), as noted per group.
struct TraceRecord {
  TraceKind kind = TraceKind::Syscall;
  int64_t ts_ns = 0;  // CLOCK_REALTIME
  int32_t pid = 0;    // tgid in the supervisor's pid namespace; 0: not visible there
  int32_t tid = 0;
  int32_t global_pid = 0;  // in the initial pid namespace
  int32_t global_tid = 0;
  uint32_t uid = 0;
  std::string comm;

  // Syscall.  `path` is the first path argument made absolute (for an fd
  // syscall such as ftruncate, the fd's path; for connect/bind, the rendered
  // address); `path2` the second one in argument order: rename/link
  // destination, or for symlink/symlinkat the link's contents (never
  // resolved: path is the new link).
  int32_t syscall_nr = -1;
  std::string syscall;
  // >= 0, or -errno.  -512..-516 (ERESTARTSYS and kin): a signal interrupted
  // the call and the kernel restarts it; the restarted call is a new record.
  int64_t ret = 0;
  std::array<uint64_t, CB_NARGS> args{};
  uint64_t flags = 0;     // open/openat2/creat flags; *at flags; renameat2 flags; fallocate mode
  bool created = false;   // an open that made its file (not one that opened an existing file)
  uint32_t mode = 0;      // open/creat/mkdir/mknod/chmod mode
  int32_t dirfd = kNoFd;  // as passed (AT_FDCWD = -100); kNoFd when the call has none
  int32_t dirfd2 = kNoFd;
  int32_t fd = kNoFd;  // ftruncate/fchmod/fchown/fallocate/fchdir fd, socket, pidfd
  std::string path;
  std::string path2;
  bool path_truncated = false;  // a bound cut the string or the directory walk
  bool path2_truncated = false;
  bool path_unresolved = false;  // relative, and its base directory was unknown: as passed
  bool path2_unresolved = false;
  int64_t owner_uid = -1;  // chown family; -1: unchanged
  int64_t owner_gid = -1;
  uint64_t offset = 0;         // fallocate
  uint64_t length = 0;         // truncate, ftruncate, fallocate
  int32_t signal = 0;          // kill, tkill, tgkill, pidfd_send_signal
  int32_t target_arg = 0;      // kill/tkill/tgkill: the pid as the sender named it (its own pidns)
  int32_t target_tid_arg = 0;  // tgkill: the tid as named
  int32_t target_pid = 0;      // pidfd_send_signal: target in the supervisor's pidns; 0: unknown
  int32_t target_global_pid = 0;
  std::string addr;        // connect/bind: "tcp:127.0.0.1:80", "udp:[::1]:53", "unix:/x", "unix:@x"
  std::string addr_raw;    // the sockaddr bytes
  uint16_t sock_type = 0;  // SOCK_STREAM, ...
  uint16_t sock_proto = 0;

  // Exec: `path` is the executable as exec got it, made absolute.
  std::vector<std::string> argv;
  bool argv_truncated = false;
  int32_t old_global_tid = 0;

  // Fork: the new process (hdr pid/tid: the forking thread).
  int32_t child_pid = 0;
  int32_t child_global_pid = 0;
  int32_t ppid = 0;  // the child's parent
  int32_t global_ppid = 0;

  // Exit: the last thread of `pid` is gone.
  int32_t wait_status = 0;
  int32_t exit_code = -1;   // when it exited normally
  int32_t exit_signal = 0;  // when a signal ended it
  bool core_dumped = false;

  // io_uring submission.
  uint8_t io_uring_opcode = 0;
  std::string io_uring_op;  // "OPENAT", "UNLINKAT", ...
  uint64_t user_data = 0;
};

// Decodes one ring-buffer record.  `realtime_offset_ns` is CLOCK_REALTIME
// minus CLOCK_MONOTONIC, measured by the loader at start.  Truncated, garbled
// or unknown records are an Error, never a partial record.
Result<TraceRecord> decode(std::span<const uint8_t> bytes, int64_t realtime_offset_ns);
// The same into `rec`, which must be as a TraceRecord is made: the reader
// decodes where its callback reads, without moving the record about.
Result<Ok> decode_into(std::span<const uint8_t> bytes, int64_t realtime_offset_ns, TraceRecord& rec);

// join_path(): base/paths.h

// "tcp:127.0.0.1:8080", "udp:[::1]:53", "unix:/run/x.sock", "unix:@abstract",
// "unix:" (unnamed), "family:16" for anything else.  `cwd` makes a relative
// unix path absolute.
std::string render_sockaddr(std::span<const uint8_t> addr, uint16_t sock_type, uint16_t sock_proto,
                            std::string_view cwd = {});

// "NOP", "READV", ..., "URING_CMD"; "OP_<n>" for an opcode newer than this table.
std::string io_uring_op_name(uint8_t opcode);

// The eBPF side's descriptor of a row of the syscall table (syscalls/table.h):
// the loader programs the kernel side with it, the decoder reads records
// with the same row, so the two cannot disagree.
cb_sysdesc to_sysdesc(const Syscall& s);

}  // namespace cb
