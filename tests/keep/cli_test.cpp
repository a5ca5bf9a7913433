// `cottonbox changes`, `cottonbox undo` and `cottonbox gc`, the real binary,
// on sessions built the way the supervisor will build them once it keeps:
// the real Keeper called before each change of real files (with the
// event's seq and the acting process's proc_id), the real change made, and
// the audit rows (session, processes, events) written through db::Writer.
// Then the commands run, and what a user would check is checked: the files
// byte for byte (content, mode, owner, times, xattrs), what was refused and
// why, the exit status, and the undo in the audit database.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "db/store.h"
#include "keep/fsutil.h"
#include "keep/keeper.h"
#include "tests/keep/recorder.h"
#include "tests/keep/test_util.h"

namespace cb::keep {
namespace {

using test::FullState;
using test::state_of;
using test::write_file;

struct Ran {
  int status = -1;
  std::string out, err;
};

Ran run(const std::vector<std::string>& args, const std::string& cwd) {
  std::string outp = cwd + "/../.out", errp = cwd + "/../.err";
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str())) _exit(126);
    int o = open(outp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> a;
    static std::string bin = COTTONBOX_BIN;
    a.push_back(bin.data());
    for (const std::string& s : args) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  Ran r;
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  std::ifstream o(outp), e(errp);
  std::stringstream so, se;
  so << o.rdbuf();
  se << e.rdbuf();
  r.out = so.str();
  r.err = se.str();
  return r;
}

class UndoCli : public ::testing::Test {
 protected:
  void SetUp() override {
    work_ = tmp_ / "project";
    db_ = tmp_ / "data/audit.db";
    ASSERT_EQ(::mkdir((tmp_ / "data").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(work_.c_str(), 0755), 0);
    xattrs_ = test::user_xattrs(work_).available;
  }

  std::string p(const std::string& rel) const { return work_ + "/" + rel; }
  std::string s(int64_t id) const { return std::to_string(id); }

  Ran cb(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(db_);
    return run(args, work_);
  }

  // A project: sources in nested directories with their own modes, times
  // and (where the filesystem has them) xattrs, a README, a notes file.
  void make_project() {
    ASSERT_EQ(::mkdir(p("src").c_str(), 0750), 0);
    ASSERT_EQ(::mkdir(p("src/lib").c_str(), 0700), 0);
    write_file(p("src/main.c"), "int main() { return helper(); }\n" + test::random_bytes(3000, 1), 0644);
    write_file(p("src/lib/helper.c"), "int helper() { return 0; }\n", 0600);
    write_file(p("src/lib/blob.bin"), test::random_bytes(200000, 2), 0755);
    ASSERT_EQ(symlink("lib/helper.c", p("src/link").c_str()), 0);
    for (int i = 0; i < 5; ++i)
      write_file(p("doc" + std::to_string(i) + ".md"), "colour " + std::to_string(i) + " colour\n", 0644);
    write_file(p("notes.txt"), "my uncommitted notes\n", 0640);
    write_file(p("data.csv"), test::random_bytes(5000, 3), 0644);
    write_file(p("old.txt"), "the old name\n", 0644);
    write_file(p("config.ini"), "[a]\nx=1\n", 0644);
    if (xattrs_) {
      ASSERT_EQ(setxattr(p("src/main.c").c_str(), "user.origin", "hand-written", 12, 0), 0);
      ASSERT_EQ(setxattr(p("notes.txt").c_str(), "user.tag", "\x01\xff", 2, 0), 0);
    }
    // Times long ago, atime in the future (reading moves nothing under
    // relatime); deepest first, then the directories.
    int i = 0;
    for (const char* rel :
         {"src/lib/helper.c", "src/lib/blob.bin", "src/lib", "src/main.c", "src/link", "src", "doc0.md", "doc1.md",
          "doc2.md", "doc3.md", "doc4.md", "notes.txt", "data.csv", "old.txt", "config.ini"}) {
      test::set_times(p(rel), time(nullptr) + 3600, 100 + i, 1500000000 + i, 987654321);
      ++i;
    }
    test::set_times(work_, time(nullptr) + 3600, 5, 1400000000, 6);
  }

  // rm -rf src; sed -i over the docs; mv old.txt config.ini (over it);
  // a script rewriting data.csv; truncate -s0 notes.txt; chmod -R on the
  // docs; a new file; and a delete outside the kept directories.
  int64_t agent_session(std::map<std::string, uint64_t>* commands = nullptr) {
    test::SessionRecorder sup(db_, work_, {"agent", "--yolo"}, test::test_limits());
    uint64_t rm = sup.command({"rm", "-rf", "src"});
    sup.rm_rf(rm, "src");
    uint64_t sed =
        sup.command({"sed", "-i", "s/colour/color/g", "doc0.md", "doc1.md", "doc2.md", "doc3.md", "doc4.md"});
    for (int i = 0; i < 5; ++i) sup.sed_i(sed, "doc" + std::to_string(i) + ".md", "colour", "color");
    uint64_t mv = sup.command({"mv", "old.txt", "config.ini"});
    sup.rename(mv, "old.txt", "config.ini");
    uint64_t py = sup.command({"python3", "rewrite.py"});
    uint64_t py_child = sup.process(py, {"python3", "-c", "rewrite"});  // below the command
    sup.overwrite(py_child, "data.csv", "a,b\n1,2\n");
    uint64_t tr = sup.command({"truncate", "-s0", "notes.txt"});
    sup.truncate0(tr, "notes.txt");
    uint64_t ch = sup.command({"chmod", "-R", "go-r", "."});
    for (int i = 0; i < 5; ++i) sup.chmod(ch, "doc" + std::to_string(i) + ".md", 0600);
    uint64_t agent = sup.root();  // the agent writes a file itself
    sup.create(agent, "NEW.md", "written by the agent\n");
    sup.unkept_delete(agent, outside_);
    sup.end();
    EXPECT_EQ(sup.error(), "");
    if (commands) *commands = {{"rm", rm}, {"sed", sed}, {"mv", mv}, {"py", py}, {"truncate", tr}, {"chmod", ch}};
    return sup.id();
  }

  test::TempDir tmp_;
  std::string work_, db_;
  std::string outside_;
  bool xattrs_ = false;
};

TEST_F(UndoCli, TheWholeSessionComesBackByteForByteAndTheUndoIsRecorded) {
  make_project();
  outside_ = tmp_ / "outside.log";
  write_file(outside_, "outside the kept directories");
  auto before = test::tree_state(work_);
  std::map<std::string, uint64_t> cmds;
  int64_t id = agent_session(&cmds);

  Ran ch = cb({"changes", "--session", s(id)});
  ASSERT_EQ(ch.status, 0) << ch.err;
  // Grouped by command, with whether each can be undone.
  for (const std::string& want : std::vector<std::string>{
           "command " + std::to_string(cmds["rm"]) + " (pid ", std::string("rm -rf src"),
           "deleted    kept        " + p("src/lib/blob.bin"), "replaced   kept        " + p("doc3.md"),
           "renamed    moves back  " + p("old.txt") + " -> " + p("config.ini"),
           "truncated  kept        " + p("data.csv"), "mode       kept        " + p("doc0.md"),
           "created    created     " + p("NEW.md"), "deleted    not kept    " + outside_ + ": no keep record"}) {
    EXPECT_NE(ch.out.find(want), std::string::npos) << "missing: " << want << "\n" << ch.out;
  }
  // sed's temporary files lived and died within the command: not listed.
  EXPECT_EQ(ch.out.find("/sed"), std::string::npos) << ch.out;
  // The python child's change counts to its command.
  size_t py_at = ch.out.find("python3 rewrite.py"), data_at = ch.out.find(p("data.csv"));
  EXPECT_LT(py_at, data_at);

  Ran js = cb({"changes", "--session", s(id), "--json", "--command", std::to_string(cmds["mv"])});
  ASSERT_EQ(js.status, 0) << js.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(js.out);
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(lines.size(), 2u) << js.out;  // config.ini replaced, old.txt renamed
  EXPECT_EQ(lines[0]["path"], p("config.ini"));
  EXPECT_EQ(lines[0]["undo"], "restore");
  EXPECT_EQ(lines[0]["argv"], (nlohmann::json{"mv", "old.txt", "config.ini"}));
  EXPECT_EQ(lines[1]["path"], p("old.txt"));
  EXPECT_EQ(lines[1]["target"], p("config.ini"));
  EXPECT_EQ(lines[1]["undo"], "move-back");

  // A dry run changes nothing and records nothing.
  auto during = test::tree_state(work_);
  Ran dry = cb({"undo", "--session", s(id), "--created", "--dry-run"});
  EXPECT_EQ(dry.status, 1) << dry.out << dry.err;  // the delete outside was not kept
  EXPECT_NE(dry.out.find("move back  " + p("config.ini") + " -> " + p("old.txt")), std::string::npos) << dry.out;
  EXPECT_EQ(test::tree_state(work_), during);

  Ran un = cb({"undo", "--session", s(id), "--created"});
  EXPECT_EQ(un.status, 1) << un.out << un.err;
  EXPECT_NE(un.out.find("not kept   " + outside_), std::string::npos) << un.out;
  EXPECT_NE(un.out.find("moved back " + p("config.ini") + " -> " + p("old.txt")), std::string::npos) << un.out;
  EXPECT_EQ(un.out.find("conflict"), std::string::npos) << un.out;
  EXPECT_EQ(un.out.find("failed"), std::string::npos) << un.out;
  auto after = test::tree_state(work_);
  for (const auto& [rel, st] : before) EXPECT_EQ(after[rel], st) << rel;
  for (const auto& [rel, st] : after) EXPECT_TRUE(before.count(rel)) << "left behind: " << rel;
  if (!xattrs_) std::cerr << "note: user xattrs not compared: " << test::user_xattrs(work_).reason << "\n";

  // In the audit database.
  auto reader = db::Reader::open(db_);
  ASSERT_TRUE(reader) << reader.error().message;
  auto undos = (*reader)->undos(id);
  ASSERT_TRUE(undos) << undos.error().message;
  ASSERT_EQ(undos->size(), 1u);
  const db::UndoRun& u = (*undos)[0];
  EXPECT_TRUE(u.created);
  EXPECT_FALSE(u.force);
  EXPECT_EQ(u.uid, getuid());
  std::map<std::string, std::string> outcome;
  for (const db::UndoFile& f : u.files)
    outcome[f.path + (f.target.empty() ? "" : " -> " + f.target)] = f.action + (f.done ? " done" : "");
  EXPECT_EQ(outcome[p("src/lib/blob.bin")], "restore done");
  EXPECT_EQ(outcome[p("NEW.md")], "remove done");
  EXPECT_EQ(outcome[p("config.ini")], "restore done");
  EXPECT_EQ(outcome[p("config.ini") + " -> " + p("old.txt")], "move-back done");
  EXPECT_EQ(outcome[outside_], "cannot");

  // Again: nothing more to do.
  Ran again = cb({"undo", "--session", s(id), "--created"});
  EXPECT_EQ(again.status, 1);  // the unkept delete stays refused
  EXPECT_EQ(again.out.find("restored"), std::string::npos) << again.out;
  EXPECT_EQ(test::tree_state(work_), after);
}

TEST_F(UndoCli, AFileEditedAfterTheSessionIsRefusedAndTheOthersRestored) {
  make_project();
  outside_ = tmp_ / "outside.log";
  write_file(outside_, "x");
  auto before = test::tree_state(work_);
  int64_t id = agent_session();
  // The user goes on working: an edit of a file the session truncated.
  write_file(p("notes.txt"), "notes written after the session\n", 0640);
  FullState edited = state_of(p("notes.txt"));

  Ran un = cb({"undo", "--session", s(id)});
  EXPECT_EQ(un.status, 1) << un.out << un.err;
  EXPECT_NE(un.out.find("conflict   " + p("notes.txt") + ": changed after the session: its size changed"),
            std::string::npos)
      << un.out;
  EXPECT_NE(un.out.find("--force overwrites it"), std::string::npos) << un.out;
  EXPECT_EQ(state_of(p("notes.txt")), edited);  // untouched
  for (std::string rel : {"src/main.c", "src/lib/blob.bin", "doc2.md", "data.csv", "config.ini", "old.txt"})
    EXPECT_EQ(state_of(p(rel)), before[rel]) << rel;
  // Created files stay without --created.
  EXPECT_TRUE(state_of(p("NEW.md")).exists);
  EXPECT_NE(un.out.find("left       " + p("NEW.md") + ": created by the session"), std::string::npos) << un.out;

  auto undos = db::Reader::open(db_).value()->undos(id);
  ASSERT_TRUE(undos);
  ASSERT_EQ(undos->size(), 1u);
  bool recorded = false;
  for (const db::UndoFile& f : (*undos)[0].files)
    if (f.path == p("notes.txt")) {
      recorded = true;
      EXPECT_EQ(f.action, "conflict");
      EXPECT_FALSE(f.done);
      EXPECT_NE(f.reason.find("changed after the session"), std::string::npos) << f.reason;
    }
  EXPECT_TRUE(recorded);

  // --force overwrites it, and says so.
  Ran forced = cb({"undo", "--session", s(id), "--force", "--path", "notes.txt"});
  EXPECT_EQ(forced.status, 0) << forced.out << forced.err;
  EXPECT_NE(forced.out.find("restored   " + p("notes.txt") + ": changed after the session"), std::string::npos)
      << forced.out;
  EXPECT_EQ(state_of(p("notes.txt")), before["notes.txt"]);
  undos = db::Reader::open(db_).value()->undos(id);
  ASSERT_EQ(undos->size(), 2u);
  EXPECT_TRUE((*undos)[1].force);
  EXPECT_EQ((*undos)[1].path_glob, p("notes.txt") + "/**");
  ASSERT_EQ((*undos)[1].files.size(), 1u);
  EXPECT_TRUE((*undos)[1].files[0].forced);
}

TEST_F(UndoCli, OneCommandAtATime) {
  make_project();
  outside_ = tmp_ / "outside.log";
  write_file(outside_, "x");
  auto before = test::tree_state(work_);
  std::map<std::string, uint64_t> cmds;
  int64_t id = agent_session(&cmds);
  FullState data_after = state_of(p("data.csv"));

  Ran un = cb({"undo", "--session", s(id), "--command", std::to_string(cmds["rm"])});
  EXPECT_EQ(un.status, 0) << un.out << un.err;
  for (std::string rel : {"src", "src/main.c", "src/lib", "src/lib/helper.c", "src/lib/blob.bin", "src/link"})
    EXPECT_EQ(state_of(p(rel)), before[rel]) << rel;
  EXPECT_EQ(state_of(p("data.csv")), data_after);  // another command's change stays
  EXPECT_FALSE(state_of(p("old.txt")).exists);

  un = cb({"undo", "--session", s(id), "--command", std::to_string(cmds["mv"])});
  EXPECT_EQ(un.status, 0) << un.out << un.err;
  EXPECT_EQ(state_of(p("old.txt")), before["old.txt"]);
  EXPECT_EQ(state_of(p("config.ini")), before["config.ini"]);

  Ran bad = cb({"undo", "--session", s(id), "--command", "999"});
  EXPECT_EQ(bad.status, 125);
  EXPECT_NE(bad.err.find("has no command 999"), std::string::npos) << bad.err;
}

TEST_F(UndoCli, OwnErrorsExitWith125) {
  Ran none = cb({"changes", "--session", "1"});
  EXPECT_EQ(none.status, 125);
  EXPECT_NE(none.err.find("cottonbox: "), std::string::npos) << none.err;
  make_project();
  outside_ = tmp_ / "outside.log";
  write_file(outside_, "x");
  int64_t id = agent_session();
  Ran missing = cb({"undo", "--session", s(id + 1)});
  EXPECT_EQ(missing.status, 125) << missing.out << missing.err;
  Ran glob = cb({"undo", "--session", s(id), "--path", "src/[a"});
  EXPECT_EQ(glob.status, 125) << glob.out << glob.err;
  EXPECT_NE(glob.err.find("bad --path glob"), std::string::npos) << glob.err;
}

TEST_F(UndoCli, ARunningSessionIsNotUndone) {
  make_project();
  // The session's supervisor is alive: a process named like cottonbox.
  int hold[2];
  ASSERT_EQ(pipe(hold), 0);
  pid_t live = fork();
  if (live == 0) {
    prctl(PR_SET_NAME, "cottonbox-sup", 0, 0, 0);
    close(hold[1]);
    char c;
    (void)!read(hold[0], &c, 1);
    _exit(0);
  }
  close(hold[0]);
  int64_t id;
  {
    auto w = db::Writer::open(db_);
    ASSERT_TRUE(w);
    SessionStart st;
    st.uuid = test::random_uuid();
    st.started_ns = now_ns();
    st.supervisor_pid = live;
    st.boot_id = test::read_file("/proc/sys/kernel/random/boot_id");
    if (!st.boot_id.empty() && st.boot_id.back() == '\n') st.boot_id.pop_back();
    auto r = (*w)->begin_session(st);
    ASSERT_TRUE(r);
    id = *r;
    ASSERT_TRUE((*w)->flush());
  }
  Ran un = cb({"undo", "--session", s(id)});
  EXPECT_EQ(un.status, 125) << un.out << un.err;
  EXPECT_NE(un.err.find("still running"), std::string::npos) << un.err;
  close(hold[1]);
  waitpid(live, nullptr, 0);
}

TEST_F(UndoCli, GcRemovesOldSessionsAndSaysWhatItFreed) {
  make_project();
  outside_ = tmp_ / "outside.log";
  write_file(outside_, "x");
  int64_t id = agent_session();
  Ran keep = cb({"gc"});
  ASSERT_EQ(keep.status, 0) << keep.err;
  EXPECT_EQ(keep.out.find("removed  session"), std::string::npos) << keep.out;  // 30 days: young enough
  Ran bad = cb({"gc", "--max-size", "ten"});
  EXPECT_EQ(bad.status, 125);
  // Anything older than a millisecond goes.
  usleep(20000);
  Ran gc = cb({"gc", "--max-age", "0.00000001"});
  ASSERT_EQ(gc.status, 0) << gc.err;
  EXPECT_NE(gc.out.find("removed  session " + s(id) + " ("), std::string::npos) << gc.out;
  EXPECT_NE(gc.out.find(" after; 1 sessions and "), std::string::npos) << gc.out;
  // What changed is still listed, from the audit trail, as not kept now.
  Ran ch = cb({"changes", "--session", s(id)});
  EXPECT_EQ(ch.status, 0);
  EXPECT_NE(ch.out.find("not kept"), std::string::npos) << ch.out;
  EXPECT_NE(ch.err.find("has no keep journal"), std::string::npos) << ch.err;
}

}  // namespace
}  // namespace cb::keep
