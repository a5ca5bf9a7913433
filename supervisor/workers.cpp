#include "supervisor/workers.h"

#include <sys/eventfd.h>
#include <unistd.h>

namespace cb {

Workers::Workers(Listener& listener) : listener_(listener), done_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Workers::~Workers() { stop(); }

void Workers::run(const Call& call, Operation op, Creds creds, std::optional<EventRow> row) {
  auto finished = std::make_shared<std::atomic<bool>>(false);
  std::thread t([this, finished, call, op = std::move(op), creds = std::move(creds), row = std::move(row)]() mutable {
    Outcome out =
        execute_blocking(op, call, creds, listener_, [&] { return !stopping_ && listener_.id_valid(call.id); });
    if (row) {
      row->result_errno = out.ret < 0 ? static_cast<int32_t>(-out.ret) : 0;
      std::lock_guard<std::mutex> g(mu_);
      done_.push_back(std::move(*row));
    }
    *finished = true;
    uint64_t one = 1;
    (void)!write(done_fd_.get(), &one, sizeof one);
  });
  threads_.push_back({std::move(t), std::move(finished)});
}

std::vector<EventRow> Workers::take_done() {
  uint64_t n;
  (void)!read(done_fd_.get(), &n, sizeof n);
  std::vector<EventRow> rows;
  {
    std::lock_guard<std::mutex> g(mu_);
    rows.swap(done_);
  }
  // Threads whose operation is done are joined as their rows come back.
  std::erase_if(threads_, [](Thread& w) {
    if (!*w.finished) return false;
    w.thread.join();
    return true;
  });
  return rows;
}

void Workers::stop() {
  // Each thread notices within one poll interval.
  stopping_ = true;
  for (auto& w : threads_)
    if (w.thread.joinable()) w.thread.join();
  threads_.clear();
}

}  // namespace cb
