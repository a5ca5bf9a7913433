#include "test_util.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace cb::db::test {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "cb_db_test.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::unique_ptr<Writer> open_writer(const std::string& path) {
  auto w = Writer::open(path);
  if (!w) ADD_FAILURE() << w.error().message;
  return w ? std::move(*w) : nullptr;
}

std::unique_ptr<Reader> open_reader(const std::string& path) {
  auto r = Reader::open(path);
  if (!r) ADD_FAILURE() << r.error().message;
  return r ? std::move(*r) : nullptr;
}

SessionStart session_start(const std::string& name) {
  SessionStart s;
  s.uuid = "uuid-" + name;
  s.name = name;
  s.argv = {"sh", "-c", "make all"};
  s.cwd = "/home/u/proj";
  s.uid = 1000;
  s.user = "u";
  s.hostname = "box";
  s.policy_files = {"/usr/share/cottonbox/rules/default.yaml"};
  s.policy_hash = "abc123";
  s.started_ns = now_ns();
  s.tracer = "seccomp";
  s.ask_mode = "deny";
  s.supervisor_pid = getpid();  // this process: alive, so never "stale"
  s.boot_id = current_boot_id();
  return s;
}

std::shared_ptr<const ProcessInfo> process(uint64_t proc_id, int32_t pid, std::string comm,
                                           std::vector<std::string> argv) {
  auto p = std::make_shared<ProcessInfo>();
  p->proc_id = proc_id;
  p->pid = pid;
  p->ppid = pid - 1;
  p->uid = 1000;
  p->comm = comm;
  p->exe = "/usr/bin/" + comm;
  p->argv = argv.empty() ? std::vector<std::string>{comm} : std::move(argv);
  p->cwd = "/home/u/proj";
  return p;
}

ProcessRow process_row(const ProcessInfo& p, uint64_t parent) {
  return ProcessRow{p.proc_id, parent, p.pid, p.ppid,   p.uid,   p.comm,
                    p.exe,     p.argv, p.cwd, now_ns(), p.names, p.identity};
}

EventRow event(uint64_t seq, Action action, std::string path, std::shared_ptr<const ProcessInfo> proc) {
  EventRow r;
  r.seq = seq;
  r.ev.ts_ns = now_ns();
  r.ev.action = action;
  r.ev.path = std::move(path);
  r.ev.syscall = "unlinkat";
  r.ev.syscall_nr = 263;
  if (proc) {
    r.ev.pid = proc->pid;
    r.ev.tid = proc->pid;
    r.ev.proc = std::move(proc);
  }
  r.result_errno = 0;
  r.layer = Layer::Notify;
  return r;
}

EventRow denied(EventRow r, std::string rule) {
  r.verdict.decision = Decision::Deny;
  r.verdict.rule_id = std::move(rule);
  r.allowed = false;
  r.result_errno = EPERM;
  return r;
}

int run_in_child(const std::function<int()>& body) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(body());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string s;
  std::getline(in, s);
  return s;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace cb::db::test
