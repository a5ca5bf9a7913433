#include "tests/keep/recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "keep/fsutil.h"

namespace cb::keep::test {
namespace {

std::string read_all_of(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  auto r = read_all(fd.get());
  return r ? *r : std::string();
}

bool write_all_to(const std::string& path, std::string_view data, uint32_t mode, int flags) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags, mode));
  if (!fd) return false;
  if (::write(fd.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size())) return false;
  return ::fchmod(fd.get(), mode) == 0;
}

std::string why(const std::string& what) { return what + ": " + std::strerror(errno); }

}  // namespace

std::string random_uuid() {
  std::random_device rd;
  char buf[40];
  snprintf(buf, sizeof buf, "%08x-%04x-4%03x-a%03x-%08x%04x", rd(), rd() & 0xffff, rd() & 0xfff, rd() & 0xfff, rd(),
           rd() & 0xffff);
  return buf;
}

SessionRecorder::SessionRecorder(const std::string& db_path, const std::string& cwd, std::vector<std::string> argv,
                                 const Limits& limits)
    : cwd_(cwd), uuid_(random_uuid()) {
  auto w = db::Writer::open(db_path);
  if (!w) {
    fail("open the audit database: " + w.error().message);
    return;
  }
  writer_ = std::move(*w);
  SessionStart s;
  s.uuid = uuid_;
  s.argv = argv;
  s.cwd = cwd;
  s.uid = getuid();
  s.user = "dev";
  s.hostname = "workstation";
  s.started_ns = now_ns();
  s.supervisor_pid = getpid();
  auto id = writer_->begin_session(s);
  if (!id) {
    fail("begin the session: " + id.error().message);
    return;
  }
  id_ = *id;
  auto k = Keeper::open(Store::dir_beside(db_path), uuid_, limits);
  if (!k) {
    fail("open the keeper: " + k.error().message);
    return;
  }
  keeper_ = std::move(*k);
  root_ = process(0, std::move(argv));
}

SessionRecorder::~SessionRecorder() = default;

bool SessionRecorder::fail(const std::string& what) {
  if (error_.empty()) error_ = what;
  return false;
}

uint64_t SessionRecorder::process(uint64_t parent, std::vector<std::string> argv) {
  uint64_t proc_id = ++procs_;
  auto info = std::make_shared<ProcessInfo>();
  info->pid = static_cast<int32_t>(40000 + proc_id);
  info->proc_id = proc_id;
  info->comm = argv.empty() ? "?" : argv[0].substr(0, 15);
  info->argv = argv;
  info->cwd = cwd_;
  infos_[proc_id] = info;
  if (!writer_) return proc_id;
  ProcessRow row;
  row.proc_id = proc_id;
  row.parent_proc_id = parent;
  row.pid = info->pid;
  row.ppid = parent && infos_.count(parent) ? infos_[parent]->pid : 1;
  row.uid = getuid();
  row.comm = info->comm;
  row.argv = std::move(argv);
  row.cwd = cwd_;
  row.started_ns = now_ns();
  writer_->add_process(id_, row);
  return proc_id;
}

Context SessionRecorder::ctx(uint64_t proc, uint64_t seq, Op op, const std::string& rel) const {
  Context c;
  c.op = op;
  c.path = p(rel);
  c.proc = proc;
  c.event = seq;
  c.ts_ns = now_ns();
  return c;
}

EventRow SessionRecorder::row(uint64_t proc, uint64_t seq, cb::Action a, const std::string& path,
                              const std::string& target, bool dir, const char* syscall) {
  EventRow r;
  r.seq = seq;
  r.ev.ts_ns = now_ns();
  r.ev.pid = infos_[proc] ? infos_[proc]->pid : 0;
  r.ev.tid = r.ev.pid;
  r.ev.action = a;
  r.ev.syscall = syscall;
  r.ev.path = path;
  r.ev.target = target;
  r.ev.is_dir = dir;
  r.ev.proc = infos_[proc];
  r.layer = Layer::Notify;
  r.result_errno = 0;
  return r;
}

void SessionRecorder::record(uint64_t proc, uint64_t seq, cb::Action a, const std::string& rel, const std::string& to,
                             bool dir, const char* syscall) {
  writer_->add_event(id_, row(proc, seq, a, p(rel), to.empty() ? "" : p(to), dir, syscall));
}

void SessionRecorder::unlink(uint64_t proc, const std::string& rel) {
  if (!error_.empty()) return;
  struct stat st;
  if (lstat(p(rel).c_str(), &st) != 0) return (void)fail(why("lstat " + rel));
  bool dir = S_ISDIR(st.st_mode);
  uint64_t seq = next();
  auto parent = open_parent(p(rel));
  if (!parent) return (void)fail(rel + ": " + parent.error().message);
  Snapshot s = keeper_->keep_before_unlink(parent->fd.get(), parent->leaf.c_str(),
                                           ctx(proc, seq, dir ? Op::Rmdir : Op::Unlink, rel));
  if (s.kept == Kept::NotKept) return (void)fail(rel + " not kept: " + s.reason);
  if ((dir ? ::rmdir(p(rel).c_str()) : ::unlink(p(rel).c_str())) != 0) return (void)fail(why("delete " + rel));
  record(proc, seq, cb::Action::FileDelete, rel, "", dir, "unlinkat");
}

void SessionRecorder::rm_rf(uint64_t proc, const std::string& rel) {
  if (!error_.empty()) return;
  struct stat st;
  if (lstat(p(rel).c_str(), &st) != 0) return (void)fail(why("lstat " + rel));
  if (S_ISDIR(st.st_mode)) {
    UniqueFd d(::open(p(rel).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto names = list_dir(d.get());
    if (!names) return (void)fail(rel + ": " + names.error().message);
    for (const std::string& n : *names) rm_rf(proc, rel + "/" + n);
  }
  unlink(proc, rel);
}

void SessionRecorder::create(uint64_t proc, const std::string& rel, std::string_view data, uint32_t mode) {
  if (!error_.empty()) return;
  uint64_t seq = next();
  auto parent = open_parent(p(rel));
  if (!parent) return (void)fail(rel + ": " + parent.error().message);
  keeper_->note_created(parent->fd.get(), ctx(proc, seq, Op::Create, rel));
  if (!write_all_to(p(rel), data, mode, O_CREAT | O_EXCL)) return (void)fail(why("create " + rel));
  record(proc, seq, cb::Action::FileCreate, rel, "", false, "openat");
}

void SessionRecorder::mkdir(uint64_t proc, const std::string& rel) {
  if (!error_.empty()) return;
  uint64_t seq = next();
  auto parent = open_parent(p(rel));
  if (!parent) return (void)fail(rel + ": " + parent.error().message);
  keeper_->note_created(parent->fd.get(), ctx(proc, seq, Op::Create, rel));
  if (::mkdir(p(rel).c_str(), 0755) != 0) return (void)fail(why("mkdir " + rel));
  record(proc, seq, cb::Action::FileCreate, rel, "", true, "mkdirat");
}

void SessionRecorder::overwrite(uint64_t proc, const std::string& rel, std::string_view data) {
  if (!error_.empty()) return;
  uint64_t seq = next();
  auto parent = open_parent(p(rel));
  if (!parent) return (void)fail(rel + ": " + parent.error().message);
  Snapshot s =
      keeper_->keep_before_overwrite(parent->fd.get(), parent->leaf.c_str(), ctx(proc, seq, Op::OpenTrunc, rel));
  if (s.kept == Kept::NotKept) return (void)fail(rel + " not kept: " + s.reason);
  UniqueFd fd(::open(p(rel).c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
  if (!fd || ::write(fd.get(), data.data(), data.size()) != static_cast<ssize_t>(data.size()))
    return (void)fail(why("overwrite " + rel));
  record(proc, seq, cb::Action::FileTruncate, rel, "", false, "openat");
}

void SessionRecorder::truncate0(uint64_t proc, const std::string& rel) {
  if (!error_.empty()) return;
  uint64_t seq = next();
  auto parent = open_parent(p(rel));
  if (!parent) return (void)fail(rel + ": " + parent.error().message);
  Snapshot s =
      keeper_->keep_before_overwrite(parent->fd.get(), parent->leaf.c_str(), ctx(proc, seq, Op::Truncate, rel));
  if (s.kept == Kept::NotKept) return (void)fail(rel + " not kept: " + s.reason);
  if (::truncate(p(rel).c_str(), 0) != 0) return (void)fail(why("truncate " + rel));
  record(proc, seq, cb::Action::FileTruncate, rel, "", false, "truncate");
}

void SessionRecorder::rename(uint64_t proc, const std::string& from, const std::string& to) {
  if (!error_.empty()) return;
  uint64_t seq = next();
  auto src = open_parent(p(from));
  auto dst = open_parent(p(to));
  if (!src || !dst) return (void)fail("rename " + from + " " + to + ": a directory is missing");
  keeper_->keep_before_entries_change(src->fd.get(), ctx(proc, seq, Op::Entries, from));
  struct stat st;
  if (lstat(p(to).c_str(), &st) == 0) {
    Snapshot s = keeper_->keep_before_unlink(dst->fd.get(), dst->leaf.c_str(), ctx(proc, seq, Op::RenameOver, to));
    if (s.kept == Kept::NotKept) return (void)fail(to + " not kept: " + s.reason);
  } else {
    keeper_->note_created(dst->fd.get(), ctx(proc, seq, Op::Create, to));
  }
  bool dir = lstat(p(from).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (::rename(p(from).c_str(), p(to).c_str()) != 0) return (void)fail(why("rename " + from));
  record(proc, seq, cb::Action::FileRename, from, to, dir, "renameat2");
}

void SessionRecorder::sed_i(uint64_t proc, const std::string& rel, const std::string& from, const std::string& to) {
  if (!error_.empty()) return;
  std::string text = read_all_of(p(rel));
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  std::string dir = rel.find('/') == std::string::npos ? "" : rel.substr(0, rel.rfind('/') + 1);
  std::string tmp = dir + "sed" + std::to_string(seq_ + 1);
  struct stat st;
  if (::stat(p(rel).c_str(), &st) != 0) return (void)fail(why("stat " + rel));
  create(proc, tmp, text, st.st_mode & 07777);
  rename(proc, tmp, rel);
}

void SessionRecorder::chmod(uint64_t proc, const std::string& rel, uint32_t mode) {
  if (!error_.empty()) return;
  uint64_t seq = next();
  auto parent = open_parent(p(rel));
  if (!parent) return (void)fail(rel + ": " + parent.error().message);
  Snapshot s = keeper_->keep_metadata(parent->fd.get(), parent->leaf.c_str(), ctx(proc, seq, Op::Chmod, rel));
  if (s.kept == Kept::NotKept) return (void)fail(rel + " not kept: " + s.reason);
  if (::chmod(p(rel).c_str(), mode) != 0) return (void)fail(why("chmod " + rel));
  record(proc, seq, cb::Action::FileAttr, rel, "", false, "fchmodat");
}

void SessionRecorder::unkept_delete(uint64_t proc, const std::string& abs) {
  if (!error_.empty()) return;
  uint64_t seq = next();
  if (::unlink(abs.c_str()) != 0) return (void)fail(why("unlink " + abs));
  writer_->add_event(id_, row(proc, seq, cb::Action::FileDelete, abs, "", false, "unlinkat"));
}

void SessionRecorder::end() {
  if (keeper_) {
    auto f = keeper_->finish();
    if (!f) fail("keeper finish: " + f.error().message);
    keeper_.reset();
  }
  if (writer_) {
    auto e = writer_->end_session(id_, SessionEnd{now_ns(), 0, 0, SessionState::Ended});
    if (!e) fail("end the session: " + e.error().message);
    writer_.reset();
  }
}

}  // namespace cb::keep::test
