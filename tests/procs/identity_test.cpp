// Process identity as the process table gathers it, on real processes: the
// file the kernel ran, never a name the process or its caller chose.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/paths.h"
#include "procs/code.h"
#include "procs/procs.h"

extern char** environ;

namespace cb {
namespace {

class ProcIdentity : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cb-procid-XXXXXX";
    ASSERT_TRUE(mkdtemp(tmpl));
    dir_ = tmpl;
    ASSERT_EQ(resolve_identity_paths(ids_, "sleep", {"/usr/bin/sleep"}), 1u);
  }
  void TearDown() override {
    for (pid_t p : pids_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    std::system(("rm -rf " + dir_).c_str());
  }

  pid_t spawn(const std::string& path, std::vector<std::string> args, std::vector<std::string> env = {}) {
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> e = env;
    e.emplace_back("PATH=/usr/bin:/bin");
    for (auto& v : e) envp.push_back(v.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) return -1;
    pids_.push_back(pid);
    return pid;
  }

  // Waits until the kernel shows `pid` running `exe_suffix` (an exec from a
  // forked child is not synchronous with us).
  // Asleep in a system call: past exec, its loader done mapping what it
  // runs (on a loaded machine the image is caught half-loaded otherwise).
  static bool sleeping(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    size_t close = all.rfind(')');
    return close != std::string::npos && close + 2 < all.size() && all[close + 2] == 'S';
  }
  // The image `exe_suffix` runs in `pid`, and it waits.
  static bool running(pid_t pid, std::string_view exe_suffix) {
    for (int i = 0; i < 200; ++i) {
      char p[64], buf[4096];
      snprintf(p, sizeof p, "/proc/%d/exe", pid);
      ssize_t n = readlink(p, buf, sizeof buf);
      if (n > 0 && std::string_view(buf, static_cast<size_t>(n)).find(exe_suffix) != std::string_view::npos &&
          sleeping(pid))
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::shared_ptr<const ProcessInfo> info(pid_t pid) {
    // posix_spawn returns once the child's exec has taken its memory, a
    // moment before the new image's environment is in place.
    for (int i = 0; i < 200 && read_proc_file(pid, "environ").empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ProcessTable t(getpid());
    t.identities = &ids_;
    ProcessEntry* e = t.by_tgid(pid);
    return e ? e->info : nullptr;
  }

  std::string copy_of(const std::string& src, const std::string& name) {
    std::string dst = dir_ + "/" + name;
    std::system(("cp " + src + " " + dst).c_str());
    return dst;
  }

  Identities ids_;
  std::string dir_;
  std::vector<pid_t> pids_;
};

TEST_F(ProcIdentity, TheTrustedFileHasItsName) {
  pid_t p = spawn("/usr/bin/sleep", {"sleep", "10"});
  ASSERT_GT(p, 0);
  auto i = info(p);
  ASSERT_TRUE(i);
  EXPECT_EQ(i->names, std::vector<std::string>{"sleep"});
}

TEST_F(ProcIdentity, ACopyOrALinkByAnotherNameConfersNothingButWhatTheFileIs) {
  std::string copy = copy_of("/usr/bin/sleep", "sleep");
  pid_t p = spawn(copy, {"sleep", "10"});
  ASSERT_GT(p, 0);
  auto i = info(p);
  ASSERT_TRUE(i);
  EXPECT_EQ(i->comm, "sleep");
  EXPECT_TRUE(i->names.empty()) << "a copy is another file";

  // A symbolic link named git to sleep: the command name is git, the file sleep.
  std::string link = dir_ + "/git";
  ASSERT_EQ(symlink("/usr/bin/sleep", link.c_str()), 0);
  pid_t q = spawn(link, {"git", "10"});
  ASSERT_GT(q, 0);
  auto j = info(q);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->comm, "git");
  EXPECT_EQ(j->names, std::vector<std::string>{"sleep"});
}

// What the audit trail keeps of each image: how it got its identity, or
// why it has none, and the file it ran (for replays under other policies).
TEST_F(ProcIdentity, EachImageSaysHowItWasIdentifiedOrWhyNot) {
  pid_t p = spawn("/usr/bin/sleep", {"sleep", "10"});
  ASSERT_GT(p, 0);
  auto i = info(p);
  ASSERT_TRUE(i);
  struct stat st {};
  ASSERT_EQ(stat("/usr/bin/sleep", &st), 0);
  EXPECT_EQ(i->identity.check, IdentityCheck::Trusted);
  EXPECT_EQ(i->identity.exe, (FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                                     st.st_ctim.tv_sec, st.st_ctim.tv_nsec}));
  EXPECT_EQ(i->identity.why, "");

  // A copy of sleep called git: a clean start, but no file the policy trusts.
  std::string copy = copy_of("/usr/bin/sleep", "git");
  pid_t q = spawn(copy, {"git", "10"});
  ASSERT_GT(q, 0);
  ASSERT_TRUE(running(q, "/git"));
  auto j = info(q);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->comm, "git");
  EXPECT_TRUE(j->names.empty());
  EXPECT_EQ(j->identity.check, IdentityCheck::NotTrusted);
  EXPECT_EQ(j->identity.why, j->exe + " is no file the policy trusts");
  ASSERT_EQ(stat(copy.c_str(), &st), 0);
  EXPECT_EQ(j->identity.exe.ino, static_cast<uint64_t>(st.st_ino)) << "the copy's own file";

  // The trusted file started with LD_PRELOAD: disqualified, and why.
  pid_t r = spawn("/usr/bin/sleep", {"sleep", "10"}, {"LD_PRELOAD=/nonexistent-cb-test.so"});
  ASSERT_GT(r, 0);
  auto k = info(r);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->identity.check, IdentityCheck::Disqualified);
  EXPECT_NE(k->identity.why.find("started with LD_PRELOAD set"), std::string::npos) << k->identity.why;

  // No policy at all: nothing looked up, and said.
  ProcessTable none(getpid());
  ProcessEntry* e = none.by_tgid(p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->info->identity.check, IdentityCheck::NotChecked);
  EXPECT_TRUE(e->info->names.empty());
}

TEST_F(ProcIdentity, LoaderInjectionAndTheLoaderItselfConferNothing) {
  pid_t p = spawn("/usr/bin/sleep", {"sleep", "10"}, {"LD_PRELOAD=/nonexistent-cb-test.so"});
  ASSERT_GT(p, 0);
  auto i = info(p);
  ASSERT_TRUE(i);
  EXPECT_TRUE(i->names.empty());

  char loader[4096];
  ASSERT_TRUE(realpath("/lib64/ld-linux-x86-64.so.2", loader)) << "no x86-64 dynamic loader here";
  pid_t q = spawn(loader, {"ld.so", "/usr/bin/sleep", "10"});
  ASSERT_GT(q, 0);
  auto j = info(q);
  ASSERT_TRUE(j);
  EXPECT_TRUE(j->names.empty()) << j->exe;
}

// The loader check reads /proc/PID/environ, which the process itself can
// overwrite: a preloaded library that scrubs its trace is still in the
// process's code, and that takes the identity away.
TEST_F(ProcIdentity, APreloadThatScrubsItsTraceStillConfersNothing) {
  {
    std::ofstream c(dir_ + "/scrub.c");
    c << "#include <string.h>\nextern char **environ;\n"
         "__attribute__((constructor)) static void scrub(void) {\n"
         "  for (char **e = environ; *e; ++e)\n"
         "    if (strncmp(*e, \"LD_PRELOAD=\", 11) == 0) memset(*e, 'X', strlen(*e));\n"
         "}\n";
  }
  // The session starts here; the library is made in it.  (File times come
  // from a coarse clock: a little slack.)
  int64_t started = realtime_ns() - 100000000;
  if (std::system(("cc -shared -fPIC -o " + dir_ + "/scrub.so " + dir_ + "/scrub.c 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "no C compiler to build the preloaded library with";
  pid_t p = spawn("/usr/bin/sleep", {"sleep", "10"}, {"LD_PRELOAD=" + dir_ + "/scrub.so"});
  ASSERT_GT(p, 0);
  // Wait until the library has run: its trace is gone from environ.
  bool scrubbed = false;
  for (int i = 0; i < 400 && !scrubbed; ++i) {
    std::string env = read_proc_file(p, "environ");
    scrubbed = !env.empty() && env.find("LD_PRELOAD=") == std::string::npos;
    if (!scrubbed) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(scrubbed) << "the library did not scrub LD_PRELOAD from the environment";

  ProcessTable t(getpid());
  t.identities = &ids_;
  t.check_code = false;  // environ alone: the scrub fools it
  ProcessEntry* fooled = t.by_tgid(p);
  ASSERT_TRUE(fooled);
  EXPECT_EQ(fooled->info->names, std::vector<std::string>{"sleep"});

  ProcessTable checked(getpid());
  checked.identities = &ids_;
  checked.code_before_ns = started;
  ProcessEntry* e = checked.by_tgid(p);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->info->names.empty());
  EXPECT_NE(foreign_code_of(p, started).find("made or changed in this session"), std::string::npos)
      << foreign_code_of(p, started);
  // What `cottonbox why` will say of it.
  EXPECT_EQ(e->info->identity.check, IdentityCheck::Disqualified);
  EXPECT_NE(e->info->identity.why.find("made or changed in this session: " + dir_ + "/scrub.so"), std::string::npos)
      << e->info->identity.why;
}

// Code in a file made during the session, and code patched in memory, are
// not the trusted program's.
TEST(ForeignCode, FilesMadeLaterAnonymousAndDirtyCode) {
  const char* smaps =
      "55d4a0a00000-55d4a0a28000 r--p 00000000 fe:00 247417                     /usr/bin/git\n"
      "Size:                160 kB\n"
      "Private_Dirty:         8 kB\n"
      "Anonymous:             0 kB\n"
      "55d4a0a28000-55d4a0b28000 r-xp 00028000 fe:00 247417                     /usr/bin/git\n"
      "Private_Dirty:         0 kB\n"
      "7f0000000000-7f0000001000 rwxp 00000000 00:00 0 \n"
      "Anonymous:             4 kB\n"
      "7f0000002000-7f0000003000 r-xp 00000000 08:01 99                         /tmp/a b.so\n"
      "Anonymous:             8 kB\n"
      "7ffd000000-7ffd001000 r-xp 00000000 00:00 0                          [vdso]\n"
      "Private_Dirty:         0 kB\n";
  auto m = executable_mappings(smaps);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].path, "/usr/bin/git");
  EXPECT_EQ(m[0].dev_major, 0xfeu);
  EXPECT_EQ(m[0].inode, 247417u);
  EXPECT_EQ(m[1].path, "");
  EXPECT_EQ(m[2].path, "/tmp/a b.so");
  EXPECT_EQ(m[2].anonymous_kb, 8u);
  EXPECT_EQ(m[0].anonymous_kb, 0u) << "dirty in the page cache is not changed in memory";
  EXPECT_EQ(m[3].path, "[vdso]");

  MappedFile git{true, 0xfe, 0, 247417, 1000, 0, 0100755, true};
  EXPECT_EQ(foreign_code(m[0], git, 2000), "");
  EXPECT_NE(foreign_code(m[0], git, 500), "") << "changed after the session started";
  EXPECT_EQ(foreign_code(m[0], git, 0), "") << "0: not checked";
  MappedFile replaced = git;
  replaced.inode = 1;
  EXPECT_NE(foreign_code(m[0], replaced, 0), "");
  MappedFile gone;
  EXPECT_NE(foreign_code(m[0], gone, 0), "");
  EXPECT_NE(foreign_code(m[1], {}, 0), "") << "anonymous";
  EXPECT_NE(foreign_code(m[2], {true, 8, 1, 99, 0}, 0), "") << "patched in memory";
  // A library only root can change is code the program may run; one a user
  // can change, or a group, is not (the executable is the identity's).
  m[2].anonymous_kb = 0;
  EXPECT_EQ(foreign_code(m[2], {true, 8, 1, 99, 0, 0, 0100644, false}, 0), "");
  EXPECT_NE(foreign_code(m[2], {true, 8, 1, 99, 0, 1000, 0100644, false}, 0), "");
  EXPECT_NE(foreign_code(m[2], {true, 8, 1, 99, 0, 0, 0100664, false}, 0), "");
  EXPECT_EQ(foreign_code(m[2], {true, 8, 1, 99, 0, 1000, 0100755, true}, 0), "");
  EXPECT_EQ(foreign_code(m[3], {}, 0), "");
}

TEST_F(ProcIdentity, AMemfdConfersNothing) {
  pid_t p = fork();
  ASSERT_GE(p, 0);
  if (p == 0) {
    int fd = memfd_create("sleep", 0);
    std::ifstream in("/usr/bin/sleep", std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), {});
    if (fd < 0 || write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) _exit(1);
    char a0[] = "sleep", a1[] = "10";
    char* argv[] = {a0, a1, nullptr};
    fexecve(fd, argv, environ);
    _exit(1);
  }
  pids_.push_back(p);
  ASSERT_TRUE(running(p, "memfd:"));
  auto i = info(p);
  ASSERT_TRUE(i);
  EXPECT_TRUE(i->names.empty()) << i->exe;
}

TEST_F(ProcIdentity, ATrustedFileChangedAfterTheLoadLosesIt) {
  std::string mine = copy_of("/usr/bin/sleep", "mysleep");
  ASSERT_EQ(resolve_identity_paths(ids_, "mysleep", {mine}), 1u);
  pid_t p = spawn(mine, {"mysleep", "10"});
  ASSERT_GT(p, 0);
  auto i = info(p);
  ASSERT_TRUE(i);
  EXPECT_EQ(i->names, std::vector<std::string>{"mysleep"}) << foreign_code_of(p, 0);

  // Any change to the inode (here its mode; a rewrite likewise) moves its
  // change time: the policy's record no longer names it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(chmod(mine.c_str(), 0700), 0);
  pid_t q = spawn(mine, {"mysleep", "10"});
  ASSERT_GT(q, 0);
  auto j = info(q);
  ASSERT_TRUE(j);
  EXPECT_TRUE(j->names.empty());
}

// The exec that ends an identity may reach the table late (the tracer's
// record is on its way, no exec was notified): the next lookup sees the
// new image anyway.
TEST_F(ProcIdentity, AnExecNotYetReportedEndsTheIdentity) {
  char sh[4096];
  ASSERT_TRUE(realpath("/bin/sh", sh));
  ASSERT_EQ(resolve_identity_paths(ids_, "shell", {sh}), 1u);
  pid_t p = spawn("/bin/sh", {"sh", "-c", "/usr/bin/sleep 0.3; exec /usr/bin/tail -f /dev/null"});
  ASSERT_GT(p, 0);
  for (int i = 0; i < 200 && read_proc_file(p, "environ").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ProcessTable t(getpid());
  t.identities = &ids_;
  ProcessEntry* e = t.by_tgid(p);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->info->names, std::vector<std::string>{"shell"});
  ASSERT_TRUE(running(p, "tail"));
  e = t.by_tgid(p);  // no mark_exec(), no exec_record()
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->info->names.empty()) << e->info->exe;
  EXPECT_NE(e->info->exe.find("tail"), std::string::npos);
}

TEST_F(ProcIdentity, AnEndedProcessIsNoExecOfNothing) {
  // The image of a process that has exited (not yet reaped) can no longer
  // be read: the look that finds it so records no exec over what it ran.
  pid_t p = spawn("/usr/bin/sleep", {"sleep", "0.2"});
  ASSERT_GT(p, 0);
  ASSERT_TRUE(running(p, "sleep"));
  ProcessTable t(getpid());
  t.identities = &ids_;
  int execs = 0;
  t.on_exec = [&](const ProcessEntry&) { ++execs; };
  ProcessEntry* e = t.by_tgid(p);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->info->names, std::vector<std::string>{"sleep"});
  for (int i = 0; i < 200 && !leader_exited(p); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(leader_exited(p));
  t.mark_exec(p);
  e = t.by_tgid(p);
  ASSERT_TRUE(e);
  EXPECT_EQ(execs, 0);
  EXPECT_EQ(e->info->exe, "/usr/bin/sleep");
  EXPECT_EQ(e->info->argv, (std::vector<std::string>{"sleep", "0.2"}));
}

TEST(LeaderExited, AProcessInDoExitHasEndedThoughItIsNotYetAZombie) {
  // Between giving up its memory and turning zombie, an exiting process is
  // still 'R' or 'S' in /proc/PID/stat; only its flags (PF_EXITING) say so.
  std::string self = read_proc_file(getpid(), "stat", 1024);
  ASSERT_FALSE(self.empty());
  EXPECT_FALSE(stat_says_exited(self));
  size_t r = self.rfind(')');
  std::vector<std::string> fields;  // from the state on
  std::istringstream in(self.substr(r + 2));
  for (std::string f; in >> f;) fields.push_back(f);
  ASSERT_GT(fields.size(), 7u);
  auto with = [&](const std::string& comm, char state, unsigned long flags) {
    std::vector<std::string> f = fields;
    f[0] = std::string(1, state);
    f[6] = std::to_string(flags);  // field 9
    std::string out = std::to_string(getpid()) + " (" + comm + ")";
    for (const auto& x : f) out += " " + x;
    return out;
  };
  unsigned long flags = std::stoul(fields[6]);
  EXPECT_FALSE(stat_says_exited(with("sh", 'S', flags & ~0x4ul)));
  EXPECT_TRUE(stat_says_exited(with("sh", 'R', flags | 0x4ul)));
  EXPECT_TRUE(stat_says_exited(with("sh", 'S', flags | 0x4ul)));
  EXPECT_TRUE(stat_says_exited(with("sh", 'Z', flags & ~0x4ul)));
  // A command name that looks like the fields after it.
  EXPECT_FALSE(stat_says_exited(with("x) Z 1 1 1 0 -1 4 (", 'S', flags & ~0x4ul)));
  EXPECT_TRUE(stat_says_exited(""));  // gone
}

TEST_F(ProcIdentity, AncestorsAreIdentitiesNotCommandNames) {
  // A shell called git (by a link) starts sleep: its ancestor is nobody.
  std::string link = dir_ + "/git";
  ASSERT_EQ(symlink("/bin/sh", link.c_str()), 0);
  pid_t p = spawn(link, {"git", "-c", "/usr/bin/sleep 10; :"});
  ASSERT_GT(p, 0);
  pid_t child = -1;
  for (int n = 0; n < 200 && child < 0; ++n) {
    std::ifstream kids("/proc/" + std::to_string(p) + "/task/" + std::to_string(p) + "/children");
    kids >> child;
    if (child < 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(child, 0);
  ASSERT_TRUE(running(child, "sleep"));
  ProcessTable t(getpid());
  t.identities = &ids_;
  ProcessEntry* e = t.by_tgid(child);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->info->names, std::vector<std::string>{"sleep"});
  ASSERT_FALSE(e->info->ancestors.empty());
  EXPECT_EQ(e->info->ancestors[0], "") << "the parent's command name is git, its identity none";
  kill(child, SIGKILL);
}

}  // namespace
}  // namespace cb
