// `cottonbox doctor`: every capability has a line (text) and a key (JSON),
// and each says what cottonbox does without it.
#include <gtest/gtest.h>

#include <cerrno>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "commands/doctor.h"

namespace cb {
namespace {

const std::vector<std::string> kIds = {"seccomp_notify",
                                       "seccomp_sync_wakeup",
                                       "seccomp_killable_recv",
                                       "ebpf",
                                       "tracer_service",
                                       "btf",
                                       "tracefs",
                                       "bpffs",
                                       "cgroup2",
                                       "landlock",
                                       "io_uring",
                                       "userns",
                                       "mount_layer",
                                       "pid_namespace",
                                       "pidfd_exit_info"};

Features everything() {
  Features f;
  f.kernel = "6.18.0-test";
  f.root = true;
  f.seccomp_notify = f.seccomp_sync_wakeup = f.seccomp_killable_recv = true;
  f.ebpf = f.bpf_privileged = f.bpf_tracepoint = f.bpf_raw_tracepoint = f.bpf_ringbuf = true;
  f.syscall_tracepoints = f.io_uring_tracepoint = f.btf = f.tracefs_usable = true;
  f.tracefs = "/sys/kernel/tracing";
  f.bpffs = "/sys/fs/bpf";
  f.cgroup2 = "/sys/fs/cgroup";
  f.landlock_abi = 6;
  f.io_uring = true;
  f.io_uring_disabled = 0;
  f.userns_unprivileged = true;
  f.userns_detail = "unprivileged user namespaces allowed";
  f.pidfd_exit_info = true;
  return f;
}

Features nothing() {
  Features f;
  f.kernel = "4.19.0-old";
  f.ebpf_detail = "needs root or CAP_BPF+CAP_PERFMON";
  f.landlock_detail = "not built into this kernel";
  f.userns_detail = "disabled by kernel.unprivileged_userns_clone=0";
  f.mountns_err = f.pidns_err = EPERM;
  return f;
}

// Inside another cottonbox session: the kernel has user-notify, but the
// outer supervisor holds the one listener, and its policy refuses mount
// namespaces.
Features nested() {
  Features f = everything();
  f.seccomp_notify = f.seccomp_sync_wakeup = f.seccomp_killable_recv = false;
  f.listener_err = EBUSY;
  f.listener_why = "a seccomp filter above this process already has a listener";
  f.seccomp_filters = 1;
  f.ebpf = false;
  f.ebpf_detail = "bpf() is refused here (Operation not permitted)";
  f.mountns_err = EPERM;
  return f;
}

// The line of capability `name`, with the alignment padding squeezed out.
std::string line_of(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + ":", 0) == 0) return std::regex_replace(line, std::regex(": +"), ": ");
  return {};
}

TEST(Doctor, TextHasALinePerCapability) {
  for (const Features& f : {everything(), nothing()}) {
    std::ostringstream out;
    print_doctor(f, false, out);
    auto caps = capabilities(f);
    ASSERT_EQ(caps.size(), kIds.size());
    for (size_t i = 0; i < caps.size(); ++i) {
      EXPECT_EQ(caps[i].id, kIds[i]);
      std::string l = line_of(out.str(), caps[i].name);
      ASSERT_FALSE(l.empty()) << caps[i].name << " missing from:\n" << out.str();
      EXPECT_NE(l.find(caps[i].available ? ": available (" : ": unavailable: "), std::string::npos) << l;
      EXPECT_NE(l.find(" — "), std::string::npos) << l;
      EXPECT_FALSE(caps[i].effect.empty());
    }
  }
}

TEST(Doctor, EbpfLinesSayWhatHappens) {
  std::ostringstream good, bad;
  print_doctor(everything(), false, good);
  print_doctor(nothing(), false, bad);
  EXPECT_EQ(line_of(good.str(), "eBPF tracer")
                .rfind("eBPF tracer: available (tracepoints, ringbuf, BTF) — full recording", 0),
            0u)
      << good.str();
  // Its cost falls on the whole host, not just the session: a user should
  // read that before starting it.
  EXPECT_NE(line_of(good.str(), "eBPF tracer").find("every syscall on this host"), std::string::npos) << good.str();
  EXPECT_EQ(line_of(bad.str(), "eBPF tracer"),
            "eBPF tracer: unavailable: needs root or CAP_BPF+CAP_PERFMON — cottonbox runs seccomp-only (decisions, "
            "not the full record) and marks sessions degraded");
}

TEST(Doctor, APlainUserIsRecordedInFullThroughTheTracerService) {
  Features f = everything();
  f.root = false;
  f.ebpf = false;
  f.ebpf_detail = "needs root or CAP_BPF+CAP_PERFMON";
  std::ostringstream without, with;
  print_doctor(f, false, without);
  EXPECT_NE(line_of(without.str(), "tracer service").find("seccomp-only"), std::string::npos) << without.str();
  EXPECT_NE(without.str().find("cottonbox runs here seccomp-only"), std::string::npos) << without.str();
  f.tracer_service = true;
  f.tracer_service_detail = "running at /run/cottonbox/tracer.sock (pid 7, 2 sessions)";
  print_doctor(f, false, with);
  EXPECT_EQ(line_of(with.str(), "tracer service").rfind("tracer service: available (running at", 0), 0u) << with.str();
  EXPECT_NE(line_of(with.str(), "eBPF tracer").find("records sessions in full"), std::string::npos) << with.str();
  EXPECT_NE(with.str().find("through the tracer service"), std::string::npos) << with.str();
  std::ostringstream json;
  print_doctor(f, true, json);
  EXPECT_EQ(nlohmann::json::parse(json.str())["mode"], "seccomp+ebpf");
}

TEST(Doctor, ExitStatusFollowsTheEssentials) {
  std::ostringstream out;
  EXPECT_EQ(print_doctor(everything(), false, out), 0);
  EXPECT_NE(out.str().find("cottonbox runs here with seccomp and the eBPF tracer"), std::string::npos);
  Features seccomp_only = everything();
  seccomp_only.ebpf = false;
  seccomp_only.ebpf_detail = "needs root or CAP_BPF+CAP_PERFMON";
  std::ostringstream out2;
  EXPECT_EQ(print_doctor(seccomp_only, false, out2), 0);
  EXPECT_NE(out2.str().find("seccomp-only"), std::string::npos);
  std::ostringstream out3;
  EXPECT_EQ(print_doctor(nothing(), false, out3), 1);
  EXPECT_NE(out3.str().find("cannot run here"), std::string::npos);
}

TEST(Doctor, JsonIsOneObjectWithEveryCapability) {
  for (const Features& f : {everything(), nothing()}) {
    std::ostringstream out;
    print_doctor(f, true, out);
    std::string s = out.str();
    ASSERT_EQ(std::count(s.begin(), s.end(), '\n'), 1) << "one line";
    auto j = nlohmann::json::parse(s);
    EXPECT_EQ(j["kernel"], f.kernel);
    EXPECT_EQ(j["runnable"], f.seccomp_notify);
    EXPECT_EQ(j["mode"], f.seccomp_notify ? "seccomp+ebpf" : "none");
    ASSERT_TRUE(j["capabilities"].is_object());
    EXPECT_EQ(j["capabilities"].size(), kIds.size());
    for (const auto& id : kIds) {
      ASSERT_TRUE(j["capabilities"].contains(id)) << id;
      const auto& c = j["capabilities"][id];
      EXPECT_TRUE(c["available"].is_boolean());
      EXPECT_TRUE(c["name"].is_string());
      EXPECT_TRUE(c["detail"].is_string());
      EXPECT_FALSE(c["effect"].get<std::string>().empty());
    }
    EXPECT_EQ(j["capabilities"]["ebpf"]["available"], f.ebpf);
  }
}

TEST(Doctor, InsideAnotherSessionItRunsWithKernelLayersAndSaysWhy) {
  std::ostringstream text, json;
  EXPECT_EQ(print_doctor(nested(), false, text), 0) << "runnable: the outer supervisor is no reason to refuse";
  EXPECT_EQ(line_of(text.str(), "seccomp user-notify")
                .rfind("seccomp user-notify: unavailable: no listener: a seccomp filter above this process already "
                       "has a listener — `cottonbox run` has no supervisor of its own here",
                       0),
            0u)
      << text.str();
  EXPECT_NE(line_of(text.str(), "seccomp sync wake-up").find("no listener can be had here"), std::string::npos);
  EXPECT_NE(line_of(text.str(), "read-only mounts").find("Operation not permitted (the outer session's policy"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("without a supervisor of its own (inside another supervisor)"), std::string::npos);
  print_doctor(nested(), true, json);
  auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["runnable"], true);
  EXPECT_EQ(j["nested"], true);
  EXPECT_EQ(j["mode"], "kernel-only");
  // Without user-notify at all (not EBUSY), cottonbox cannot run.
  Features none = nested();
  none.listener_err = EINVAL;
  std::ostringstream out;
  EXPECT_EQ(print_doctor(none, false, out), 1);
}

TEST(Doctor, IoUringStates) {
  Features f = everything();
  f.io_uring_disabled = 2;
  auto caps = capabilities(f);
  auto it = std::find_if(caps.begin(), caps.end(), [](const Capability& c) { return c.id == "io_uring"; });
  ASSERT_NE(it, caps.end());
  EXPECT_FALSE(it->available);
  EXPECT_NE(it->detail.find("io_uring_disabled=2"), std::string::npos);
  f.io_uring_disabled = 0;
  f.io_uring_tracepoint = false;
  caps = capabilities(f);
  it = std::find_if(caps.begin(), caps.end(), [](const Capability& c) { return c.id == "io_uring"; });
  EXPECT_TRUE(it->available);
  EXPECT_NE(it->effect.find("not recorded"), std::string::npos);
}

TEST(Doctor, ThisMachine) {
  std::ostringstream text, json;
  int rc = run_doctor(false, text);
  EXPECT_EQ(run_doctor(true, json), rc);
  for (const auto& c : capabilities(Features{})) EXPECT_FALSE(line_of(text.str(), c.name).empty()) << c.name;
  auto j = nlohmann::json::parse(json.str());
  for (const auto& id : kIds) EXPECT_TRUE(j["capabilities"].contains(id)) << id;
  EXPECT_EQ(rc, j["runnable"].get<bool>() ? 0 : 1);
}

}  // namespace
}  // namespace cb
