// `test_gui [models|prompt|server|e2e] [QTest options]`: no suite name runs all.
#include <QApplication>
#include <QTest>
#include <chrono>
#include <cstring>

#include "gui/text.h"
#include "gui_tests.h"

namespace cb::gui::test {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::shared_ptr<const ProcessInfo> proc(uint64_t procId, int32_t pid, const std::string& comm) {
  auto p = std::make_shared<ProcessInfo>();
  p->proc_id = procId;
  p->pid = pid;
  p->ppid = pid - 1;
  p->comm = comm;
  p->exe = "/usr/bin/" + comm;
  p->argv = {comm};
  return p;
}

EventRow makeEvent(uint64_t seq, Action a, const std::string& path, std::shared_ptr<const ProcessInfo> p,
                   Decision verdict, bool allowed, const std::string& rule) {
  EventRow r;
  r.seq = seq;
  r.ev.ts_ns = nowNs();
  r.ev.pid = p ? p->pid : 0;
  r.ev.tid = r.ev.pid;
  r.ev.action = a;
  r.ev.syscall = "unlinkat";
  r.ev.path = path;
  r.ev.proc = std::move(p);
  r.verdict.decision = verdict;
  r.verdict.rule_id = rule;
  r.allowed = allowed;
  r.result_errno = allowed ? 0 : EPERM;
  return r;
}

proto::AskMsg ask(uint64_t id, const std::string& path, int64_t deadlineFromNowMs, const std::string& rule,
                  const std::string& comm) {
  proto::AskMsg a;
  a.ask_id = id;
  a.session = 7;
  a.row = makeEvent(100 + id, Action::FileDelete, path, proc(3, 4003, comm), Decision::Ask, false, rule);
  a.row.verdict.message = "think twice";
  a.chain = {{4003, comm, {comm, path}}, {4002, "sh", {"sh", "-c", comm + " " + path}}, {4001, "agent", {"agent"}}};
  a.summary = "delete 1 file";
  a.asked_ns = nowNs();
  a.deadline_ns = a.asked_ns + deadlineFromNowMs * 1000000;
  return a;
}

}  // namespace cb::gui::test

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  cb::gui::applyStyle();
  const char* which = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  // QTest sees the arguments after the suite name.
  std::vector<char*> args{argv[0]};
  for (int i = *which ? 2 : 1; i < argc; ++i) args.push_back(argv[i]);
  int n = static_cast<int>(args.size());
  auto want = [&](const char* s) { return !*which || !strcmp(which, s); };
  int rc = 0;
  if (want("models")) {
    cb::gui::test::ModelsTest t;
    rc |= QTest::qExec(&t, n, args.data());
  }
  if (want("prompt")) {
    cb::gui::test::PromptTest t;
    rc |= QTest::qExec(&t, n, args.data());
  }
  if (want("server")) {
    cb::gui::test::ServerTest t;
    rc |= QTest::qExec(&t, n, args.data());
  }
  if (want("e2e")) {
    cb::gui::test::EndToEndTest t;
    rc |= QTest::qExec(&t, n, args.data());
  }
  return rc;
}
