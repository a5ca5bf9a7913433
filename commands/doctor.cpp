#include "commands/doctor.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>

#include "trace/tracer_service.h"

namespace cb {

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

}  // namespace

bool nested_here(const Features& f) { return !f.seccomp_notify && f.listener_err == EBUSY; }

std::vector<Capability> capabilities(const Features& f) {
  std::vector<Capability> caps;
  auto add = [&caps](std::string id, std::string name, bool ok, std::string detail, std::string effect,
                     bool essential = false) {
    caps.push_back({std::move(id), std::move(name), ok, std::move(detail), std::move(effect), essential});
  };

  // Inside another supervisor the kernel has user-notify but refuses a
  // second listener: sessions run with kernel layers alone.
  const bool nested = nested_here(f);
  const std::string no_listener = "not used: no listener can be had here";
  const std::string nothing_notified = "nothing is notified in sessions here";
  add("seccomp_notify", "seccomp user-notify", f.seccomp_notify,
      f.seccomp_notify ? "SECCOMP_RET_USER_NOTIF with a listener"
      : nested         ? "no listener: " + f.listener_why
                       : "the kernel refuses a notifying filter",
      f.seccomp_notify ? "every guarded syscall is decided by the supervisor before it runs"
      : nested ? "`cottonbox run` has no supervisor of its own here: its policy is enforced by kernel layers alone "
                 "(read-only mounts where it may make them, refusals in its seccomp filter, Landlock), rules that "
                 "need a supervisor are named in the session's degradations, and the outer supervisor still judges "
                 "every call"
               : "cottonbox cannot supervise anything here: `cottonbox run` refuses to start",
      !nested);
  add("seccomp_sync_wakeup", "seccomp sync wake-up", f.seccomp_sync_wakeup,
      f.seccomp_sync_wakeup ? "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP"
      : nested              ? no_listener
                            : "no SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6)",
      f.seccomp_sync_wakeup ? "a decision costs one switch to the supervisor and back"
      : nested              ? nothing_notified
               : "decisions work, with a scheduler round trip each (slower); sessions are marked degraded");
  add("seccomp_killable_recv", "seccomp killable wait", f.seccomp_killable_recv,
      f.seccomp_killable_recv ? "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"
      : nested                ? no_listener
                              : "no SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19)",
      f.seccomp_killable_recv ? "a syscall being decided is not torn by non-fatal signals"
      : nested                ? nothing_notified
               : "a signal can interrupt a syscall waiting for its decision, and the command retries it");

  std::vector<std::string> offers;
  if (f.bpf_tracepoint) offers.push_back("tracepoints");
  if (f.bpf_ringbuf) offers.push_back("ringbuf");
  if (f.btf) offers.push_back("BTF");
  add("ebpf", "eBPF tracer", f.ebpf, f.ebpf ? join(offers, ", ") : f.ebpf_detail,
      f.ebpf   ? "full recording: every process, exec, exit, file, network and signal action of the session; "
                 "while a session records, every syscall on this host passes the tracer's two raw tracepoint "
                 "programs, which stop at their first tests for anything outside the session (about 0.2 µs a "
                 "syscall on the reference VM: bench/README.md)"
      : nested ? "sessions started here record their processes' start and end only (the outer session records "
                 "every call) and are marked degraded"
      : f.tracer_service ? "not needed here: the tracer service (below) holds the programs and records sessions in full"
                         : "cottonbox runs seccomp-only (decisions, not the full record) and marks sessions degraded");
  add("tracer_service", "tracer service", f.tracer_service, f.tracer_service_detail,
      f.tracer_service ? "sessions register with it: one set of programs serves them all, and plain users' sessions "
                         "are recorded in full without privileges"
      : f.root && f.ebpf
          ? "a root session starts it and it stops 5 s after its last session; for plain users to be recorded "
            "in full, keep it running (packaging/cottonbox-tracer.service, docs/tracer.md)"
          : "plain users' sessions run seccomp-only and are marked degraded until root runs it (`cottonbox tracer "
            "serve`, or packaging/cottonbox-tracer.service: docs/tracer.md)");
  add("btf", "kernel BTF", f.btf, f.btf ? "/sys/kernel/btf/vmlinux" : "no /sys/kernel/btf/vmlinux",
      f.btf ? "the tracer's CO-RE programs adapt to this kernel's structures"
            : "the eBPF tracer cannot load; seccomp-only");
  add("tracefs", "tracefs", f.tracefs_usable,
      !f.tracefs.empty() ? "mounted at " + f.tracefs
      : f.tracefs_usable ? "not mounted; a private instance can be made"
                         : "not mounted, and no private instance can be made",
      f.tracefs_usable ? "the tracer learns from it which tracepoints this kernel has (nothing is mounted on the host)"
                       : "the eBPF tracer cannot start; seccomp-only");
  add("bpffs", "bpffs", !f.bpffs.empty(), f.bpffs.empty() ? "not mounted" : "mounted at " + f.bpffs,
      "not needed: cottonbox pins nothing, its programs live as long as the supervisor");
  add("cgroup2", "cgroup v2", !f.cgroup2.empty(), f.cgroup2.empty() ? "not mounted" : "mounted at " + f.cgroup2,
      "not needed: the tracer follows the session by its process tree, not by cgroup");

  add("landlock", "Landlock", f.landlock_abi > 0,
      f.landlock_abi > 0 ? "ABI " + std::to_string(f.landlock_abi) : f.landlock_detail,
      f.landlock_abi >= 6  ? "a kernel layer under the supervisor, also scoping signals to the session"
      : f.landlock_abi > 0 ? "a kernel layer under the supervisor; signals are scoped by the supervisor (needs ABI 6)"
                           : "no Landlock layer: rules rest on seccomp and the mount layer");

  std::string uring_detail;
  if (!f.io_uring)
    uring_detail = "not in this kernel";
  else if (f.io_uring_disabled == 2)
    uring_detail = "disabled (kernel.io_uring_disabled=2)";
  else if (f.io_uring_disabled == 1)
    uring_detail = "restricted to a group (kernel.io_uring_disabled=1)";
  else
    uring_detail = "enabled";
  uring_detail += f.io_uring_tracepoint ? "; submissions tracepoint present" : "; no submissions tracepoint";
  bool uring_usable = f.io_uring && f.io_uring_disabled != 2;
  add("io_uring", "io_uring", uring_usable, uring_detail,
      !uring_usable ? "nothing can go around syscall rules through io_uring"
      : f.io_uring_tracepoint
          ? "denied in sessions (ENOSYS, programs fall back) unless a rule allows it; allowed rings are recorded "
            "by the tracer and the session is marked degraded"
          : "denied in sessions (ENOSYS, programs fall back) unless a rule allows it, which marks the session "
            "degraded; its operations are not recorded");
  add("userns", "user namespaces", f.userns_unprivileged, f.userns_detail,
      f.userns_unprivileged ? "non-root users get the session's own pid and mount namespaces"
                            : "root is unaffected; non-root sessions run without their own pid and mount namespaces");
  // The mount layer needs a private mount namespace (root's, or in a user
  // namespace for everyone else) and leave to mount in it: probed as the
  // session makes them, since an enclosing sandbox may refuse either.
  bool mounts = f.mountns_err == 0;
  const char* how = f.root ? "unshare(CLONE_NEWNS)" : "unshare(CLONE_NEWUSER|CLONE_NEWNS)";
  add("mount_layer", "read-only mounts", mounts,
      mounts ? (f.root ? "private mount namespace (root)" : "private mount namespace (through a user namespace)")
             : std::string(how) + " and a mount in it: " + std::strerror(f.mountns_err) +
                   (nested ? " (the outer session's policy decides: sys.namespace, sys.mount)" : ""),
      mounts   ? "a rule that denies every change to a whole tree is a read-only bind mount in the session: "
                 "no round trip, no race, io_uring included; the audit database and policies are read-only too"
      : nested ? "rules on whole trees are not enforced by sessions started here (the outer session's rules still "
                 "apply), and their audit database is not hidden from them; sessions are marked degraded"
               : "every rule is enforced by the supervisor alone; sessions are marked degraded");
  bool pidns = f.pidns_err == 0;
  add("pid_namespace", "pid namespace", pidns,
      pidns ? (f.root ? "unshare(CLONE_NEWPID)" : "unshare(CLONE_NEWUSER|CLONE_NEWPID)")
            : std::string(f.root ? "unshare(CLONE_NEWPID): " : "unshare(CLONE_NEWUSER|CLONE_NEWPID): ") +
                  std::strerror(f.pidns_err),
      pidns ? "the session's processes live in a pid namespace of their own, and end with it"
            : "sessions share this pid namespace; their init reaps and ends them as a subreaper");
  add("pidfd_exit_info", "pidfd exit info", f.pidfd_exit_info,
      f.pidfd_exit_info ? "PIDFD_INFO_EXIT" : "no PIDFD_INFO_EXIT (Linux 6.15)",
      f.pidfd_exit_info ? "exit statuses are read from pidfds, even after init reaped the process"
                        : "exit statuses come from the eBPF tracer, or from init for its direct children; others "
                          "are recorded as unknown");
  return caps;
}

int print_doctor(const Features& f, bool json, std::ostream& out) {
  auto caps = capabilities(f);
  const bool nested = nested_here(f);
  bool runnable = true;
  for (const auto& c : caps)
    if (c.essential && !c.available) runnable = false;

  if (json) {
    nlohmann::ordered_json j;
    j["kernel"] = f.kernel;
    j["root"] = f.root;
    j["runnable"] = runnable;
    j["mode"] = !runnable                    ? "none"
                : nested                     ? (f.ebpf ? "kernel-only+ebpf" : "kernel-only")
                : f.ebpf || f.tracer_service ? "seccomp+ebpf"
                                             : "seccomp";
    j["nested"] = nested;
    auto& jc = j["capabilities"];
    jc = nlohmann::ordered_json::object();
    for (const auto& c : caps)
      jc[c.id] = {{"name", c.name}, {"available", c.available}, {"detail", c.detail}, {"effect", c.effect}};
    if (!f.faked.empty()) j["faked_missing"] = f.faked;
    out << j.dump() << "\n";
    return runnable ? 0 : 1;
  }

  out << "cottonbox doctor: Linux " << f.kernel << (f.root ? ", as root" : ", not root") << "\n";
  size_t width = 0;
  for (const auto& c : caps) width = std::max(width, c.name.size());
  for (const auto& c : caps) {
    out << c.name << ":" << std::string(width - c.name.size() + 1, ' ');
    if (c.available)
      out << "available (" << c.detail << ")";
    else
      out << "unavailable: " << c.detail;
    out << " — " << c.effect << "\n";
  }
  if (!f.faked.empty()) out << "note: COTTONBOX_FAKE_MISSING=" << join(f.faked, ",") << " (test only)\n";
  out << (!runnable ? "cottonbox cannot run here\n"
          : nested  ? "cottonbox runs here without a supervisor of its own (inside another supervisor): kernel layers "
                      "only, sessions marked degraded\n"
          : f.ebpf  ? "cottonbox runs here with seccomp and the eBPF tracer\n"
          : f.tracer_service ? "cottonbox runs here with seccomp and the eBPF tracer, through the tracer service\n"
                             : "cottonbox runs here seccomp-only (sessions marked degraded)\n");
  return runnable ? 0 : 1;
}

int run_doctor(bool json, std::ostream& out) {
  Features f = probe_features();
  const std::string sock = tracer_socket_path();
  if (auto st = tracer_status(sock)) {
    f.tracer_service = true;
    f.tracer_service_detail = "running at " + sock + " (pid " + std::to_string(st->service_pid) + ", " +
                              std::to_string(st->sessions) + " sessions)";
  } else {
    f.tracer_service_detail = "not running at " + sock + " (" + st.error().message + ")";
  }
  return print_doctor(f, json, out);
}

}  // namespace cb
