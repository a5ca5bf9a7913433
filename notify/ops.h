// Internal to the supervisor: one intercepted syscall, classified into the
// semantic actions it amounts to (facets), and the operation that carries it
// out if the policy allows it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/fd.h"
#include "host/links.h"
#include "host/mounts.h"
#include "notify/resolve.h"
#include "policy/event.h"
#include "procs/procs.h"

namespace cb {

class Listener;
class UnixServers;

// One semantic action of a syscall.  A rename is a rename of its source and
// a delete (or create) of its destination; a hard link is a link and a write
// of the inode it names.  Every facet must be allowed; the first facet is
// what the audit trail records.
struct Facet {
  Action action = Action::FileWrite;
  std::string path;
  std::string target;
  bool is_dir = false;
  int32_t target_pid = 0;
  std::vector<std::string> aliases;
  // net.connect to a unix socket: the programs outside the session that
  // listen on it (host/unix_servers.h), when the policy asks (net.server).
  std::vector<std::string> servers;
  // Why carrying this out would undo a kernel layer of the session (a mount
  // uncovering a read-only tree); empty when it would not.  decide()
  // refuses such a call whatever the rules say.
  std::string breaks_layer;
};

enum class OpKind : uint8_t {
  Fail,         // answer `err` without deciding anything (the kernel's own error)
  Continue,     // decided on scalar arguments, or exec: let the kernel run it
  Open,         // openat(dir, name) or reopen(obj), installed with ADDFD
  Unlink,       // unlinkat(dir, name, flags)
  Rename,       // renameat2(dir, name, dir2, name2, flags)
  Link,         // linkat(dir|obj, name, dir2, name2)
  Symlink,      // symlinkat(str, dir2, name2)
  Mkdir,        // mkdirat(dir, name, mode)
  Mknod,        // mknodat(dir, name, mode, dev)
  Truncate,     // truncate(obj, len)
  Chmod,        // on obj
  Chown,        // on obj
  Utimens,      // on obj, times in blob
  SetXattr,     // on obj: name in str, value in blob, flags
  RemoveXattr,  // on obj: name in str
  IoctlFlags,   // ioctl(fd copy, cmd, blob)
  FdTruncate,   // ftruncate(fd copy, len)
  FdFallocate,  // fallocate(fd copy, flags, value, len)
  Connect,      // connect(socket copy, blob): the address as checked
  Bind,         // bind(socket copy, blob)
  Listen,       // listen(socket copy, value): the very socket judged
  Send,         // sendmsg(socket copy, each of msgs) with flags: notify/send.h
  Reply,        // answer `value` (decided in the supervisor, nothing to carry out)
};

// One message of a send the supervisor carries out: what was checked, as
// it was read once from the target (notify/send.h).
struct SendMessage {
  bool named = false;            // a name was given (it may be empty: the kernel says what that means)
  std::vector<uint8_t> name;     // the destination as checked (a unix path rewritten to reach its socket)
  UniqueFd via;                  // the socket file a unix path led to, which `name` reaches
  std::vector<uint8_t> data;     // the payload
  std::vector<uint8_t> control;  // ancillary data, SCM_RIGHTS naming `fds`
  std::vector<UniqueFd> fds;     // the target's descriptors it passes, taken with pidfd_getfd
  uint64_t flags = 0;            // the call's flags (sendmsg adds msg_flags' MSG_EOR, as the kernel does)
  uint64_t len_at = 0;           // sendmmsg: where the target's msg_len is (0: none)
  size_t sent = 0;               // bytes sent so far (a stream socket sends in pieces)
};

struct Operation {
  OpKind kind = OpKind::Fail;
  int err = 0;        // Fail: the errno
  int64_t value = 0;  // Reply: the return value
  UniqueFd dir, dir2, obj;
  std::string name, name2, str;
  std::vector<uint8_t> blob;
  uint64_t flags = 0;  // open flags, unlink/rename/link flags, xattr flags, ioctl cmd
  uint64_t mode = 0;
  uint64_t dev = 0;
  int64_t len = 0;
  uint32_t uid = 0, gid = 0;
  bool cloexec = false;
  bool blocking = false;  // may block (a blocking connect, a FIFO open): carried out by a worker
  bool needs_umask = false;
  // Send: the messages, the next one to send, and what the socket is.
  std::vector<SendMessage> msgs;
  size_t next_msg = 0;
  bool multi = false;   // sendmmsg: answers the count of messages sent
  bool stream = false;  // SOCK_STREAM: a send may go in pieces
};

struct Call {
  uint64_t id = 0;
  pid_t tid = 0;
  int nr = 0;
  uint64_t args[6] = {};
};

struct Classified {
  std::vector<Facet> facets;  // empty: nothing to decide (Continue/Fail/Reply)
  Operation op;
  uint64_t flags = 0;  // recorded with the event
  int deny_errno = EPERM;
  bool exec = false;            // mark the process for refresh after CONTINUE
  bool creds_changed = false;   // invalidate the credential cache, CONTINUE
  bool fs_changed = false;      // chdir/fchdir/chroot: invalidate the root/cwd cache, CONTINUE
  bool shares_fs = false;       // a process sharing its fs_struct with another: stop caching
  bool mounts_changed = false;  // a mount-family call: names and roots may change once it ran
  // Allowed, the kernel opens it, not the supervisor: a user namespace's id
  // maps take only writers opened from that namespace or its parent, and
  // the call's arguments are fixed (notify/fixed_args.h).
  bool kernel_opens = false;
  // A mount of one of the kernel's file systems (proc, sys, cgroup): for
  // root, settings writable where the session's own are read-only.
  bool kernel_fs_mount = false;
  bool io_uring = false;
  uint32_t keep = 0;  // facets (bit i: facets[i]) whose destroyed content the policy keeps for undo
};

// Facts the classifier needs from the supervisor.
struct ClassifyEnv {
  const std::vector<ProtectedDevice>* devices = nullptr;
  const LinkIndex* links = nullptr;  // other names of files: made before the session, or by it
  pid_t self_pid = 0;                // the supervisor (visible to the command only without a pid namespace)
  int target_pidfd = -1;             // the calling process (for pidfd_getfd of its fds)
  std::function<std::vector<pid_t>()> session_pids;  // every process of the session
  UnixServers* unix_servers = nullptr;               // set when a rule reads net.server
};

// Reads the call's arguments from the target (the caller checks ID_VALID
// afterwards), resolves its paths and classifies it.
Classified classify(const Call& call, PathContext& ctx, const ClassifyEnv& env);

struct Outcome {
  int64_t ret = 0;           // >= 0: the value returned; < 0: -errno
  bool responded = false;    // the answer already went to the kernel (ADDFD|SEND)
  bool would_block = false;  // not answered: a blocking send must wait (execute_blocking goes on)
};

// Carries out an allowed operation on the resolved objects, with the
// calling thread's credentials, and answers the kernel.  A send that would
// block its caller is tried once without blocking; if it must wait, it is
// not answered (`would_block`) and goes on with execute_blocking.
Outcome execute(Operation& op, const Call& call, const Creds& creds, Listener& listener);

// Same, for an operation that may block (a FIFO with no reader yet, a
// blocking connect): done without blocking, polling until it completes, the
// target goes away (`still_wanted` turns false) or the session ends.
Outcome execute_blocking(Operation& op, const Call& call, const Creds& creds, Listener& listener,
                         const std::function<bool()>& still_wanted);

}  // namespace cb
