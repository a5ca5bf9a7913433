// What this machine offers cottonbox, probed at run time.
//
// Probes that change process state (installing a seccomp filter, dropping
// privileges, creating a namespace) run in a forked child that only makes
// system calls, so they are safe in a process that already has threads.
//
// TEST ONLY: COTTONBOX_FAKE_MISSING=name[,name...] makes the probe (and
// EbpfTracer::open for "ebpf") report those features as missing, so tests can
// exercise the fallbacks on a machine that has everything.  Names:
//   seccomp, sync_wakeup, killable_recv, ebpf, btf, tracefs, bpffs, cgroup2,
//   landlock, io_uring, userns, pidfd_exit_info, and ebpf-load (the tracer
//   fails only when loaded: `cottonbox run` has prepared the session for it)
// It never turns a missing feature on, and nothing outside tests should set it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/result.h"

namespace cb {

struct Features {
  std::string kernel;  // uname -r
  bool root = false;   // effective uid 0

  // seccomp
  bool seccomp_notify = false;         // SECCOMP_RET_USER_NOTIF with a listener
  bool seccomp_sync_wakeup = false;    // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6)
  bool seccomp_killable_recv = false;  // SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19)
  // Why no listener can be had here (host/nesting.h): EBUSY inside another
  // supervisor; 0 when one can.
  int listener_err = 0;
  std::string listener_why;
  int seccomp_filters = 0;  // filters already installed on this process

  // Namespaces the session makes (probed as it would make them): 0, or the errno.
  int mountns_err = 0;
  int pidns_err = 0;

  // eBPF tracer
  bool ebpf = false;            // everything below that the tracer needs
  std::string ebpf_detail;      // what is missing, as a sentence, when !ebpf
  bool bpf_privileged = false;  // root, CAP_SYS_ADMIN, or CAP_BPF + CAP_PERFMON
  // The resident tracer (tracerd/), asked by the caller (it is not a kernel
  // feature): running, and what it said or why not.
  bool tracer_service = false;
  std::string tracer_service_detail;
  bool bpf_tracepoint = false;  // BPF_PROG_TYPE_TRACEPOINT loads
  bool bpf_raw_tracepoint = false;
  bool bpf_ringbuf = false;          // BPF_MAP_TYPE_RINGBUF (5.8)
  bool syscall_tracepoints = false;  // syscalls:sys_enter_* (CONFIG_FTRACE_SYSCALLS)
  bool io_uring_tracepoint = false;  // io_uring:io_uring_submit_req
  bool btf = false;                  // /sys/kernel/btf/vmlinux
  std::string tracefs;               // where tracefs is mounted; "" if not
  bool tracefs_usable = false;       // mounted, or a private instance can be made
  std::string bpffs;                 // where bpffs is mounted; "" if not
  std::string cgroup2;               // where cgroup v2 is mounted; "" if not

  // other layers
  int landlock_abi = 0;              // 0: none
  std::string landlock_detail;       // why none
  bool io_uring = false;             // io_uring_setup exists
  int io_uring_disabled = -1;        // kernel.io_uring_disabled (0, 1, 2); -1: no such sysctl
  bool userns_unprivileged = false;  // an unprivileged process can unshare(CLONE_NEWUSER)
  std::string userns_detail;
  bool pidfd_exit_info = false;  // PIDFD_GET_INFO with PIDFD_INFO_EXIT (6.15)

  std::vector<std::string> faked;  // COTTONBOX_FAKE_MISSING names applied
};

Features probe_features();

// Root, CAP_SYS_ADMIN, or CAP_BPF + CAP_PERFMON in the effective set.
bool has_bpf_privileges();
// The errno (EPERM, EACCES) with which something this process runs under
// (a sandbox's filter, another cottonbox session) refuses bpf() itself; 0
// when it does not.
int bpf_refused();

// True when COTTONBOX_FAKE_MISSING names `feature` (test only).
bool fake_missing(std::string_view feature);

// A directory fd on tracefs: the mounted instance if there is one, else a
// private, detached instance (fsopen/fsmount) that leaves no trace in any
// mount table.  `where` gets the mount point or "(private instance)".
Result<UniqueFd> open_tracefs(std::string* where = nullptr);

// Where a file system of type `fstype` is mounted (first in mountinfo), or "".
std::string find_mount(std::string_view fstype);

}  // namespace cb
