// Internal to notify/: the classifier's handlers, one per family of the
// syscall table (syscalls/table.h), and what they share.  classify()
// finds the row of a notified call and hands it to its family's handler,
// which reads the call's arguments through the row's roles.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "notify/ops.h"
#include "notify/resolve.h"
#include "syscalls/table.h"

namespace cb::handlers {

using Handler = Classified (*)(const Call& call, const Syscall& row, PathContext& ctx, const ClassifyEnv& env);
// The handler of a family; every family that the filter can notify has one.
Handler handler_for(Family f);

// ---- shared
Classified fail(int err);
Classified cont();
// A path argument, read once from the target's memory.
Result<std::string> read_path(const Call& call, int argi);
int as_fd(uint64_t v);
// The dirfd a role names: the argument, or AT_FDCWD.
int dirfd_arg(const Call& call, int8_t role);
// The call's flags: its flags argument with the flags it implies.
uint64_t flags_arg(const Call& call, const Syscall& row);
// The value of argument `role`, or `absent` when the call has none.
uint64_t arg_or(const Call& call, int8_t role, uint64_t absent);
Facet facet(Action a, std::string path, bool is_dir = false);
// The protected trees a block device (or its partitions' disk) holds.
void add_device_aliases(Facet& f, const struct stat& st, const ClassifyEnv& env);
// A file with several names is one file: a write through any of them is a
// write to the protected one.
void add_inode_aliases(Facet& f, const struct stat& st, const ClassifyEnv& env);
// An fd of the target as an object of ours: the very open file (`real_fd`,
// through pidfd_getfd), or an O_PATH reopening of what it names.
Result<UniqueFd> target_fd_object(const Call& call, int fd, bool real_fd, const ClassifyEnv& env);

// ---- files (classify_files.cpp)
Classified classify_open(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_open_by_handle(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_unlink(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_rename(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_link(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_symlink(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_mknod(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);  // and mkdir
Classified classify_truncate(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_fd_size(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);  // ftruncate, fallocate

// ---- attributes (classify_attrs.cpp)
Classified classify_chmod(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_chown(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_utime(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_xattr(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);  // set and remove
Classified classify_chattr(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);

// ---- processes (classify_procs.cpp)
Classified classify_exec(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_signal(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_trace(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_prlimit(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);

// ---- network (classify_net.cpp, classify_send.cpp)
Classified classify_socket_address(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);  // connect, bind
Classified classify_send(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);  // sendto, sendmsg, sendmmsg
Classified classify_listen(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
// A socket address as rules and the trail name it: "udp:1.2.3.4:53",
// "tcp:[::1]:80", "unix:/run/x.sock" (a relative path joined to the
// caller's cwd when `ctx` is given), "unix:@abstract", "family:N".
std::string sockaddr_text(const std::vector<uint8_t>& addr, int type, PathContext* ctx = nullptr);
// SO_TYPE of a socket, 0 when `fd` is none.
int socket_type(int fd);
// A unix address naming a path names a file in the target's mount
// namespace: resolved there, and `addr` rewritten to reach what it led to
// through /proc/self/fd/N of `held` (the socket file; with `binding`, the
// directory to make it in).  Other addresses are left as they are.
Result<Ok> reach_unix_path(PathContext& ctx, std::vector<uint8_t>& addr, bool binding, UniqueFd& held);

// ---- guards and the supervisor's caches (classify_guards.cpp)
Classified classify_io_uring_setup(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_mount(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_namespaces(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_clone(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_kernel(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_chdir(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);
Classified classify_creds(const Call&, const Syscall&, PathContext&, const ClassifyEnv&);

}  // namespace cb::handlers
