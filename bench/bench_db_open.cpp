// bench_db_open: the audit store's part of a session's start and end, timed
// step by step, alone and with many sessions starting at once.
//
//   bench_db_open [--db FILE] [--runs N] [--procs P] [--sessions S]
//
// Each run is a process of its own (as `cottonbox run` is) that calls
// Writer::create_files, Writer::open, begin_session, one event and
// end_session, then closes the store.  P processes start together, N runs
// in all; every run's steps are printed as one line
//   run=K create_us=.. open_us=.. begin_us=.. end_us=.. close_us=.. status=0
// and a summary (medians) at the end.  The database is left in place when
// --db is given: run it twice for "new" and "existing".  --sessions S first
// puts S ended sessions into the file (a database that has been in use).
// Exits 1 if any run failed or any session is missing from the file.
#include <getopt.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "db/store.h"

namespace {

using Clock = std::chrono::steady_clock;

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

cb::SessionStart start_row(const std::string& name) {
  cb::SessionStart s;
  s.uuid = name;
  s.name = name;
  s.argv = {"/bin/true"};
  s.cwd = "/home/user/project";
  s.started_ns = wall_ns();
  s.supervisor_pid = getpid();
  s.tracer = "seccomp";
  return s;
}

struct Times {
  int64_t create_us = 0, open_us = 0, begin_us = 0, end_us = 0, close_us = 0;
};

// One session's store work; the times go up a pipe.
int one_run(const std::string& path, int run, int out_fd) {
  prctl(PR_SET_NAME, "cottonbox");  // a live supervisor to the other runs
  Times t;
  auto mark = [last = Clock::now()](int64_t& slot) mutable {
    auto now = Clock::now();
    slot = std::chrono::duration_cast<std::chrono::microseconds>(now - last).count();
    last = now;
  };
  if (auto r = cb::db::Writer::create_files(path); !r)
    return fprintf(stderr, "create: %s\n", r.error().message.c_str()), 10;
  mark(t.create_us);
  auto w = cb::db::Writer::open(path);
  if (!w) return fprintf(stderr, "open: %s\n", w.error().message.c_str()), 11;
  mark(t.open_us);
  auto sid = (*w)->begin_session(start_row("run-" + std::to_string(run)));
  if (!sid) return fprintf(stderr, "begin: %s\n", sid.error().message.c_str()), 12;
  mark(t.begin_us);
  cb::EventRow e;
  e.ev.action = cb::Action::FileWrite;
  e.ev.path = "/home/user/project/out.txt";
  e.ev.ts_ns = wall_ns();
  e.seq = 1;
  (*w)->add_event(*sid, std::move(e));
  if (auto r = (*w)->end_session(*sid, cb::SessionEnd{wall_ns(), 0, 0, cb::SessionState::Ended}); !r)
    return fprintf(stderr, "end: %s\n", r.error().message.c_str()), 13;
  mark(t.end_us);
  w->reset();
  mark(t.close_us);
  return write(out_fd, &t, sizeof t) == sizeof t ? 0 : 14;
}

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  int runs = 20, procs = 1, prefill = 0;
  static const option kOptions[] = {{"db", required_argument, nullptr, 'd'},
                                    {"runs", required_argument, nullptr, 'n'},
                                    {"procs", required_argument, nullptr, 'p'},
                                    {"sessions", required_argument, nullptr, 's'},
                                    {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "d:n:p:s:", kOptions, nullptr)) != -1;) {
    if (c == 'd')
      path = optarg;
    else if (c == 'n')
      runs = std::max(1, atoi(optarg));
    else if (c == 'p')
      procs = std::max(1, atoi(optarg));
    else if (c == 's')
      prefill = std::max(0, atoi(optarg));
    else
      return fprintf(stderr, "usage: bench_db_open [--db FILE] [--runs N] [--procs P] [--sessions S]\n"), 2;
  }
  std::string tmpdir;
  if (path.empty()) {
    char tmpl[] = "/tmp/bench_db_open.XXXXXX";
    if (!mkdtemp(tmpl)) return perror("mkdtemp"), 1;
    tmpdir = tmpl;
    path = tmpdir + "/audit.db";
  }
  if (prefill > 0) {
    // Forked children must not inherit an open connection: made in one.
    pid_t pid = fork();
    if (pid == 0) {
      auto w = cb::db::Writer::open(path);
      if (!w) _exit(1);
      for (int i = 0; i < prefill; ++i) {
        auto sid = (*w)->begin_session(start_row("old-" + std::to_string(i)));
        if (!sid) _exit(1);
        (*w)->end_session(*sid, cb::SessionEnd{wall_ns(), 0, 0, cb::SessionState::Ended});
      }
      _exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0) return fprintf(stderr, "prefill failed\n"), 1;
  }

  int pipefd[2];
  if (pipe(pipefd) != 0) return perror("pipe"), 1;
  std::vector<Times> done;
  int failed = 0, next = 0;
  auto t0 = Clock::now();
  while (next < runs) {
    // A wave of P processes released together.
    int go[2];
    if (pipe(go) != 0) return perror("pipe"), 1;
    std::vector<pid_t> kids;
    for (int k = 0; k < procs && next < runs; ++k, ++next) {
      pid_t pid = fork();
      if (pid == 0) {
        close(go[1]);
        char c;
        (void)!read(go[0], &c, 1);
        _exit(one_run(path, next, pipefd[1]));
      }
      kids.push_back(pid);
    }
    close(go[0]);
    close(go[1]);
    for (pid_t pid : kids) {
      int st = 0;
      waitpid(pid, &st, 0);
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        ++failed;
        continue;
      }
      Times t;
      if (read(pipefd[0], &t, sizeof t) != sizeof t) {
        ++failed;
        continue;
      }
      printf("run=%zu create_us=%lld open_us=%lld begin_us=%lld end_us=%lld close_us=%lld status=0\n", done.size(),
             (long long)t.create_us, (long long)t.open_us, (long long)t.begin_us, (long long)t.end_us,
             (long long)t.close_us);
      done.push_back(t);
    }
  }
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  auto col = [&](int64_t Times::*f) {
    std::vector<int64_t> v;
    for (auto& t : done) v.push_back(t.*f);
    return median(v);
  };
  printf(
      "summary: runs=%d procs=%d failed=%d wall_s=%.3f starts_per_s=%.1f median_us create=%lld open=%lld begin=%lld "
      "end=%lld close=%lld\n",
      runs, procs, failed, wall, runs / wall, (long long)col(&Times::create_us), (long long)col(&Times::open_us),
      (long long)col(&Times::begin_us), (long long)col(&Times::end_us), (long long)col(&Times::close_us));

  size_t expected = static_cast<size_t>(runs + prefill);
  size_t found = 0;
  if (auto reader = cb::db::Reader::open(path))
    if (auto all = (*reader)->sessions()) found = all->size();
  if (found < expected)
    fprintf(stderr, "missing sessions: %zu of %zu in %s\n", expected - found, expected, path.c_str());
  if (!tmpdir.empty()) std::filesystem::remove_all(tmpdir);
  return failed || found < expected ? 1 : 0;
}
