#include "ask/ask_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

#include "base/fd.h"
#include "base/paths.h"
#include "proto/protocol.h"

namespace cb {
namespace {

// An answer is a line; more than this is not an answer.
constexpr size_t kMaxOutput = 64 * 1024;
// The approver is stopped this long before the ask's deadline, so that its
// denial, not the supervisor's timer, is what the trail records.
constexpr int64_t kMarginNs = 50'000'000;

std::string trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(a, b - a + 1));
}

std::string printable_reason(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
  return out.size() > 200 ? out.substr(0, 200) + "..." : out;
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

Result<ApproverAnswer> parse_approver_output(std::string_view out) {
  if (out.size() > kMaxOutput) return Error{EINVAL, "more than 64 KiB of output"};
  std::string line;
  size_t pos = 0;
  while (pos < out.size() && line.empty()) {
    size_t nl = out.find('\n', pos);
    line = trim(out.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? out.size() : nl + 1;
  }
  if (line.empty()) return Error{EINVAL, "no answer on its output"};
  size_t sp = line.find_first_of(" \t");
  std::string word = line.substr(0, sp);
  std::string reason = sp == std::string::npos ? "" : trim(line.substr(sp));
  ApproverAnswer a;
  if (word == "allow" || word == "allow-once")
    a.answer = AskAnswer::AllowOnce;
  else if (word == "deny" || word == "deny-once")
    a.answer = AskAnswer::DenyOnce;
  else if (word == "allow-tree")
    a.answer = AskAnswer::AllowTree;
  else if (word == "deny-tree")
    a.answer = AskAnswer::DenyTree;
  else
    return Error{EINVAL,
                 "'" + printable_reason(word.substr(0, 40)) + "' is no answer (allow, deny, allow-tree, deny-tree)"};
  a.reason = printable_reason(reason);
  return a;
}

ExecAsker::ExecAsker(std::string command, std::string cwd) : command_(std::move(command)), cwd_(std::move(cwd)) {}

ExecAsker::~ExecAsker() {
  std::vector<Worker> workers;
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
    for (auto& [id, pgid] : running_) kill(-pgid, SIGKILL);
    workers.swap(workers_);
  }
  for (auto& w : workers) w.thread.join();
}

void ExecAsker::ask(const AskRequest& req) {
  std::vector<Worker> finished;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stopping_) return;
    auto it = std::partition(workers_.begin(), workers_.end(), [](const Worker& w) { return !w.done->load(); });
    std::move(it, workers_.end(), std::back_inserter(finished));
    workers_.erase(it, workers_.end());
    cancelled_[req.ask_id] = false;
    auto done = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back({std::thread([this, req, done] {
                          run(req);
                          *done = true;
                        }),
                        done});
  }
  for (auto& w : finished) w.thread.join();
}

void ExecAsker::cancel(uint64_t ask_id) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = cancelled_.find(ask_id);
  if (it == cancelled_.end()) return;  // not ours, or answered already
  it->second = true;
  if (auto r = running_.find(ask_id); r != running_.end()) kill(-r->second, SIGKILL);
}

void ExecAsker::run(AskRequest req) {
  proto::AskMsg m;
  m.ask_id = req.ask_id;
  m.session = req.session;
  m.session_name = req.session_name;
  m.row = req.row;
  for (const auto& l : req.chain) m.chain.push_back({l.pid, l.comm, l.argv});
  m.count = req.count;
  m.summary = summarize(req.row.ev, req.count, cwd_);
  if (m.summary.empty()) m.summary = req.summary;
  m.asked_ns = req.asked_ns;
  m.deadline_ns = req.deadline_ns;
  m.why = req.why;
  std::string input = proto::encode(m) + "\n";

  auto deny = [&](const std::string& why) {
    if (answer) answer(req.ask_id, AskAnswer::DenyOnce, "exec: " + why, "");
  };
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return deny("cannot start the approver: " + std::string(strerror(errno)));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return deny("cannot start the approver: " + std::string(strerror(errno)));
  }
  UniqueFd to_child(in[1]), from_child(out[0]);
  const char* sh = "/bin/sh";
  const char* argv[] = {"sh", "-c", command_.c_str(), nullptr};
  pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec: the supervisor
    // is multithreaded.
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    syscall(SYS_close_range, 3, ~0U, 0);
    execv(sh, const_cast<char* const*>(argv));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (pid < 0) return deny("cannot start the approver: " + std::string(strerror(errno)));
  setpgid(pid, pid);  // also here: whichever runs first
  {
    std::lock_guard<std::mutex> g(mu_);
    running_[req.ask_id] = pid;
    if (stopping_ || cancelled_[req.ask_id]) kill(-pid, SIGKILL);
  }
  fcntl(to_child.get(), F_SETFL, O_NONBLOCK);
  fcntl(from_child.get(), F_SETFL, O_NONBLOCK);

  int64_t deadline = req.deadline_ns - kMarginNs;
  std::string output;
  size_t written = 0;
  bool timed_out = false, too_long = false;
  for (;;) {
    int64_t left = deadline - now_ns();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p[2] = {{from_child.get(), POLLIN, 0}, {to_child ? to_child.get() : -1, POLLOUT, 0}};
    int n = poll(p, 2, static_cast<int>(std::min<int64_t>(left / 1000000 + 1, 1000)));
    if (n < 0 && errno != EINTR) break;
    if (to_child && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write(to_child.get(), input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN) to_child.reset();  // it does not read: its loss
      if (written == input.size()) to_child.reset();   // EOF: the ask is whole
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[4096];
      ssize_t r = read(from_child.get(), buf, sizeof buf);
      if (r > 0) {
        output.append(buf, static_cast<size_t>(r));
        if (output.size() > kMaxOutput) {
          too_long = true;
          break;
        }
      } else if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        break;  // its output ended
      }
    }
  }
  to_child.reset();
  from_child.reset();
  // It has until the deadline to exit, too.
  int status = 0;
  bool exited = false;
  while (!timed_out && !too_long) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      exited = true;
      break;
    }
    if (w < 0 && errno != EINTR) break;
    if (now_ns() >= deadline) {
      timed_out = true;
      break;
    }
    usleep(5000);
  }
  if (!exited) {
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  } else {
    kill(-pid, SIGKILL);  // whatever it left behind in its group
  }
  bool cancelled;
  {
    std::lock_guard<std::mutex> g(mu_);
    running_.erase(req.ask_id);
    cancelled = cancelled_[req.ask_id] || stopping_;
    cancelled_.erase(req.ask_id);
  }
  if (cancelled) return;  // the supervisor ended the ask itself
  if (timed_out) return deny("the approver gave no answer in time");
  if (too_long) return deny("the approver wrote more than 64 KiB");
  if (WIFSIGNALED(status))
    return deny("the approver was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                strsignal(WTERMSIG(status)) + ")");
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return deny("the approver exited with status " + std::to_string(WEXITSTATUS(status)));
  auto a = parse_approver_output(output);
  if (!a) return deny("the approver's answer is not understood: " + a.error().message);
  std::string by = "exec";
  if (!a->reason.empty()) by += ": " + a->reason;
  if (answer) answer(req.ask_id, a->answer, by, "");
}

}  // namespace cb
