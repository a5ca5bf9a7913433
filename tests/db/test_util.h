// Shared by the store tests: a temporary directory, records with plausible
// contents, and a way to run code in a child process.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "db/store.h"

namespace cb::db::test {

// A fresh directory, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::unique_ptr<Writer> open_writer(const std::string& path);
std::unique_ptr<Reader> open_reader(const std::string& path);

SessionStart session_start(const std::string& name = "test");
std::shared_ptr<const ProcessInfo> process(uint64_t proc_id, int32_t pid, std::string comm,
                                           std::vector<std::string> argv = {});
ProcessRow process_row(const ProcessInfo& p, uint64_t parent = 0);
EventRow event(uint64_t seq, Action action, std::string path, std::shared_ptr<const ProcessInfo> proc = nullptr);
EventRow denied(EventRow r, std::string rule);

// Runs `body` in a forked child and returns its exit status (or 128+signal).
// The child must not use gtest assertions: it reports through its status.
int run_in_child(const std::function<int()>& body);

std::string current_boot_id();
int64_t now_ns();

}  // namespace cb::db::test
