// Integration tests: real programs under the real `cottonbox run`, checked
// the way a user would check them: the protected files are intact byte for
// byte, the denial is in the audit database with the rule that made it, and
// benign work outside runs as it would without cottonbox.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "tests/support/host_features.h"

namespace {

const std::string kCottonbox = COTTONBOX_BIN;
const std::string kTryOp = TRY_OP_BIN;

struct Outcome {
  int status = -1;  // exit status, or 128+N for a signal
  std::string out, err;
};

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& p, const std::string& s, mode_t mode = 0644) {
  std::ofstream f(p, std::ios::binary);
  f << s;
  f.close();
  chmod(p.c_str(), mode);
}

// Runs argv in `cwd`, with `env` added, capturing stdout and stderr.
Outcome run_argv(const std::vector<std::string>& argv, const std::string& cwd,
                 const std::map<std::string, std::string>& env = {}, int timeout_s = 60) {
  std::string outp = cwd + "/.out", errp = cwd + "/.err";
  pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str())) _exit(126);
    int o = open(outp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int n = open("/dev/null", O_RDONLY);
    dup2(n, 0);
    dup2(o, 1);
    dup2(e, 2);
    for (auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    // No controlling terminal: asks must not wait for a human here.
    setsid();
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  Outcome r;
  int st = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    pid_t w = waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      ADD_FAILURE() << "timed out: " << argv.back();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = read_file(outp);
  r.err = read_file(errp);
  return r;
}

class Session : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cb-cli.XXXXXX";
    dir_ = mkdtemp(tmpl);
    chmod(dir_.c_str(), 0755);
    box_ = dir_ + "/box";
    p_ = box_ + "/prot";
    t_ = dir_ + "/t";
    mkdir(box_.c_str(), 0755);
    mkdir(p_.c_str(), 0755);
    mkdir((p_ + "/sub").c_str(), 0755);
    mkdir(t_.c_str(), 0755);
    write_file(p_ + "/keep.txt", "keep me\n");
    setxattr((p_ + "/keep.txt").c_str(), "user.note", "n", 1, 0);  // where the filesystem has user xattrs
    write_file(p_ + "/sub/deep.txt", "deep\n");
    std::mt19937 rng(42);
    std::string data(65536, '\0');
    for (auto& c : data) c = static_cast<char>(rng());
    write_file(p_ + "/data.bin", data);
    write_file(t_ + "/evil", "evil\n");
    policy_ = dir_ + "/policy.yaml";
    write_file(policy_,
               "version: 1\n"
               "default: allow\n"
               "rules:\n"
               "  - id: protect\n"
               "    action: [file.delete, file.rename, file.truncate, file.write, file.attr]\n"
               "    path: [\"" +
                   p_ +
                   "/**\"]\n"
                   "    decision: deny\n"
                   "    message: the fixture must survive\n");
    db_ = dir_ + "/audit.db";
    before_ = fingerprint();
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "kept " << dir_ << " for inspection\n";
      return;
    }
    std::string cmd = "chattr -R -i " + dir_ + " 2>/dev/null; rm -rf " + dir_;
    (void)!system(cmd.c_str());
  }

  std::map<std::string, std::string> fingerprint() {
    std::map<std::string, std::string> m;
    for (const char* rel : {"", "/sub", "/keep.txt", "/sub/deep.txt", "/data.bin"}) {
      std::string p = p_ + rel;
      struct stat st;
      if (lstat(p.c_str(), &st)) {
        m[rel] = "missing";
        continue;
      }
      std::ostringstream s;
      // Directories by mode (creating inside one is not destroying it);
      // files by mode, link count (a new name is an alias) and content.
      s << std::oct << st.st_mode;
      if (S_ISREG(st.st_mode)) s << " " << std::dec << st.st_nlink;
      if (S_ISREG(st.st_mode)) s << " " << std::hash<std::string>{}(read_file(p));
      std::string flags;
      FILE* f = popen(("lsattr -d '" + p + "' 2>/dev/null").c_str(), "r");
      char buf[256];
      if (f && fgets(buf, sizeof buf, f)) flags = std::string(buf).substr(0, std::string(buf).find(' '));
      if (f) pclose(f);
      s << " " << flags;
      char names[1024];
      ssize_t n = llistxattr(p.c_str(), names, sizeof names);
      for (ssize_t i = 0; i < n; i += static_cast<ssize_t>(strlen(names + i)) + 1) {
        char v[256];
        ssize_t vn = lgetxattr(p.c_str(), names + i, v, sizeof v);
        s << " " << (names + i) << "=" << std::string(v, vn > 0 ? static_cast<size_t>(vn) : 0);
      }
      m[rel] = s.str();
    }
    return m;
  }

  void expect_intact() {
    auto now = fingerprint();
    for (auto& [k, v] : before_) EXPECT_EQ(now[k], v) << "fixture entry '" << k << "' changed";
  }

  std::map<std::string, std::string> env() {
    std::map<std::string, std::string> e = {{"PATH", std::string(TEST_BIN_DIR) + ":/usr/local/bin:/usr/bin:/bin"},
                                            {"P", p_},
                                            {"T", t_},
                                            {"BOX", box_},
                                            {"DB", db_},
                                            {"HOME", dir_}};
    // The suite runs twice: with every layer, and with the eBPF tracer
    // "missing", where the supervisor alone must still enforce and record.
    if (const char* f = getenv("COTTONBOX_FAKE_MISSING")) e["COTTONBOX_FAKE_MISSING"] = f;
    return e;
  }

  Outcome cottonbox(std::vector<std::string> args) {
    args.insert(args.begin(), kCottonbox);
    return run_argv(args, dir_, env());
  }

  Outcome supervised(const std::string& shell, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"run", "--policy", policy_, "--db", db_, "--ask", "deny", "-q"};
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), {"--", "/bin/sh", "-c", shell});
    return cottonbox(a);
  }

  std::vector<cb::db::StoredEvent> events(std::optional<std::string> decision = std::nullopt) {
    auto r = cb::db::Reader::open(db_);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    if (!r.ok()) return {};
    cb::db::EventQuery q;
    q.decision = decision;
    auto ev = (*r)->events(q);
    EXPECT_TRUE(ev.ok());
    return ev.ok() ? *ev : std::vector<cb::db::StoredEvent>{};
  }

  // At least one denial under P by the fixture's rule.
  void expect_denial_recorded() {
    bool found = false;
    for (auto& e : events("deny")) {
      const auto& ev = e.row.ev;
      bool about_p = ev.path.rfind(p_, 0) == 0 || ev.target.rfind(p_, 0) == 0 || p_.rfind(ev.path + "/", 0) == 0;
      if (about_p && e.row.verdict.rule_id == "protect" && !e.row.allowed) found = true;
    }
    EXPECT_TRUE(found) << "no denial by rule 'protect' recorded";
  }

  std::string dir_, box_, p_, t_, policy_, db_;
  std::map<std::string, std::string> before_;
};

// ---------------------------------------------------------------- attacks --

struct Technique {
  const char* name;
  const char* shell;
  bool needs_root = false;
  bool killed = false;  // the filter kills the process (foreign syscall ABI)
  // The host must let the technique reach a syscall natively, or the test
  // would blame cottonbox for what the host refuses by itself.
  const cb::test::HostFeature& (*needs)() = nullptr;
};
// GoogleTest prints a parameter by its name, not by its bytes.
void PrintTo(const Technique& t, std::ostream* os) { *os << t.name; }

class Destruction : public Session, public ::testing::WithParamInterface<Technique> {};

TEST_P(Destruction, ProtectedFilesSurviveAndTheDenialIsRecorded) {
  const Technique& t = GetParam();
  if (t.needs_root) CB_REQUIRE_HOST(cb::test::root());
  if (t.needs) CB_REQUIRE_HOST(t.needs());
  Outcome r = supervised(t.shell);
  SCOPED_TRACE(r.err);
  expect_intact();
  if (t.killed) {
    EXPECT_EQ(r.status, 128 + SIGSYS) << "a foreign-ABI syscall must kill the process";
    bool recorded = false;
    for (auto& e : events("deny"))
      if (e.row.verdict.rule_id == "cottonbox:native-abi" && e.row.layer == cb::Layer::Filter) recorded = true;
    EXPECT_TRUE(recorded) << "the kill is a denial in the trail";
  } else {
    expect_denial_recorded();
  }
}

const Technique kTechniques[] = {
    {"rm", "rm -f $P/keep.txt"},
    {"rm_rf", "rm -rf $P"},
    {"find_delete", "find $P -delete"},
    {"tar_remove_files", "tar --remove-files -cf $T/loot.tar -C $BOX prot"},
    {"zip_move", "cd $BOX && zip -q -r -m $T/loot.zip prot"},
    {"rsync_remove_source", "rsync -a --remove-source-files $P/ $T/out/"},
    {"mv_out", "mv $P/keep.txt $P/sub $T/"},
    {"mv_parent_dir", "mv $BOX $T/moved"},
    {"mv_over", "mv -f $T/evil $P/keep.txt"},
    {"cp_over", "cp $T/evil $P/keep.txt"},
    {"redirect_truncate", ": > $P/keep.txt"},
    {"truncate_s0", "truncate -s0 $P/keep.txt"},
    {"sed_i", "sed -i s/keep/gone/ $P/keep.txt"},
    {"shred_u", "shred -u $P/keep.txt"},
    {"python_os_remove", "python3 -c 'import os,sys; os.remove(sys.argv[1])' $P/keep.txt"},
    {"python_rmtree", "python3 -c 'import shutil,sys; shutil.rmtree(sys.argv[1])' $P"},
    {"python_open_w", "python3 -c 'import sys; open(sys.argv[1], \"w\").write(\"x\")' $P/keep.txt"},
    {"perl_unlink", "perl -e 'unlink $ARGV[0] or die' $P/keep.txt"},
    {"raw_unlinkat", "try_op unlinkat $P/keep.txt"},
    {"dirfd_unlinkat", "try_op dirfd_unlinkat $P keep.txt"},
    {"renameat2_exchange", "try_op rename_exchange $T/evil $P/keep.txt"},
    {"hardlink_truncate", "try_op link $P/keep.txt $T/alias; truncate -s0 $T/alias"},
    {"symlink_alias", "ln -s $P $T/alias && rm -f $T/alias/keep.txt"},
    {"proc_self_cwd", "cd $P && rm -f /proc/self/cwd/keep.txt"},
    {"chmod", "try_op chmod $P/keep.txt"},
    {"setxattr", "python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"user.x\", b\"1\")' $P/keep.txt"},
    {"fremovexattr",
     "python3 -c 'import os,sys; os.removexattr(os.open(sys.argv[1], os.O_RDONLY), \"user.note\")' "
     "$P/keep.txt"},
    {"chattr_immutable", "try_op chattr_i $P/keep.txt", true},
    {"int80_unlink", "try_op int80_unlink $P/keep.txt", false, true, cb::test::int80_syscalls},
    // Killed whether or not the kernel has x32: the filter refuses the
    // numbers of every other ABI before the kernel looks them up.
    {"x32_unlink", "try_op x32_unlink $P/keep.txt", false, true},
};

INSTANTIATE_TEST_SUITE_P(Techniques, Destruction, ::testing::ValuesIn(kTechniques),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(Session, AHardLinkMadeBeforeTheSessionIsTheSameProtectedFile) {
  // The other name lies outside every protected tree (and outside the
  // read-only mount): the write is still a write of the protected file.
  ASSERT_EQ(link((p_ + "/keep.txt").c_str(), (t_ + "/pre").c_str()), 0);
  before_ = fingerprint();
  Outcome r = supervised("truncate -s0 $T/pre; (: > $T/pre); try_op chmod $T/pre; echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  expect_intact();
  bool found = false;
  for (auto& e : events("deny"))
    if (e.row.ev.path == t_ + "/pre" && e.row.verdict.rule_id == "protect") found = true;
  EXPECT_TRUE(found) << "the write through the other name is denied by the protected path's rule";
}

TEST_F(Session, AHardLinkIntoALargeProtectedTreeIsFoundWhileTheSessionRuns) {
  // Thousands of entries: the tree is indexed on a background thread after
  // the command starts, and the first write through the other name waits
  // for that walk instead of slipping past it.
  for (int d = 0; d < 20; ++d) {
    std::string dir = p_ + "/bulk" + std::to_string(d);
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    for (int f = 0; f < 100; ++f) write_file(dir + "/f" + std::to_string(f), "x");
  }
  ASSERT_EQ(link((p_ + "/bulk19/f99").c_str(), (t_ + "/deep").c_str()), 0);
  before_ = fingerprint();
  Outcome r = supervised("truncate -s0 $T/deep; echo rc=$?");
  EXPECT_NE(r.out.find("rc=1\n"), std::string::npos) << r.out << r.err;
  expect_intact();
  EXPECT_EQ(read_file(p_ + "/bulk19/f99"), "x");
  bool found = false;
  for (auto& e : events("deny"))
    if (e.row.ev.path == t_ + "/deep" && e.row.verdict.rule_id == "protect") found = true;
  EXPECT_TRUE(found);
}

TEST_F(Session, ADirectoryOpenedBeforeTheSessionIsNoWayPastTheMounts) {
  // fd 9 is the protected directory as the host sees it, not read-only:
  // calls through it must not be left to the kernel, even where the
  // policy lets the kernel carry out allowed calls elsewhere.
  std::string inner =
      "chmod 000 /proc/self/fd/9/keep.txt; echo chmod=$?; (: > /proc/self/fd/9/keep.txt); echo trunc=$?; "
      "rm -f /proc/self/fd/9/../prot/data.bin; echo rm=$?; ln -s x /proc/self/fd/9/new; echo made=$?";
  Outcome r = run_argv(
      {"/bin/sh", "-c", "exec 9<\"$P\"; exec \"$0\" run --policy \"$1\" --db \"$2\" --ask deny -q -- /bin/sh -c \"$3\"",
       kCottonbox, policy_, db_, inner},
      dir_, env());
  EXPECT_NE(r.out.find("rm="), std::string::npos) << r.out << r.err;
  expect_intact();
  expect_denial_recorded();
}

TEST_F(Session, ABindMountOfTheProtectedTreeMadeBeforeTheSessionIsTheSameTree) {
  if (getuid() != 0) GTEST_SKIP() << "making the host's bind mount needs root";
  // The protected directory also shows at $T/other, through a bind mount
  // the host had before the session: that name reaches the same files.
  std::string other = t_ + "/other";
  ASSERT_EQ(mkdir(other.c_str(), 0755), 0);
  ASSERT_EQ(mount(p_.c_str(), other.c_str(), nullptr, MS_BIND, nullptr), 0) << strerror(errno);
  Outcome r = supervised(
      "rm -f $T/other/keep.txt; (echo x >> $T/other/data.bin); mv $T/other/sub $T/gone; "
      "chmod 000 $T/other/keep.txt; echo done");
  umount2(other.c_str(), MNT_DETACH);
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  expect_intact();
  bool found = false;
  for (auto& e : events("deny"))
    if (e.row.ev.path.rfind(other + "/", 0) == 0 && e.row.verdict.rule_id == "protect") found = true;
  EXPECT_TRUE(found) << "denials through the other name name the rule";
}

TEST_F(Session, CheckSaysWhichAllowedCallsTheKernelCarriesOut) {
  // Keeping for undo (the default) keeps every call that can destroy with
  // the supervisor: only it can keep before the call goes ahead.
  Outcome r = cottonbox({"check", "--json", "--policy", policy_});
  ASSERT_EQ(r.status, 0) << r.err;
  auto carried = nlohmann::json::parse(r.out)["kernel_carried"].get<std::vector<std::string>>();
  for (const char* a : {"file.delete", "file.write", "file.truncate", "file.attr", "file.rename"})
    EXPECT_EQ(std::find(carried.begin(), carried.end(), a), carried.end()) << a << " in " << r.out;
  // Without keeping, every refusal of the fixture's policy is a read-only
  // mount's, once cottonbox's own configuration exists to be mounted
  // read-only (a name not made yet can only be refused by the supervisor).
  ASSERT_EQ(system(("mkdir -p " + dir_ + "/.config/cottonbox " + dir_ + "/.config/environment.d").c_str()), 0);
  r = cottonbox({"check", "--json", "--no-keep", "--policy", policy_});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  carried = j["kernel_carried"].get<std::vector<std::string>>();
  if (getuid() == 0) {
    for (const char* a : {"file.delete", "file.write", "file.create", "file.attr"})
      EXPECT_NE(std::find(carried.begin(), carried.end(), a), carried.end()) << a << " in " << r.out;
    EXPECT_EQ(std::find(carried.begin(), carried.end(), "file.rename"), carried.end()) << "renames stay judged";
    auto at_once = j["continued_at_once"].get<std::vector<std::string>>();
    EXPECT_EQ(at_once, (std::vector<std::string>{"opens that create, mkdir and symlink outside every read-only tree"}))
        << r.out;
    // Hard links the mounts answer wholly do not reach the supervisor at
    // all with the tracer recording them; symlinks still do.
    auto notified = j["notified"].get<std::vector<std::string>>();
    EXPECT_EQ(std::find(notified.begin(), notified.end(), "link"), notified.end()) << r.out;
    EXPECT_NE(std::find(notified.begin(), notified.end(), "symlink"), notified.end()) << r.out;
  }
  // A refusal only the supervisor can make (a file pattern, not a tree)
  // takes its actions back to the supervisor.
  write_file(policy_, read_file(policy_) +
                          "  - id: no-env\n    action: [file.write, file.delete]\n    path: [\"**/.env\"]\n"
                          "    decision: deny\n");
  r = cottonbox({"check", "--json", "--no-keep", "--policy", policy_});
  ASSERT_EQ(r.status, 0) << r.err;
  carried = nlohmann::json::parse(r.out)["kernel_carried"].get<std::vector<std::string>>();
  EXPECT_EQ(std::find(carried.begin(), carried.end(), "file.write"), carried.end()) << r.out;
  EXPECT_EQ(std::find(carried.begin(), carried.end(), "file.delete"), carried.end()) << r.out;
  if (getuid() == 0) {
    // An open without O_EXCL may meet a file renamed there in the meantime,
    // and writing it is now the supervisor's to refuse.
    auto at_once = nlohmann::json::parse(r.out)["continued_at_once"].get<std::vector<std::string>>();
    ASSERT_FALSE(at_once.empty()) << r.out;
    EXPECT_EQ(at_once.front(), "O_EXCL opens, mkdir and symlink outside every read-only tree");
  }
}

TEST_F(Session, AFileHandleIsNoWayAroundPathRules) {
  if (getuid() != 0) GTEST_SKIP() << "open_by_handle_at needs CAP_DAC_READ_SEARCH";
  Outcome r = supervised("try_op handle_trunc $P/keep.txt; echo rc=$?");
  EXPECT_NE(r.out.find("rc=1\n"), std::string::npos) << r.out << r.err;  // EPERM
  expect_intact();
  expect_denial_recorded();
}

TEST_F(Session, IoUringIsRefusedWithEnosysAndRecorded) {
  Outcome r = supervised("try_op io_uring_setup; echo rc=$?");
  EXPECT_NE(r.out.find("rc=38"), std::string::npos) << r.out << r.err;  // ENOSYS: programs fall back
  bool found = false;
  for (auto& e : events("deny"))
    if (e.row.ev.action == cb::Action::SysIoUring && e.row.verdict.rule_id == "cottonbox:guard-io_uring") found = true;
  EXPECT_TRUE(found);
}

TEST_F(Session, CodeRunFromAMemfdIsNamedAsTheKernelNamesIt) {
  const std::string memx =
      "python3 -c 'import os; fd = os.memfd_create(\"payload\", 0); "
      "os.write(fd, open(\"/bin/true\", \"rb\").read()); os.execve(fd, [\"payload\"], {})'; echo rc=$?";
  Outcome r = supervised(memx);
  EXPECT_NE(r.out.find("rc=0"), std::string::npos) << "a memfd's code runs where no rule is about it\n"
                                                   << r.out << r.err;
  write_file(policy_,
             read_file(policy_) +
                 "  - id: no-memfd-code\n    action: proc.exec\n    path: [\"memfd:*\"]\n    decision: deny\n");
  r = supervised(memx);
  EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out << r.err;  // python's PermissionError
  bool found = false;
  for (auto& e : events("deny"))
    if (e.row.ev.action == cb::Action::ProcExec && e.row.verdict.rule_id == "no-memfd-code" &&
        e.row.ev.path == "memfd:payload")
      found = true;
  EXPECT_TRUE(found) << "the refusal is recorded with the memfd's name";
}

TEST_F(Session, AServerOutsideTheSessionIsKnownWhateverItsSocketIsCalled) {
  if (system("command -v tmux >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh installs it)";
  // The user's tmux server, outside the session, on a socket of an odd name.
  const std::string sock = t_ + "/odd-name";
  ASSERT_EQ(system(("tmux -S " + sock + " new-session -d -s outside 'sleep 120'").c_str()), 0);
  struct KillServer {
    std::string sock;
    ~KillServer() { (void)!system(("tmux -S " + sock + " kill-server 2>/dev/null").c_str()); }
  } kill_outside{sock};
  write_file(policy_, read_file(policy_) +
                          "  - id: tmux-server\n    action: net.connect\n"
                          "    when: 'net.server matches \"/**/tmux\"'\n    decision: deny\n");
  const std::string outside = t_ + "/ran-outside", inside = t_ + "/ran-inside";
  Outcome r = supervised("ln -s " + sock + " " + t_ + "/link; ln " + sock + " " + t_ + "/hard; " + "tmux -S " + t_ +
                         "/link new-window -d 'touch " + outside + "'; echo link=$?; " + "tmux -S " + t_ +
                         "/hard new-window -d 'touch " + outside + "'; echo hard=$?; " + "tmux -S " + sock +
                         " new-window -d 'touch " + outside + "'; echo direct=$?; " +
                         // The session's own tmux server is the session's business.
                         "tmux -S " + t_ + "/inner new-session -d -s inner 'touch " + inside + "; sleep 2'; " +
                         "echo inner=$?; sleep 0.5; tmux -S " + t_ + "/inner kill-server; echo kill=$?");
  for (const char* want : {"link=1", "hard=1", "direct=1", "inner=0", "kill=0"})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out << r.err;
  usleep(500 * 1000);  // what the outside server was asked to run would have run by now
  struct stat st;
  EXPECT_NE(stat(outside.c_str(), &st), 0) << "the server outside the session ran a command";
  EXPECT_EQ(stat(inside.c_str(), &st), 0) << "the session's own tmux server ran its command";
  size_t refused = 0;
  for (auto& e : events("deny"))
    if (e.row.verdict.rule_id == "tmux-server") {
      ++refused;
      EXPECT_EQ(e.row.ev.action, cb::Action::NetConnect);
      EXPECT_NE(e.row.ev.target.find("/tmux"), std::string::npos)
          << "the refusal names the server: " << e.row.ev.target;
    }
  EXPECT_GE(refused, 3u) << "each of the three names was refused as the same server";
}

TEST_F(Session, AllowingIoUringByRuleWorksAndMarksTheSessionDegraded) {
  write_file(policy_, read_file(policy_) + "  - id: uring-ok\n    action: sys.io_uring\n    decision: allow\n");
  CB_REQUIRE_HOST(cb::test::io_uring());
  Outcome r = supervised("try_op io_uring_setup; echo rc=$?");
  EXPECT_NE(r.out.find("rc=0"), std::string::npos) << r.out << r.err;
  auto rd = cb::db::Reader::open(db_);
  ASSERT_TRUE(rd.ok());
  auto s = (*rd)->sessions();
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 1u);
  bool degraded = false;
  for (auto& d : s->front().degraded)
    if (d.find("io_uring") != std::string::npos) degraded = true;
  EXPECT_TRUE(degraded) << "the session says io_uring was let through";
}

TEST_F(Session, UnmountingAProtectedTreeIsDeniedANamespaceIsNot) {
  // Unmounting is refused whatever namespace it is in (a read-only tree's
  // copy would uncover what it covers); namespaces and chroot are what
  // sandboxes are made of, and inside them names keep their meaning
  // (tests/layers/layers.sh).
  Outcome r = supervised(
      "try_op umount $P; echo umount=$?; try_op unshare Um; echo unshare=$?; try_op chroot $P; echo chroot=$?");
  EXPECT_NE(r.out.find("umount=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unshare=0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("chroot=0"), std::string::npos) << r.out;
  expect_intact();
}

TEST_F(Session, CachedNamesFollowDirectoriesThatMove) {
  // A rule only the supervisor can enforce (it depends on the process),
  // on a directory the shell's cwd is moved into: its relative paths now
  // name guarded files, whatever name the supervisor saw before.
  write_file(policy_, read_file(policy_) + "  - id: guarded\n    action: file.delete\n    path: [\"" + t_ +
                          "/guarded/**\"]\n"
                          "    when: 'proc.name != \"nobody\"'\n    decision: deny\n");
  Outcome r = supervised(
      "mkdir $T/a && cd $T/a && echo x > x && echo y > y && rm y && mv $T/a $T/guarded && rm x; "
      "echo rc=$?");
  EXPECT_NE(r.out.find("rc=1"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(read_file(t_ + "/guarded/x"), "x\n");
  bool found = false;
  for (auto& e : events("deny"))
    if (e.row.ev.path == t_ + "/guarded/x" && e.row.verdict.rule_id == "guarded") found = true;
  EXPECT_TRUE(found);
}

TEST_F(Session, CreatesLandWhereTheirPathLeadsEvenWhenANameIsRepointed) {
  // Creating in the protected tree is allowed: the supervisor carries it out
  // past the read-only mount.  Creates elsewhere are left to the kernel once
  // their directory is known to be on a writable mount (remembered by name),
  // so a name that comes to lead into the tree, through a new symlink or a
  // rename, must not be taken for the directory it was.
  Outcome r = supervised(
      "mkdir $T/keep && echo a > $T/keep/a && (set -C; echo b > $T/keep/b) && mkdir $T/keep/sub && "
      "echo in > $P/new && "
      "ln -s $P $T/link && echo via > $T/link/via && "
      "mkdir $T/w && echo a > $T/w/a && rm -rf $T/w && ln -s $P $T/w && echo y > $T/w/y && "
      "mkdir $T/v && echo a > $T/v/a && rm -rf $T/v && ln -s $P $T/tmp && mv -T $T/tmp $T/v && "
      "(set -C; echo z > $T/v/z) && mkdir $T/v/zd && "
      "ln -s $P/fin $T/fin && echo fin > $T/fin && echo again > $T/keep/a && "
      "echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(read_file(t_ + "/keep/a"), "again\n");
  EXPECT_EQ(read_file(t_ + "/keep/b"), "b\n");
  for (auto [name, content] : std::map<std::string, std::string>{
           {"new", "in\n"}, {"via", "via\n"}, {"y", "y\n"}, {"z", "z\n"}, {"fin", "fin\n"}})
    EXPECT_EQ(read_file(p_ + "/" + name), content) << name << " was created in the protected tree";
  struct stat st;
  EXPECT_EQ(stat((p_ + "/zd").c_str(), &st), 0);
  expect_intact();
  // Every create is on record, under the name it really got, and allowed.
  std::set<std::string> created;
  for (auto& e : events())
    if (e.row.ev.action == cb::Action::FileCreate && e.row.allowed && e.row.result_errno <= 0)
      created.insert(e.row.ev.path);
  for (const std::string& p : {t_ + "/keep", t_ + "/keep/a", t_ + "/keep/b", t_ + "/keep/sub", p_ + "/new", p_ + "/via",
                               p_ + "/y", p_ + "/z", p_ + "/zd", p_ + "/fin"})
    EXPECT_TRUE(created.count(p)) << p << " is not recorded as created";
}

TEST_F(Session, CreatesCarriedOutPastTheMountTakeTheUmaskOfTheMoment) {
  // umask(2) does not reach the supervisor: what it creates on the command's
  // behalf (inside the read-only tree) reads the umask when it does.
  Outcome r = supervised(
      "umask 077 && echo a > $P/u1 && mkdir $P/u2 && umask 022 && echo b > $P/u3 && mkdir $P/u4 && "
      "umask 027 && echo c > $T/u5 && echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.out << r.err;
  auto mode = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  };
  EXPECT_EQ(mode(p_ + "/u1"), 0600u);
  EXPECT_EQ(mode(p_ + "/u2"), 0700u);
  EXPECT_EQ(mode(p_ + "/u3"), 0644u);
  EXPECT_EQ(mode(p_ + "/u4"), 0755u);
  EXPECT_EQ(mode(t_ + "/u5"), 0640u);
}

TEST_F(Session, OpensThatMayCreateAreNamedByWhatTheyDid) {
  // However the open reaches the trail (the tracer's record, the short way's
  // row without it, the long way), making a file, emptying it and appending
  // to it are three different things.
  Outcome r = supervised("echo a > $T/e && echo b > $T/e && echo c >> $T/e && echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.out << r.err;
  std::vector<cb::Action> actions;
  for (auto& e : events())
    if (e.row.ev.path == t_ + "/e") actions.push_back(e.row.ev.action);
  EXPECT_EQ(actions,
            (std::vector<cb::Action>{cb::Action::FileCreate, cb::Action::FileTruncate, cb::Action::FileWrite}));
}

TEST_F(Session, HandlesOpenedOutsideNeverWriteIntoAReadOnlyTree) {
  // A directory moved into the tree would take its open handles (a shell's
  // cwd in it) past the mount.  The kernel answers EXDEV across the mount,
  // so mv copies (or gives up): whatever landed in the tree is new and stays.
  Outcome r = supervised("mkdir $T/d && cd $T/d && echo x > x && mv $T/d $P/d; rm -f x; echo gone > y; echo done");
  EXPECT_NE(r.out.find("done"), std::string::npos) << r.err;
  if (access((p_ + "/d").c_str(), F_OK) == 0) {
    EXPECT_EQ(read_file(p_ + "/d/x"), "x\n") << "what was moved in cannot be deleted through the old handle";
    EXPECT_NE(access((p_ + "/d/y").c_str(), F_OK), 0) << "nor written to";
  }
  expect_intact();
}

TEST_F(Session, TheListenerNeverReachesTheCommand) {
  Outcome r = supervised("try_op notify_fds");
  EXPECT_EQ(r.out, "0\n") << r.err;
}

// Both race cases, repeatedly: a thread flipping the path buffer between a
// decoy and the protected file; a symlinked directory swapped under a path.
TEST_F(Session, PathBufferFlipRaceNeverWins) {
  for (int i = 0; i < 20; ++i) {
    Outcome r = supervised("try_op flip_unlink $P/keep.txt $T/decoy 1");
    ASSERT_EQ(read_file(p_ + "/keep.txt"), "keep me\n") << "run " << i << ": " << r.err;
  }
  expect_intact();
}

TEST_F(Session, SymlinkSwapRaceNeverWins) {
  mkdir((t_ + "/decoy").c_str(), 0755);
  for (int i = 0; i < 20; ++i) {
    Outcome r = supervised(
        "( end=$(($(date +%s)+1)); while [ $(date +%s) -lt $end ]; do ln -sfn $T/decoy $T/a; ln -sfn $P $T/a; done ) &"
        " end=$(($(date +%s)+1)); while [ $(date +%s) -lt $end ]; do touch $T/decoy/keep.txt; rm -f $T/a/keep.txt; "
        "done; wait");
    ASSERT_EQ(read_file(p_ + "/keep.txt"), "keep me\n") << "run " << i << ": " << r.err;
  }
  expect_intact();
}

TEST_F(Session, BackgroundProcessesStaySupervisedAfterTheCommandExits) {
  Outcome r = supervised("(sleep 1; rm -f $P/keep.txt; echo late > $T/late) >/dev/null 2>&1 & exit 0");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(read_file(t_ + "/late"), "late\n") << "the session ends when its last process has";
  expect_intact();
  expect_denial_recorded();
}

// A live view (the app, `cottonbox events` on a running session) shows what
// happened moments ago.  The tracer wakes its reader only every few
// thousand records, so a burst smaller than that, followed by quiet, must
// still reach the database at once, not trickle in a slice per timeout.
TEST_F(Session, RecordsReachTheDatabaseWhileTheSessionRuns) {
  const char* fake = getenv("COTTONBOX_FAKE_MISSING");
  if (geteuid() != 0 || (fake && std::string(fake).find("ebpf") != std::string::npos))
    GTEST_SKIP() << "needs the eBPF tracer (root), which records what no rule decides";
  constexpr int kFiles = 3000;
  Outcome r;
  std::thread session([&] {
    r = supervised("i=0; while [ $i -lt " + std::to_string(kFiles) +
                   " ]; do : > $T/live$i; i=$((i+1)); done; : > $T/made; "
                   "n=0; while [ ! -e $T/stop ] && [ $n -lt 300 ]; do sleep 0.05; n=$((n+1)); done");
  });
  auto stop = [&] {
    write_file(t_ + "/stop", "");
    session.join();
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (access((t_ + "/made").c_str(), F_OK) != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (access((t_ + "/made").c_str(), F_OK) != 0) {
    stop();
    FAIL() << "the command did not make its files: " << r.err;
  }
  auto made = std::chrono::steady_clock::now();
  size_t seen = 0;
  std::chrono::milliseconds took{0};
  while (std::chrono::steady_clock::now() - made < std::chrono::seconds(3)) {
    auto rd = cb::db::Reader::open(db_);
    if (rd.ok()) {
      cb::db::EventQuery q;
      q.action = "file.create";
      q.path_glob = t_ + "/live*";
      if (auto ev = (*rd)->events(q); ev.ok()) seen = ev->size();
    }
    took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - made);
    if (seen >= kFiles) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop();
  EXPECT_EQ(r.status, 0) << r.err;
  // The store commits every 50 ms and the reader drains on a 50 ms
  // timeout: well under a second on a loaded machine.
  EXPECT_EQ(seen, static_cast<size_t>(kFiles))
      << "rows in the database " << took.count() << " ms after the command made its files";
  EXPECT_LT(took.count(), 1000) << "rows reached the database only after " << took.count() << " ms";
}

// The session row says which tracer recorded it, and a session whose tracer
// was missing or failed to load says so and still records every denial.
TEST_F(Session, TheSessionSaysWhichTracerRecordedIt) {
  Outcome r = supervised("rm -f $P/keep.txt; echo x >> $P/sub/deep.txt; chmod 600 $P/data.bin; true");
  EXPECT_EQ(r.status, 0) << r.err;
  expect_intact();
  auto rd = cb::db::Reader::open(db_);
  ASSERT_TRUE(rd.ok());
  auto s = (*rd)->sessions();
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 1u);
  const auto& sess = s->front();
  const char* fake = getenv("COTTONBOX_FAKE_MISSING");
  bool no_tracer = geteuid() != 0 || (fake && std::string(fake).find("ebpf") != std::string::npos);
  bool seccomp_only_said = false;
  for (const auto& d : sess.degraded)
    if (d.find("running seccomp-only") != std::string::npos) seccomp_only_said = true;
  if (no_tracer) {
    EXPECT_EQ(sess.start.tracer, "seccomp");
    EXPECT_TRUE(seccomp_only_said) << "a session without its tracer is degraded, and says why";
  } else {
    EXPECT_EQ(sess.start.tracer, "seccomp,ebpf");
    EXPECT_FALSE(seccomp_only_said);
  }
  // Delete, write and attribute change, each refused and recorded by rule.
  std::set<cb::Action> denied;
  for (auto& e : events("deny"))
    if (e.row.verdict.rule_id == "protect" && !e.row.allowed) denied.insert(e.row.ev.action);
  EXPECT_TRUE(denied.count(cb::Action::FileDelete));
  EXPECT_TRUE(denied.count(cb::Action::FileWrite));
  EXPECT_TRUE(denied.count(cb::Action::FileAttr));
}

// `--layers` (plan/layers.h): a session with layers switched off names them
// in its degradations, and what is left still does its own job: the mounts
// alone refuse the write, the supervisor alone refuses and records it, the
// tracer alone records the delete it cannot stop.
TEST_F(Session, LayersSwitchedOffAreNamedAndTheRestStillHolds) {
  auto degraded = [&]() {
    auto rd = cb::db::Reader::open(db_);
    EXPECT_TRUE(rd.ok());
    auto s = (*rd)->sessions();
    EXPECT_TRUE(s.ok() && !s->empty());
    return s->back().degraded;
  };
  auto said = [](const std::vector<std::string>& d, const std::string& text) {
    return std::any_of(d.begin(), d.end(), [&](const std::string& x) { return x.find(text) != std::string::npos; });
  };

  Outcome r = supervised("rm -f $P/keep.txt; echo x >> $P/sub/deep.txt; true", {"--layers", "notify"});
  EXPECT_EQ(r.status, 0) << r.err;
  expect_intact();
  expect_denial_recorded();
  auto d = degraded();
  EXPECT_TRUE(said(d, "layers switched off by --layers: tracer,mounts,landlock")) << ::testing::PrintToString(d);

  if (cb::test::root().available || cb::test::user_namespaces().available) {
    std::remove(db_.c_str());
    r = supervised(
        "rm -f $P/keep.txt; echo x >> $P/sub/deep.txt; mount -o remount,rw $P 2>/dev/null; rm -f $P/keep.txt; true",
        {"--layers", "mounts"});
    EXPECT_EQ(r.status, 0) << r.err;
    expect_intact();
    d = degraded();
    EXPECT_TRUE(said(d, "layers switched off by --layers: notify,tracer,landlock")) << ::testing::PrintToString(d);
    EXPECT_TRUE(said(d, "no supervisor of its own: --layers leaves the notify layer out"))
        << ::testing::PrintToString(d);
    EXPECT_FALSE(said(d, "outer supervisor")) << "there is none: " << ::testing::PrintToString(d);
  }

  if (cb::test::root().available && cb::test::bpf_programs().available && !getenv("COTTONBOX_FAKE_MISSING")) {
    std::remove(db_.c_str());
    r = supervised("rm -f $P/keep.txt; true", {"--layers", "tracer"});
    EXPECT_EQ(r.status, 0) << r.err;
    struct stat st;
    EXPECT_NE(lstat((p_ + "/keep.txt").c_str(), &st), 0) << "the tracer alone records; it cannot refuse";
    bool recorded = false;
    for (auto& e : events())
      if (e.row.ev.action == cb::Action::FileDelete && e.row.ev.path == p_ + "/keep.txt") recorded = true;
    EXPECT_TRUE(recorded) << "the delete it let happen is in the trail";
    write_file(p_ + "/keep.txt", "keep me\n");
  }

  // Bad lists are cottonbox's own errors, and so is asking for a layer twice over.
  for (auto bad : {"seccomp", "notify,notify", ""}) {
    r = cottonbox({"run", "--layers", bad, "--db", db_, "--", "/bin/true"});
    EXPECT_EQ(r.status, 125) << bad;
    EXPECT_NE(r.err.find("--layers"), std::string::npos) << r.err;
  }
  r = cottonbox({"run", "--layers", "notify", "--tracer", "ebpf", "--db", db_, "--", "/bin/true"});
  EXPECT_EQ(r.status, 125) << r.err;
}

// `check --layers` shows where each rule lands with those layers alone.
TEST_F(Session, CheckWithLayersSaysWhereEachRuleLandsThen) {
  auto layer = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> a = {"check", "--json", "--no-keep", "--policy", policy_};
    a.insert(a.end(), extra.begin(), extra.end());
    Outcome r = cottonbox(a);
    EXPECT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (auto& rule : j["rules"])
      if (rule["id"] == "protect") return rule["layer"].get<std::string>();
    return std::string("(no rule)");
  };
  EXPECT_EQ(layer({"--layers", "notify"}), "notify");
  EXPECT_EQ(layer({"--layers", "mounts"}), "mount");
  EXPECT_EQ(layer({"--layers", "tracer"}), "none");
  EXPECT_EQ(layer({"--layers", "landlock"}), "none");
  Outcome r = cottonbox({"check", "--no-keep", "--policy", policy_, "--layers", "mounts,landlock"});
  EXPECT_NE(r.out.find("Layers switched off (--layers): notify,tracer"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Reaching the supervisor: nothing (no notify layer)"), std::string::npos) << r.out;
  EXPECT_EQ(cottonbox({"check", "--layers", "bogus"}).status, 125);
}

TEST_F(Session, TheAuditDatabaseCannotBeErasedFromInside) {
  Outcome r = supervised("rm -f $DB $DB-wal $DB-shm; : > $DB; echo x > $DB-wal; mv $(dirname $DB) $T/gone; true");
  auto ev = events();
  EXPECT_FALSE(ev.empty()) << "the trail survived: " << r.err;
  bool self = false;
  for (auto& e : ev)
    if (e.row.verdict.rule_id.rfind("cottonbox:self-protect", 0) == 0 && !e.row.allowed) self = true;
  EXPECT_TRUE(self) << "self-protection denials are recorded";
}

// ----------------------------------------------------------------- benign --

TEST_F(Session, BenignWorkOutsideRunsAsItWouldNatively) {
  const char* work =
      "set -e; mkdir -p $T/proj/src && cd $T/proj"
      " && printf 'int main(void){return 0;}\\n' > src/main.c"
      " && printf 'all: build/app\\nbuild/app: src/main.c\\n\\tmkdir -p build && cc -o build/app src/main.c\\n' > "
      "Makefile"
      " && make -s && ./build/app"
      " && git init -q . && git -c user.email=a@b -c user.name=a add -A"
      " && git -c user.email=a@b -c user.name=a commit -q -m init"
      " && rm -rf build && tar czf ../p.tgz . && mkdir ../x && tar xzf ../p.tgz -C ../x"
      " && sed -i s/0/0/ src/main.c && mv src/main.c src/m.c && rm -rf ../x"
      " && cat $P/keep.txt > /dev/null && cp -r $P ../copy && exit 3";
  Outcome r = supervised(work);
  EXPECT_EQ(r.status, 3) << r.err;
  std::string tproj = t_ + "/proj/src/m.c";
  EXPECT_EQ(access(tproj.c_str(), F_OK), 0);
  for (auto& e : events("deny"))
    ADD_FAILURE() << "benign work was denied: " << cb::action_name(e.row.ev.action) << " " << e.row.ev.path;
  expect_intact();
}

TEST_F(Session, TheRefusalIsSaidBeforeTheRefusedProgramBlamesTheKernel) {
  // Without -q: the first refusal by a rule is named on the terminal, and
  // it comes first, whatever the scheduler does with the two writers.
  for (int i = 0; i < 5; ++i) {
    Outcome r =
        cottonbox({"run", "--policy", policy_, "--db", db_, "--ask", "deny", "--", "/bin/rm", p_ + "/keep.txt"});
    EXPECT_NE(r.status, 0);
    size_t ours = r.err.find("cottonbox: refused file.delete");
    size_t rms = r.err.find("rm: cannot remove");
    ASSERT_NE(ours, std::string::npos) << r.err;
    ASSERT_NE(rms, std::string::npos) << r.err;
    EXPECT_LT(ours, rms) << r.err;
  }
  expect_intact();
}

TEST_F(Session, ObserveBlocksNothingAndRecordsWhatItWouldHaveDenied) {
  Outcome r = supervised("rm $P/keep.txt", {"--observe"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(access((p_ + "/keep.txt").c_str(), F_OK), 0) << "observe mode must not block";
  bool found = false;
  for (auto& e : events("deny"))
    if (e.row.ev.path == p_ + "/keep.txt" && !e.row.enforced) found = true;
  EXPECT_TRUE(found) << "the would-be denial is recorded, marked not enforced";
}

// ------------------------------------------------------------ exit codes --

TEST_F(Session, ExitStatusesFollowTheCommand) {
  EXPECT_EQ(supervised("exit 7").status, 7);
  EXPECT_EQ(supervised("kill -TERM $$").status, 128 + SIGTERM);
  EXPECT_EQ(cottonbox({"run", "--db", db_, "--policy", policy_, "-q", "--", "/nonexistent/cmd"}).status, 127);
  write_file(t_ + "/noexec", "#!/bin/sh\n", 0644);
  EXPECT_EQ(cottonbox({"run", "--db", db_, "--policy", policy_, "-q", "--", t_ + "/noexec"}).status, 126);
  EXPECT_EQ(cottonbox({"run", "--bogus-option", "--", "true"}).status, 125);
  EXPECT_EQ(cottonbox({"run", "--db", db_, "--policy", policy_}).status, 125) << "no command";
}

TEST_F(Session, AMalformedPolicyIsRefusedWithItsLocation) {
  std::string bad = dir_ + "/bad.yaml";
  write_file(bad, "version: 1\ndefault: allow\nrules:\n  - id: x\n    action: [file.delet]\n    decision: deny\n");
  Outcome r = cottonbox({"run", "--policy", bad, "--db", db_, "--", "true"});
  EXPECT_EQ(r.status, 125);
  EXPECT_NE(r.err.find("bad.yaml:5:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("file.delete"), std::string::npos) << "suggests the right name: " << r.err;
}

TEST_F(Session, SigtermReachesTheCommandAndTheTrailIsFlushed) {
  std::vector<std::string> a = {kCottonbox,
                                "run",
                                "--policy",
                                policy_,
                                "--db",
                                db_,
                                "-q",
                                "--",
                                "/bin/sh",
                                "-c",
                                "rm -f $P/keep.txt; exec sleep 30"};
  pid_t pid = fork();
  if (pid == 0) {
    for (auto& [k, v] : env()) setenv(k.c_str(), v.c_str(), 1);
    if (chdir(dir_.c_str())) _exit(1);
    setsid();
    std::vector<char*> av;
    for (auto& s : a) av.push_back(const_cast<char*>(s.c_str()));
    av.push_back(nullptr);
    execv(av[0], av.data());
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 128 + SIGTERM);
  auto r = cb::db::Reader::open(db_);
  ASSERT_TRUE(r.ok());
  auto s = (*r)->sessions();
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ(s->front().state, cb::SessionState::Ended);
  EXPECT_EQ(s->front().denials, 1u);
}

TEST_F(Session, AsksFollowAskModeAndAreRecordedAsApprovals) {
  write_file(policy_,
             "version: 1\ndefault: allow\nrules:\n"
             "  - id: careful\n    action: file.delete\n    path: [\"" +
                 t_ + "/**\"]\n    decision: ask\n");
  write_file(t_ + "/a", "a");
  write_file(t_ + "/b", "b");
  Outcome denied = cottonbox({"run", "--policy", policy_, "--db", db_, "--ask", "deny", "-q", "--", "rm", t_ + "/a"});
  EXPECT_NE(denied.status, 0);
  EXPECT_EQ(access((t_ + "/a").c_str(), F_OK), 0);
  Outcome allowed = cottonbox({"run", "--policy", policy_, "--db", db_, "--ask", "allow", "-q", "--", "rm", t_ + "/b"});
  EXPECT_EQ(allowed.status, 0) << allowed.err;
  EXPECT_NE(access((t_ + "/b").c_str(), F_OK), 0);
  int approvals = 0;
  for (auto& e : events())
    if (e.approval) ++approvals;
  EXPECT_EQ(approvals, 2);
}

TEST_F(Session, ARootSupervisorActsWithTheTargetsCredentials) {
  if (getuid() != 0) GTEST_SKIP() << "needs root (a root supervisor, an unprivileged target)";
  std::string rootonly = dir_ + "/rootonly";
  mkdir(rootonly.c_str(), 0755);
  // The command drops to nobody, then tries to create a file in a directory
  // only root may write: the supervisor carries out the create, as nobody.
  Outcome r = supervised("try_op setuid_create 65534 " + rootonly + "/x; echo rc=$?", {});
  EXPECT_NE(r.out.find("rc=13"), std::string::npos) << r.out << r.err;  // EACCES
  EXPECT_NE(access((rootonly + "/x").c_str(), F_OK), 0);
}

// ------------------------------------------------------------- lifecycle --

// True when a live (not zombie) process has exactly this argv, "a b" for {a, b}.
bool process_running(const std::string& argv_spaced) {
  std::string want = argv_spaced;
  for (auto& c : want)
    if (c == ' ') c = '\0';
  want.push_back('\0');
  DIR* d = opendir("/proc");
  bool found = false;
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (!isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    std::string base = std::string("/proc/") + e->d_name;
    std::string stat = read_file(base + "/stat");
    size_t r = stat.rfind(')');
    if (r == std::string::npos || r + 2 >= stat.size() || stat[r + 2] == 'Z') continue;
    if (read_file(base + "/cmdline") == want) found = true;
  }
  if (d) closedir(d);
  return found;
}

TEST_F(Session, IfTheSupervisorDiesTheSessionDiesWithItAndIsMarkedAborted) {
  pid_t pid = fork();
  if (pid == 0) {
    for (auto& [k, v] : env()) setenv(k.c_str(), v.c_str(), 1);
    if (chdir(dir_.c_str())) _exit(1);
    setsid();
    int n = open("/dev/null", O_RDWR);
    dup2(n, 0), dup2(n, 1), dup2(n, 2);
    execl(kCottonbox.c_str(), kCottonbox.c_str(), "run", "--policy", policy_.c_str(), "--db", db_.c_str(), "-q", "--",
          "/bin/sh", "-c", "rm -f $P/keep.txt; (setsid sleep 31.4159 &); sleep 31.4159", nullptr);
    _exit(127);
  }
  for (int i = 0; i < 100 && !process_running("sleep 31.4159"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(process_running("sleep 31.4159"));
  // The denial is committed (the writer batches; a loaded machine is slow).
  auto committed_denials = [&]() -> uint64_t {
    auto r = cb::db::Reader::open(db_);
    if (!r.ok()) return 0;
    auto s = (*r)->sessions();
    return s.ok() && s->size() == 1 ? s->front().denials : 0;
  };
  for (int i = 0; i < 200 && committed_denials() < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_running("sleep 31.4159");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "every process of the session, the detached one too, dies with the supervisor";
  auto r = cb::db::Reader::open(db_);
  ASSERT_TRUE(r.ok());
  auto s = (*r)->sessions();
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ(s->front().state, cb::SessionState::Aborted);
  EXPECT_EQ(s->front().denials, 1u) << "the trail holds the session up to its last committed event";
  expect_intact();
}

// Runs cottonbox on a pseudo-terminal (its controlling terminal), answering
// prompts with `answers` as they appear.  Returns what the terminal showed.
std::string run_on_pty(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                       const std::string& cwd, const std::string& answers, int* status) {
  int master;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    for (auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    if (chdir(cwd.c_str())) _exit(1);
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  std::string seen;
  size_t answered = 0, prompts_seen = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[4096];
      ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;
      seen.append(buf, static_cast<size_t>(n));
    }
    size_t prompts = 0;
    for (size_t i = seen.find("[y] allow once"); i != std::string::npos; i = seen.find("[y] allow once", i + 1))
      ++prompts;
    if (prompts > prompts_seen && answered < answers.size()) {
      prompts_seen = prompts;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      (void)!write(master, &answers[answered++], 1);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      break;
    }
  }
  int st = 0;
  waitpid(pid, &st, 0);
  close(master);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return seen;
}

class Asks : public Session {
 protected:
  void SetUp() override {
    Session::SetUp();
    write_file(policy_,
               "version: 1\ndefault: allow\nrules:\n"
               "  - id: careful\n    action: file.delete\n    path: [\"" +
                   t_ +
                   "/asked*\"]\n    decision: ask\n"
                   "    message: think twice\n");
    write_file(t_ + "/asked1", "1");
    write_file(t_ + "/asked2", "2");
  }
  std::vector<std::string> argv(const std::string& shell, const char* timeout = "20") {
    return {kCottonbox,      "run",   "--policy", policy_, "--db",    db_,  "--ask", "tty",
            "--ask-timeout", timeout, "-q",       "--",    "/bin/sh", "-c", shell};
  }
};

TEST_F(Asks, TheTerminalPromptShowsTheContextAndItsAnswersHold) {
  int status;
  std::string screen = run_on_pty(argv("rm -f $T/asked1; rm -f $T/asked2"), env(), dir_, "ny", &status);
  EXPECT_EQ(status, 0) << screen;
  EXPECT_EQ(access((t_ + "/asked1").c_str(), F_OK), 0) << "answered n: kept";
  EXPECT_NE(access((t_ + "/asked2").c_str(), F_OK), 0) << "answered y: deleted";
  EXPECT_NE(screen.find("delete 1 file"), std::string::npos) << screen;
  EXPECT_NE(screen.find(t_ + "/asked1"), std::string::npos) << screen;
  EXPECT_NE(screen.find("careful: think twice"), std::string::npos) << screen;
  EXPECT_NE(screen.find("rm -f " + t_ + "/asked1"), std::string::npos) << "the process chain with argv: " << screen;
  int approvals = 0;
  for (auto& e : events())
    if (e.approval && e.approval->answered_by == "tty") ++approvals;
  EXPECT_EQ(approvals, 2);
}

TEST_F(Asks, NoAnswerBeforeTheTimeoutMeansDeny) {
  int status;
  std::string screen = run_on_pty(argv("rm -f $T/asked1; echo rc=$?", "1"), env(), dir_, "", &status);
  EXPECT_EQ(access((t_ + "/asked1").c_str(), F_OK), 0) << screen;
  bool timed_out = false;
  for (auto& e : events())
    if (e.approval && e.approval->answer == "timeout" && !e.row.allowed) timed_out = true;
  EXPECT_TRUE(timed_out) << screen;
}

TEST_F(Asks, APendingAskDoesNotBlockUnrelatedSyscalls) {
  int status;
  // While the first rm waits for an answer, another process deletes 50
  // files (each one judged by the supervisor) and says so; only then do we
  // answer.
  std::string screen =
      run_on_pty(argv("rm -f $T/asked1 & i=0; while [ $i -lt 50 ]; do : > $T/x$i; rm $T/x$i; i=$((i+1)); done; "
                      "echo unrelated-done; wait",
                      "3"),
                 env(), dir_, "", &status);
  size_t done = screen.find("unrelated-done");
  size_t answer = screen.find("no answer: denied");
  EXPECT_NE(done, std::string::npos) << screen;
  EXPECT_TRUE(answer == std::string::npos || done < answer) << "unrelated work finished while the ask was open";
}

// ------------------------------------------------------------ network --

TEST_F(Session, NetworkRulesJudgeTheAddressAndTheConnectIsCarriedOutAsChecked) {
  write_file(policy_,
             "version: 1\ndefault: allow\nrules:\n"
             "  - id: no-telnet\n    action: net.connect\n    path: [\"tcp:*:23\"]\n    decision: deny\n"
             "  - id: no-secret-socket\n    action: net.connect\n    path: [\"unix:" +
                 t_ +
                 "/secret.sock\"]\n"
                 "    decision: deny\n");
  const char* py = R"(
import os, socket, sys, threading
t = os.environ["T"]
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(4)
port = srv.getsockname()[1]
c = socket.socket(); c.settimeout(5); c.connect(("127.0.0.1", port)); print("tcp-ok")  # blocking connect
try:
    socket.create_connection(("127.0.0.1", 23), timeout=2); print("telnet-connected")
except PermissionError: print("telnet-denied")
except OSError as e: print("telnet-other", e)
for name in ("open.sock", "secret.sock"):
    u = socket.socket(socket.AF_UNIX); u.bind(os.path.join(t, name)); u.listen(1)
    k = socket.socket(socket.AF_UNIX)
    try: k.connect(os.path.join(t, name)); print(name, "connected")
    except PermissionError: print(name, "denied")
)";
  write_file(t_ + "/net.py", py);
  Outcome r = supervised("python3 $T/net.py");
  EXPECT_NE(r.out.find("tcp-ok"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("telnet-denied"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("open.sock connected"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("secret.sock denied"), std::string::npos) << r.out << r.err;
  int denied = 0;
  for (auto& e : events("deny"))
    if (e.row.ev.action == cb::Action::NetConnect) ++denied;
  EXPECT_EQ(denied, 2);
}

// A UDP server on a loopback address, outside the session: what reached it.
class UdpServer {
 public:
  explicit UdpServer(const char* ip) : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, ip, &a.sin_addr);
    socklen_t len = sizeof a;
    int big = 4 << 20;
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
  }
  ~UdpServer() { close(fd_); }
  int port() const { return port_; }
  std::vector<std::string> received() {
    std::vector<std::string> got;
    char buf[65536];
    ssize_t n;
    while ((n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT)) >= 0) got.emplace_back(buf, static_cast<size_t>(n));
    return got;
  }

 private:
  int fd_;
  int port_ = 0;
};

class Sends : public Session {
 protected:
  void SetUp() override {
    Session::SetUp();
    ASSERT_GT(allowed_.port(), 0);
    ASSERT_GT(denied_.port(), 0) << "127.0.0.2 is loopback on Linux";
    ports_ = "export AP=" + std::to_string(allowed_.port()) + " DP=" + std::to_string(denied_.port()) + "; ";
    write_file(policy_,
               "version: 1\ndefault: allow\nrules:\n  - id: no-send-there\n    action: net.send\n"
               "    path: [\"udp:127.0.0.2:" +
                   std::to_string(denied_.port()) + "\"]\n    decision: deny\n");
  }
  UdpServer allowed_{"127.0.0.1"}, denied_{"127.0.0.2"};
  std::string ports_;
};

bool has(const std::string& out, const std::string& line) { return out.find(line + "\n") != std::string::npos; }

TEST_F(Sends, DatagramsAreJudgedByWhereTheyGoAndSentAsChecked) {
  const char* py = R"(
import ctypes, os, socket, struct
A = ("127.0.0.1", int(os.environ["AP"])); D = ("127.0.0.2", int(os.environ["DP"]))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
def attempt(f):
    try: return f()
    except OSError as e: return "errno %d" % e.errno
print("sendto allowed", s.sendto(bytes(range(256)) + b"\0end", A))
print("sendto denied", attempt(lambda: s.sendto(b"D1", D)))
print("sendmsg denied", attempt(lambda: s.sendmsg([b"D", b"2"], [], 0, D)))
print("sendmsg allowed", s.sendmsg([b"gather", b"-", b"ed"], [], 0, A))
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure): _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure): _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
    ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p),
    ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure): _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
def sendmmsg(msgs):
    arr, keep = (mmsghdr * len(msgs))(), []
    for i, (dest, data) in enumerate(msgs):
        name = ctypes.create_string_buffer(struct.pack("=H", socket.AF_INET) + struct.pack("!H", dest[1]) +
                                           socket.inet_aton(dest[0]) + bytes(8), 16)
        buf = ctypes.create_string_buffer(data, len(data))
        iov = iovec(ctypes.cast(buf, ctypes.c_void_p), len(data))
        keep += [name, buf, iov]
        arr[i].hdr.name, arr[i].hdr.namelen = ctypes.cast(name, ctypes.c_void_p), 16
        arr[i].hdr.iov, arr[i].hdr.iovlen = ctypes.pointer(iov), 1
    rc = libc.sendmmsg(s.fileno(), arr, len(msgs), 0)
    return rc, ctypes.get_errno() if rc < 0 else 0, [m.len for m in arr]
print("sendmmsg mixed", *sendmmsg([(A, b"M1"), (D, b"M2")]))
print("sendmmsg allowed", *sendmmsg([(A, b"M3"), (A, b"M44")]))
# Descriptors over unix datagram sockets: a pair, and a server by path.
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
r, w = os.pipe()
socket.send_fds(a, [b"fd"], [w])
msg, fds, _, _ = socket.recv_fds(b, 16, 4)
os.write(fds[0], b"through the pair"); print("pair", msg.decode(), os.read(r, 64).decode())
u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); u.bind(os.environ["T"] + "/u.sock")
c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
c.sendmsg([b"fd"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", w))], 0, os.environ["T"] + "/u.sock")
msg, fds, _, _ = socket.recv_fds(u, 16, 4)
os.write(fds[0], b"through the path"); print("path", msg.decode(), os.read(r, 64).decode())
creds = struct.pack("iII", os.getpid(), os.getuid(), os.getgid())
print("credentials", attempt(lambda: a.sendmsg([b"c"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, creds)])))
)";
  write_file(t_ + "/send.py", py);
  Outcome r = supervised(ports_ +
                         "python3 $T/send.py; bash -c 'echo via-bash > /dev/udp/127.0.0.1/$AP' && echo bash-allowed; "
                         "bash -c 'echo via-bash > /dev/udp/127.0.0.2/$DP' || echo bash-refused");
  SCOPED_TRACE(r.out + r.err);
  EXPECT_TRUE(has(r.out, "sendto allowed 260"));
  EXPECT_TRUE(has(r.out, "sendto denied errno 1"));
  EXPECT_TRUE(has(r.out, "sendmsg denied errno 1"));
  EXPECT_TRUE(has(r.out, "sendmsg allowed 9"));
  EXPECT_TRUE(has(r.out, "sendmmsg mixed -1 1 [0, 0]")) << "one denied destination refuses the call";
  EXPECT_TRUE(has(r.out, "sendmmsg allowed 2 0 [2, 3]")) << "msg_len written back for each message";
  EXPECT_TRUE(has(r.out, "pair fd through the pair"));
  EXPECT_TRUE(has(r.out, "path fd through the path"));
  EXPECT_TRUE(has(r.out, "credentials errno 1")) << "SCM_CREDENTIALS are refused";
  EXPECT_TRUE(has(r.out, "bash-allowed"));
  EXPECT_TRUE(has(r.out, "bash-refused")) << "a UDP socket connected to the address sends there";
  std::string exact(256, '\0');
  for (int i = 0; i < 256; ++i) exact[static_cast<size_t>(i)] = static_cast<char>(i);
  exact += std::string("\0end", 4);
  EXPECT_EQ(allowed_.received(), (std::vector<std::string>{exact, "gather-ed", "M3", "M44", "via-bash\n"}));
  EXPECT_EQ(denied_.received(), std::vector<std::string>{});
  std::map<cb::Action, int> denials;
  for (auto& e : events("deny"))
    if (e.row.verdict.rule_id == "no-send-there") ++denials[e.row.ev.action];
  EXPECT_EQ(denials[cb::Action::NetSend], 3) << "sendto, sendmsg, sendmmsg";
  EXPECT_EQ(denials[cb::Action::NetConnect], 1) << "bash's connect, for the send it enables";
}

// A blocking sendmsg on a TCP socket whose reader is slow waits for room
// on a worker, not in the supervisor: the reader's own judged send goes
// through meanwhile, and every byte arrives, in order.
TEST_F(Sends, AStreamSendThatMustWaitNeitherStallsTheSupervisorNorLosesBytes) {
  const char* py = R"(
import os, socket, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
c = socket.socket(); c.connect(srv.getsockname())
s, _ = srv.accept()
data = os.urandom(6 << 20)
got = bytearray()
def reader():
    # Judged by the supervisor while the sender waits for this reader.
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"meanwhile", ("127.0.0.1", int(os.environ["AP"])))
    while len(got) < len(data):
        b = s.recv(1 << 16)
        if not b: break
        got.extend(b)
t = threading.Thread(target=reader); t.start()
print("sent", c.sendmsg([data[:1 << 20], data[1 << 20:]]) == len(data))
t.join()
print("same", bytes(got) == data)
)";
  write_file(t_ + "/stream.py", py);
  Outcome r = supervised(ports_ + "python3 $T/stream.py");
  EXPECT_TRUE(has(r.out, "sent True")) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "same True")) << r.out << r.err;
  EXPECT_EQ(allowed_.received(), std::vector<std::string>{"meanwhile"});
}

// A thread flips the name between the allowed and the denied address while
// another sends to it; a thread re-points the socket's number between a
// netlink socket (which the kernel may be left to send on) and a UDP socket
// while another sends to the denied address through it.  Neither ever
// reaches the denied server.
TEST_F(Sends, ANameOrSocketChangedDuringTheCheckNeverReachesTheDeniedAddress) {
  int sent = 0;
  for (int i = 0; i < 20; ++i) {
    Outcome r = supervised(ports_ + "try_op send_flip $AP $DP 300; try_op send_fdswap $AP $DP 300");
    ASSERT_EQ(denied_.received(), std::vector<std::string>{}) << "run " << i << ": " << r.out << r.err;
    sent += static_cast<int>(allowed_.received().size());
  }
  EXPECT_GT(sent, 0) << "the allowed address was reached";
}

TEST_F(Session, AFifoOpenedForWritingWaitsForItsReaderWithoutStallingTheSession) {
  Outcome r = supervised(
      "mkfifo $T/f; (sleep 0.5; cat $T/f > $T/got) & echo through-the-fifo > $T/f; wait; "
      "cat $T/got; rm -f $P/keep.txt 2>/dev/null; echo end");
  EXPECT_NE(r.out.find("through-the-fifo"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("end"), std::string::npos);
  expect_intact();
}

}  // namespace
