#include "ask/ask_tty.h"
#include "base/paths.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <termios.h>
#include <unistd.h>

#include <ctime>

namespace cb {
namespace {

void put(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;
    }
    off += static_cast<size_t>(n);
  }
}

std::string argv_text(const std::vector<std::string>& argv, size_t max = 160) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    s += shell_quote(a);
    if (s.size() > max) return s.substr(0, max) + "…";
  }
  return s;
}

// Non-canonical input for single-key answers; restored on scope exit.
class RawMode {
 public:
  explicit RawMode(int fd) : fd_(fd) {
    if (tcgetattr(fd_, &saved_) == 0) {
      termios t = saved_;
      t.c_lflag &= ~(ICANON | ECHO);
      t.c_cc[VMIN] = 1;
      t.c_cc[VTIME] = 0;
      ok_ = tcsetattr(fd_, TCSANOW, &t) == 0;
    }
  }
  ~RawMode() {
    if (ok_) tcsetattr(fd_, TCSANOW, &saved_);
  }

 private:
  int fd_;
  termios saved_{};
  bool ok_ = false;
};

}  // namespace

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\\')
      out += "\\\\";
    else if (c < 0x20 || c == 0x7f) {
      char b[8];
      snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string shell_quote(const std::string& s) {
  if (s.empty()) return "''";
  bool plain = true;
  for (unsigned char c : s)
    if (!(isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '=' || c == ':' || c == ',' || c == '+' ||
          c == '@' || c == '%'))
      plain = false;
  if (plain) return s;
  std::string out = "'";
  for (char c : printable(s)) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

Result<std::unique_ptr<TtyAsker>> TtyAsker::open() {
  UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
  if (!tty) return Error::from_errno("/dev/tty");
  return std::unique_ptr<TtyAsker>(new TtyAsker(std::move(tty)));
}

TtyAsker::TtyAsker(UniqueFd tty) : tty_(std::move(tty)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  thread_ = std::thread([this] { loop(); });
}

TtyAsker::~TtyAsker() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof one);
  cv_.notify_all();
  thread_.join();
}

void TtyAsker::ask(const AskRequest& req) {
  {
    std::lock_guard<std::mutex> g(mu_);
    queue_.push_back(req);
  }
  cv_.notify_all();
}

void TtyAsker::update(uint64_t ask_id, uint32_t count) {
  std::lock_guard<std::mutex> g(mu_);
  if (ask_id == current_) current_count_ = count;
  for (auto& r : queue_)
    if (r.ask_id == ask_id) r.count = count;
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof one);
}

void TtyAsker::cancel(uint64_t ask_id) {
  std::lock_guard<std::mutex> g(mu_);
  if (ask_id == current_) current_cancelled_ = true;
  for (auto it = queue_.begin(); it != queue_.end(); ++it)
    if (it->ask_id == ask_id) {
      queue_.erase(it);
      break;
    }
  uint64_t one = 1;
  (void)!write(wake_.get(), &one, sizeof one);
}

void TtyAsker::loop() {
  for (;;) {
    AskRequest req;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      req = std::move(queue_.front());
      queue_.pop_front();
      current_ = req.ask_id;
      current_count_ = req.count;
      current_cancelled_ = false;
    }
    prompt(std::move(req));
    std::lock_guard<std::mutex> g(mu_);
    current_ = 0;
  }
}

void TtyAsker::prompt(AskRequest req) {
  int fd = tty_.get();
  const Event& ev = req.row.ev;
  std::string s = "\n\033[1mcottonbox asks\033[0m";
  if (!req.session_name.empty()) s += " (" + printable(req.session_name) + ")";
  size_t waiting;
  {
    std::lock_guard<std::mutex> g(mu_);
    waiting = queue_.size();
  }
  if (waiting) s += "  [" + std::to_string(waiting) + " more waiting]";
  s += "\n  " + printable(req.summary) + "\n";
  s += "  path     " + printable(ev.path) + "\n";
  if (!ev.target.empty()) s += "  target   " + printable(ev.target) + "\n";
  s += "  rule     " + (req.row.verdict.rule_id.empty() ? std::string("(policy default)") : req.row.verdict.rule_id);
  if (!req.row.verdict.message.empty()) s += ": " + printable(req.row.verdict.message);
  s += "\n";
  // Why: the rule's tests and their values, as `cottonbox why` shows them.
  if (!req.why_text.empty()) {
    size_t pos = 0;
    for (int n = 0; pos < req.why_text.size() && n < 12; ++n) {
      size_t nl = req.why_text.find('\n', pos);
      std::string line = req.why_text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? req.why_text.size() : nl + 1;
      if (line.starts_with("passed over")) break;
      s += "  why      " + printable(line) + "\n";
    }
  }
  for (size_t i = 0; i < req.chain.size(); ++i) {
    s += i == 0 ? "  process  " : "           " + std::string(2 * (i - 1), ' ') + "└ ";
    s += argv_text(req.chain[i].argv.empty() ? std::vector<std::string>{req.chain[i].comm} : req.chain[i].argv) +
         "  (pid " + std::to_string(req.chain[i].pid) + ")\n";
  }
  s += "  [y] allow once  [n] deny once  [a] allow this process tree  [d] deny this process tree\n";
  put(fd, s);

  RawMode raw(fd);
  uint32_t shown_count = req.count;
  for (;;) {
    int64_t left_ns = req.deadline_ns - realtime_ns();
    uint32_t count;
    bool cancelled;
    {
      std::lock_guard<std::mutex> g(mu_);
      count = current_count_;
      cancelled = current_cancelled_ || stop_;
    }
    if (cancelled) {
      put(fd, "\r\033[K  (no longer needed)\n");
      return;
    }
    if (left_ns <= 0) {
      put(fd, "\r\033[K  no answer: denied\n");
      return;  // the supervisor's timer answers Timeout
    }
    std::string line = "\r\033[K  ";
    if (count != shown_count || count > 1) line += "(" + std::to_string(count) + " similar requests) ";
    line += "denied in " + std::to_string((left_ns + 999999999) / 1000000000) + "s > ";
    put(fd, line);
    pollfd p[2] = {{fd, POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    int wait_ms = static_cast<int>(std::min<int64_t>(1000, left_ns / 1000000 + 1));
    if (poll(p, 2, wait_ms) <= 0) continue;
    if (p[1].revents) {
      uint64_t x;
      (void)!read(wake_.get(), &x, sizeof x);
    }
    if (!(p[0].revents & POLLIN)) continue;
    char c;
    if (read(fd, &c, 1) != 1) continue;
    AskAnswer a;
    switch (c) {
      case 'y':
      case 'Y': a = AskAnswer::AllowOnce; break;
      case 'n':
      case 'N': a = AskAnswer::DenyOnce; break;
      case 'a': a = AskAnswer::AllowTree; break;
      case 'd': a = AskAnswer::DenyTree; break;
      default: continue;
    }
    put(fd, std::string("\r\033[K  ") + std::string(ask_answer_name(a)) + "\n");
    if (answer) answer(req.ask_id, a, "tty", "");
    return;
  }
}

}  // namespace cb
