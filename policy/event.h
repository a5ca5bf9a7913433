// The one event type.  Every source (a seccomp notification, an eBPF record,
// a denial made by a kernel layer) is decoded into an Event; the pure policy
// engine judges it; sinks (the SQLite store, the GUI, JSON output) record the
// Event together with its Verdict and what really happened.
//
// Passive data only: no methods beyond small helpers, no fds, no clock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/identity.h"
#include "policy/netaddr.h"

namespace cb {

// The semantic action vocabulary.  The numeric values index bitmasks and never
// reach the database (which stores the dotted names), so they may be reordered.
enum class Action : uint8_t {
  FileRead,
  FileWrite,
  FileCreate,
  FileDelete,
  FileRename,
  FileTruncate,
  FileLink,
  FileAttr,
  ProcExec,
  ProcSignal,
  ProcTrace,
  NetConnect,  // connect(2): TCP, connected UDP, unix stream and datagram sockets
  NetBind,
  NetSend,    // a datagram sent with an address: sendto, sendmsg, sendmmsg without a connect
  NetListen,  // listen(2) on a bound socket
  SysMount,
  SysNamespace,
  SysIoUring,
  SysKernel,  // loading modules or BPF programs, kexec, raw I/O ports: ways around every layer
  Count
};

using ActionMask = uint32_t;
static_assert(static_cast<int>(Action::Count) <= 32);

constexpr ActionMask bit(Action a) { return ActionMask{1} << static_cast<int>(a); }

// What an action's object (Event::path) is, which says how a rule's path
// patterns for it are written and checked.
enum class ObjectKind : uint8_t {
  Path,      // an absolute path: file.*, proc.exec (the executable)
  Process,   // the target process's executable: proc.signal, proc.trace
  Address,   // "tcp:HOST:PORT", "udp:...", "unix:PATH": net.* (and Event::net)
  Facility,  // a name the kernel gives: a mount point or file system, namespace kinds, "io_uring", "bpf"
};
ObjectKind action_object(Action a);

// "file.delete" etc.
std::string_view action_name(Action a);
// Parses one action name (not a group); nullopt if unknown.
std::optional<Action> parse_action(std::string_view name);
// Parses an action or a group ("file.mutate", "file.*", "net.*", "*"); 0 if unknown.
ActionMask parse_action_or_group(std::string_view name);
// Every known action and group name, for "did you mean" suggestions.
std::vector<std::string_view> action_vocabulary();

constexpr ActionMask kFileMutate = bit(Action::FileWrite) | bit(Action::FileCreate) | bit(Action::FileDelete) |
                                   bit(Action::FileRename) | bit(Action::FileTruncate) | bit(Action::FileLink) |
                                   bit(Action::FileAttr);
constexpr ActionMask kAllActions = (ActionMask{1} << static_cast<int>(Action::Count)) - 1;

enum class Decision : uint8_t { Allow, Deny, Ask, Log };
std::string_view decision_name(Decision d);
std::optional<Decision> parse_decision(std::string_view name);

// Who observed the event.
enum class Source : uint8_t { Seccomp, Ebpf, Supervisor };
std::string_view source_name(Source s);

// Who enforced the decision: the supervisor answering a notification, the
// seccomp filter itself (scalar arguments), a read-only mount, Landlock, or
// nobody (observed only).
enum class Layer : uint8_t { None, Notify, Filter, Mount, Landlock };
std::string_view layer_name(Layer l);

// What a process looked like when it caused an event.  Shared (immutable)
// between all events of one process image; replaced on exec.
struct ProcessInfo {
  int32_t pid = 0;  // tgid, in the supervisor's pid namespace
  int32_t ppid = 0;
  uint32_t uid = 0;
  uint64_t proc_id = 0;  // session-unique id (database key); 0 = unknown
  std::string comm;      // the kernel's 15-byte name: the process sets it, so never trusted
  std::string exe;       // absolute path of the executable
  // Its identities (policy/identity.h): the trusted programs whose file the
  // kernel ran, checked by device, inode and change time; empty for any other
  // program, and for one started with loader injection.
  std::vector<std::string> names;
  IdentityFacts identity;              // how names were found, or why there are none
  std::vector<std::string> argv;       // as executed
  std::vector<std::string> ancestors;  // identity of the parent, grandparent, ... (nearest first; "" for none)
  std::string cwd;
};

// The network object of a net.* event, as data the rules test (`host:`,
// `port:`, the net.* fields of `when:`).  Filled by whoever builds the
// event; empty (proto None) for every other action.
enum class NetProto : uint8_t { None, Tcp, Udp, Unix, Other };
std::string_view net_proto_name(NetProto p);  // "tcp", "udp", "unix", "other", ""

struct NetObject {
  NetProto proto = NetProto::None;
  IpAddr addr;            // empty for unix and other families; IPv4-mapped folded into IPv4
  std::string addr_text;  // addr.text(), kept so that rules read it in place
  uint16_t port = 0;
  // The names this session resolved to `addr` through its own resolver or
  // its hosts file: `hosts` the names a process asked for, `names` those
  // and every name on the CNAME chains between (the CDN's names).  An allow
  // rule's `host:` names must match `hosts`; a deny, ask or log rule's may
  // match any of `names`, so that a CNAME cannot lead around a denial.
  std::vector<std::string> hosts;
  std::vector<std::string> names;
  // unix only: the executables of the processes outside the session that
  // listen on the socket (host/unix_servers.h), when a rule asked; the
  // event's target says them too, separated by spaces.
  std::vector<std::string> servers;

  bool ip() const { return (proto == NetProto::Tcp || proto == NetProto::Udp) && !addr.empty(); }
};
// Sets proto, addr, addr_text and port together.
NetObject make_net_object(NetProto proto, const IpAddr& addr, uint16_t port);
// The object read back from an event's path as the supervisor and the
// tracer write it ("tcp:203.0.113.7:443", "udp:[2001:db8::1]:53",
// "unix:/run/x.sock"): proto None when the path is no such text.  Names are
// not in the path; this is for events recorded without a NetObject.
NetObject net_object_from_path(std::string_view path);

// A file from a taint list (`read(@secrets)`) read by the process or by the
// part of its tree it got data from, before this event: what the prompt
// shows ("python3 read ~/.aws/credentials, now connects to ...").
struct TaintRead {
  uint8_t list = 0;  // index into Policy::taints
  std::string path;
  std::string comm;  // who read it
  int32_t pid = 0;
};

struct Event {
  int64_t ts_ns = 0;  // CLOCK_REALTIME, nanoseconds
  int32_t pid = 0;    // tgid
  int32_t tid = 0;
  Action action = Action::FileWrite;
  int32_t syscall_nr = -1;
  std::string syscall;  // "unlinkat", "io_uring:UNLINKAT", ...

  // The object acted on, as an absolute path resolved the way the kernel
  // resolves it (symlinks, "..", /proc/self, dirfds).  Bytes, not text.
  //   file.*      the file; for file.rename the source, for file.link the new name
  //   proc.exec   the executable
  //   proc.signal/proc.trace  the target process's executable
  //   net.*       "tcp:127.0.0.1:8080", "udp:[::1]:53", "unix:/run/x.sock", "unix:@abstract"
  //   sys.*       the mount point, namespace kind, the kernel facility, ...
  std::string path;
  // The second object: the rename destination, the existing file a hard link
  // points to, the symlink's contents, a signal's target comm.
  std::string target;
  // Other names of the same inode (hard links known to the supervisor); a rule
  // that matches any of them matches the event.
  std::vector<std::string> aliases;

  uint64_t flags = 0;      // the syscall's flags argument (open flags, rename flags, signal, ...)
  int32_t target_pid = 0;  // proc.signal / proc.trace
  bool is_dir = false;     // the object is a directory: rules on paths below it apply too
  // Set by the supervisor when carrying the call out would undo one of the
  // session's kernel layers (why, in words): refused before any rule.
  std::string breaks_layer;

  // Supervisor-computed facts the engine may test (the engine has no clock or state).
  uint32_t proc_deletes = 0;     // file.delete events by this process so far, this one included
  uint32_t tree_deletes = 0;     // ... by its command tree (a child of the session's first process and below)
  uint32_t session_deletes = 0;  // ... by the whole session, of files the policy guards (policy/counts.h)
  // Bit i: the process, or what it got data from, read a file of the taint
  // list Policy::taints[i] (policy.h: taint_bits()) before this event.
  uint64_t read_taint = 0;
  std::vector<TaintRead> taint_reads;  // the reads behind read_taint, for prompts and the trail

  NetObject net;  // net.* events

  Source source = Source::Seccomp;
  std::shared_ptr<const ProcessInfo> proc;  // may be null for an unknown process
};

// A rule's judgement of one event.
struct Verdict {
  Decision decision = Decision::Allow;
  std::string rule_id;  // empty: the policy's default
  std::string message;
  bool builtin = false;  // decided by cottonbox's own self-protection or guards
  // Whether what the call destroys is kept first for `cottonbox undo`
  // (the rule's `keep:`, else the policy's keep scope); only for file
  // actions that can destroy content.
  bool keep = false;
};

}  // namespace cb
