// A session recorded the way the supervisor will record it once it keeps:
// per allowed change of a real file, the real Keeper is called first (with
// the event's seq and the acting process's proc_id), then the change is
// made, then the event is written through db::Writer with the processes.
// For tests and the GUI's screenshots; no test framework inside: the first
// failure is remembered (error()) and makes the later calls no-ops.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "db/store.h"
#include "keep/keeper.h"

namespace cb::keep::test {

std::string random_uuid();

class SessionRecorder {
 public:
  // Begins a session in the database at `db_path` (created if needed),
  // with `argv` as its root process, working in `cwd`.
  SessionRecorder(const std::string& db_path, const std::string& cwd, std::vector<std::string> argv,
                  const Limits& limits = {});
  ~SessionRecorder();

  int64_t id() const { return id_; }
  const std::string& uuid() const { return uuid_; }
  uint64_t root() const { return root_; }
  // The first failure, "" when none.
  const std::string& error() const { return error_; }

  // A process below `parent`; a command is a child of the root.
  uint64_t process(uint64_t parent, std::vector<std::string> argv);
  uint64_t command(std::vector<std::string> argv) { return process(root_, std::move(argv)); }

  std::string p(const std::string& rel) const { return cwd_ + "/" + rel; }

  // The changes, each kept first (paths relative to cwd).
  void unlink(uint64_t proc, const std::string& rel);  // a file or an empty directory
  void rm_rf(uint64_t proc, const std::string& rel);   // entries first, as rm does
  void create(uint64_t proc, const std::string& rel, std::string_view data, uint32_t mode = 0644);
  void mkdir(uint64_t proc, const std::string& rel);
  void overwrite(uint64_t proc, const std::string& rel, std::string_view data);  // open(O_TRUNC), write
  void truncate0(uint64_t proc, const std::string& rel);
  void rename(uint64_t proc, const std::string& from, const std::string& to);
  // sed -i: a temporary file beside it with the edit, renamed over it.
  void sed_i(uint64_t proc, const std::string& rel, const std::string& from, const std::string& to);
  void chmod(uint64_t proc, const std::string& rel, uint32_t mode);
  // A delete the keeper was not asked to keep (outside the kept directories).
  void unkept_delete(uint64_t proc, const std::string& abs_path);

  // The keeper's finish, then the session's end.
  void end();

 private:
  bool fail(const std::string& what);
  uint64_t next() { return ++seq_; }
  Context ctx(uint64_t proc, uint64_t seq, Op op, const std::string& rel) const;
  EventRow row(uint64_t proc, uint64_t seq, cb::Action a, const std::string& path, const std::string& target, bool dir,
               const char* syscall);
  void record(uint64_t proc, uint64_t seq, cb::Action a, const std::string& rel, const std::string& to, bool dir,
              const char* syscall);

  std::string cwd_, uuid_, error_;
  std::unique_ptr<db::Writer> writer_;
  std::unique_ptr<Keeper> keeper_;
  int64_t id_ = 0;
  uint64_t root_ = 0, procs_ = 0, seq_ = 0;
  std::map<uint64_t, std::shared_ptr<ProcessInfo>> infos_;
};

}  // namespace cb::keep::test
