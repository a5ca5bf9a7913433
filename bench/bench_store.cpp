// bench_store: how fast the audit store takes events, and whether it keeps
// them all.
//
//   bench_store [--events N] [--threads T] [--db FILE]
//
// T producer threads push N events (agent-like: paths under a project tree,
// mostly allowed, some denied, a few renames) as fast as they can; the figure
// is N divided by the time from the first add_event() to the end of flush(),
// i.e. what the writer thread sustains.  The database is then read back and
// the run fails (exit 1) unless every event is there.
#include <getopt.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "db/store.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t total = 1'000'000;
  int threads = 2;
  std::string path;
  static const option kOptions[] = {{"events", required_argument, nullptr, 'n'},
                                    {"threads", required_argument, nullptr, 't'},
                                    {"db", required_argument, nullptr, 'd'},
                                    {nullptr, 0, nullptr, 0}};
  for (int c; (c = getopt_long(argc, argv, "n:t:d:", kOptions, nullptr)) != -1;) {
    if (c == 'n')
      total = std::stoull(optarg);
    else if (c == 't')
      threads = std::max(1, std::stoi(optarg));
    else if (c == 'd')
      path = optarg;
    else {
      fprintf(stderr, "usage: bench_store [--events N] [--threads T] [--db FILE]\n");
      return 2;
    }
  }
  std::string tmpdir;
  if (path.empty()) {
    char tmpl[] = "/tmp/bench_store.XXXXXX";
    if (!mkdtemp(tmpl)) return perror("mkdtemp"), 1;
    tmpdir = tmpl;
    path = tmpdir + "/audit.db";
  }

  auto writer = cb::db::Writer::open(path);
  if (!writer) return fprintf(stderr, "%s\n", writer.error().message.c_str()), 1;
  cb::db::Writer& w = **writer;

  cb::SessionStart start;
  start.uuid = "bench";
  start.argv = {"bench_store"};
  start.cwd = "/home/user/project";
  start.started_ns = wall_ns();
  start.supervisor_pid = getpid();
  auto session = w.begin_session(start);
  if (!session) return fprintf(stderr, "%s\n", session.error().message.c_str()), 1;
  int64_t sid = *session;

  // A few dozen processes, as a build would have.
  constexpr int kProcs = 64;
  std::vector<std::shared_ptr<const cb::ProcessInfo>> procs;
  for (int i = 0; i < kProcs; ++i) {
    auto p = std::make_shared<cb::ProcessInfo>();
    p->pid = 10000 + i;
    p->ppid = 10000;
    p->proc_id = static_cast<uint64_t>(i + 1);
    p->comm = i % 3 == 0 ? "cc1" : (i % 3 == 1 ? "make" : "python3");
    p->exe = "/usr/bin/" + p->comm;
    p->argv = {p->comm, "-c", "src/module/file.c"};
    procs.push_back(p);
    w.add_process(sid, cb::ProcessRow{p->proc_id, 1, p->pid, p->ppid, 1000, p->comm, p->exe, p->argv,
                                      "/home/user/project", wall_ns()});
  }

  auto t0 = Clock::now();
  std::vector<std::thread> producers;
  for (int t = 0; t < threads; ++t) {
    producers.emplace_back([&, t] {
      uint64_t begin = total * t / threads, end = total * (t + 1) / threads;
      for (uint64_t i = begin; i < end; ++i) {
        cb::EventRow r;
        r.seq = i + 1;
        cb::Event& ev = r.ev;
        ev.ts_ns = wall_ns();
        const auto& p = procs[i % kProcs];
        ev.pid = p->pid;
        ev.tid = p->pid;
        ev.proc = p;
        ev.path = "/home/user/project/src/module" + std::to_string(i % 97) + "/file" + std::to_string(i % 1009) + ".c";
        switch (i % 10) {
          case 0: ev.action = cb::Action::FileDelete, ev.syscall = "unlinkat"; break;
          case 1:
            ev.action = cb::Action::FileRename, ev.syscall = "renameat2";
            ev.target = ev.path + ".tmp";
            break;
          default: ev.action = cb::Action::FileWrite, ev.syscall = "openat"; break;
        }
        ev.syscall_nr = 257;
        ev.flags = 0x241;
        if (i % 50 == 0) {
          r.verdict.decision = cb::Decision::Deny;
          r.verdict.rule_id = "protect-src";
          r.verdict.message = "protected source tree";
          r.allowed = false;
        }
        r.layer = cb::Layer::Notify;
        r.result_errno = r.allowed ? 0 : 1;
        w.add_event(sid, std::move(r));
      }
    });
  }
  for (auto& t : producers) t.join();
  double enqueue_s = seconds_since(t0);
  auto flushed = w.flush();
  double total_s = seconds_since(t0);
  if (!flushed) return fprintf(stderr, "%s\n", flushed.error().message.c_str()), 1;
  auto stats = w.stats();
  cb::SessionEnd end;
  end.ended_ns = wall_ns();
  end.exit_status = 0;
  (void)w.end_session(sid, end);

  auto reader = cb::db::Reader::open(path);
  if (!reader) return fprintf(stderr, "%s\n", reader.error().message.c_str()), 1;
  auto summary = (*reader)->session(sid);
  if (!summary) return fprintf(stderr, "%s\n", summary.error().message.c_str()), 1;

  // Per-thread CPU time, to tell a busy writer from a waiting one (on a
  // shared machine the wall clock also measures everyone else).
  double writer_cpu = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "stat");
    std::string line;
    std::getline(in, line);
    auto close = line.rfind(')');
    auto open = line.find('(');
    if (close == std::string::npos || open == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    std::string name = line.substr(open + 1, close - open - 1);
    printf("thread %-15s user %.2f s, system %.2f s\n", name.c_str(), utime / hz, stime / hz);
    if (name == "cb-audit") writer_cpu = (utime + stime) / hz;
  }
  printf("events:        %llu from %d threads\n", static_cast<unsigned long long>(total), threads);
  printf("enqueue:       %.3f s (%.0f events/s on the producers' side)\n", enqueue_s,
         static_cast<double>(total) / enqueue_s);
  printf("committed:     %.3f s -> %.0f events/s\n", total_s, static_cast<double>(total) / total_s);
  if (writer_cpu > 0)
    printf("writer CPU:    %.2f us/event (%.0f events/s if it had a core to itself)\n",
           writer_cpu * 1e6 / static_cast<double>(total), static_cast<double>(total) / writer_cpu);
  printf("in database:   %llu (%s), commit errors %llu\n", static_cast<unsigned long long>(summary->events),
         summary->events == total ? "none lost" : "LOST EVENTS", static_cast<unsigned long long>(stats.errors));
  std::error_code ec;
  auto size = [&](const std::string& f) {
    auto n = std::filesystem::file_size(f, ec);
    return ec ? 0.0 : static_cast<double>(n) / (1 << 20);
  };
  printf("file size:     %.1f MiB + %.1f MiB WAL\n", size(path), size(path + "-wal"));
  writer->reset();
  if (!tmpdir.empty()) std::filesystem::remove_all(tmpdir, ec);
  return summary->events == total ? 0 : 1;
}
