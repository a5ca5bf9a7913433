// Files of the kernel's own file systems: procfs outside its per-process
// directories, sysfs, cgroupfs, binfmt_misc, debugfs and the like.  Writing
// one changes the machine, not a file: core_pattern, modprobe, a cgroup's
// release_agent or uevent_helper make the kernel run a program as root
// outside every namespace, and a cgroup.kill ends processes anywhere.  The
// session's own /proc/sys and /sys are read-only for root (plan/plan.cpp),
// but a sandbox inside the session mounts fresh ones, writable: so a write
// open is judged by the file system the kernel resolved it on.
//
// Some settings belong to a namespace (net.*, user.*, the IPC limits, the
// host name): those a process may set in a namespace of its own, and the
// kernel picks the namespace of the process that opens them, so only the
// caller's own open can reach the right one.
#pragma once

#include <string_view>

namespace cb {

// Whether a file system (statfs f_type) is one of the kernel's, whose
// files are settings rather than data.
bool kernel_fs(unsigned long f_type);

struct KernelFile {
  enum Kind { None, Setting, Namespaced } kind = None;
  // For Namespaced: the namespace ("net", "user", "ipc", "uts") whose
  // setting it is (the name under /proc/PID/ns).
  const char* ns = nullptr;
};

// What writing the file at `fs_path` (its place in its file system, "/sys/
// kernel/core_pattern" for procfs) of a file system of type `f_type` changes.
KernelFile kernel_file(unsigned long f_type, std::string_view fs_path);

}  // namespace cb
