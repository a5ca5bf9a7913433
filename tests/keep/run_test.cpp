// Keeping during a real `cottonbox run`: real programs (rm, sed, mv,
// truncate, chmod, Python, find -delete, cp, git checkout and reset --hard)
// destroy files of a project under the default policy; then `cottonbox
// changes` lists what each command did and `cottonbox undo` gives everything
// back, compared as a user would (content, mode, owner, mtime, xattrs), and
// `undo --created` what git made of its own.  The supervisor killed in the
// middle of an `rm -rf`: its session dies with it, and what was deleted
// comes back.  Also: --no-keep keeps nothing, a file outside the working
// directory and $HOME is not kept, and the session cannot see the keep
// store.  As root, and as a throwaway plain user.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "tests/keep/test_util.h"
#include "tests/support/host_features.h"

namespace cb::keep {
namespace {

using test::FullState;
using test::state_of;
using test::write_file;

const std::string kCottonbox = COTTONBOX_BIN;
constexpr const char* kUser = "cbkeep";  // the throwaway user of the plain-user run
constexpr const char* kAfterRm = "the-session-went-on-after-rm";

struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  bool drop = false;
};

struct Ran {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// What a user would compare after an undo: not atime (reading moves it)
// nor ctime (nothing restores it).
struct Seen {
  bool exists = false;
  mode_t mode = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  int64_t mtime_ns = 0;
  std::string content;
  std::map<std::string, std::string> xattrs;
  bool operator==(const Seen&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Seen& s) {
  if (!s.exists) return os << "(absent)";
  os << std::oct << "mode=" << s.mode << std::dec << " uid=" << s.uid << " gid=" << s.gid << " mtime=" << s.mtime_ns
     << " content=" << ::testing::PrintToString(s.content.substr(0, 80));
  for (auto& [k, v] : s.xattrs) os << " " << k << "=" << v;
  return os;
}

// The pids of every process (from /proc), and what tells them apart.
std::vector<pid_t> all_pids() {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string n = e.path().filename();
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) out.push_back(std::stoi(n));
  }
  return out;
}
std::string link_of(const std::string& p) {
  char buf[256];
  ssize_t n = readlink(p.c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}
std::string pidns_of(pid_t pid) { return link_of("/proc/" + std::to_string(pid) + "/ns/pid"); }
std::string cmdline_of(pid_t pid) {
  std::string c = slurp("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& ch : c)
    if (ch == '\0') ch = ' ';
  return c;
}
// The children of `pid` (every thread's).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::istringstream in(slurp(t.path() / "children"));
    for (pid_t c; in >> c;) out.push_back(c);
  }
  return out;
}
// What is alive (not a zombie) of `pids`.
std::vector<pid_t> alive(const std::vector<pid_t>& pids) {
  std::vector<pid_t> out;
  for (pid_t p : pids) {
    std::string st = slurp("/proc/" + std::to_string(p) + "/stat");
    size_t paren = st.rfind(')');
    if (paren != std::string::npos && paren + 2 < st.size() && st[paren + 2] != 'Z') out.push_back(p);
  }
  return out;
}

std::map<std::string, Seen> tree(const std::string& root) {
  std::map<std::string, Seen> out;
  for (auto& [rel, f] : test::tree_state(root)) {
    Seen s{f.exists, f.mode, f.uid, f.gid, f.mtime_ns, f.content, f.xattrs};
    // A directory's own mtime moves with any entry (git's lock files
    // come and go): its entries are compared instead.
    if (S_ISDIR(f.mode)) s.mtime_ns = 0;
    out[rel] = s;
  }
  return out;
}

class KeepRun : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cb-keeprun.XXXXXX";
    ASSERT_TRUE(mkdtemp(tmpl));
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);
  }
  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "kept " << dir_ << " for inspection\n";
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Lays out the project (the session's working directory), a home and a
  // directory outside both, owned by `who`, with times in the past.
  void lay_out(const Identity& who) {
    proj_ = dir_ + "/proj";
    home_ = dir_ + "/home";
    outside_ = dir_ + "/outside";
    data_ = dir_ + "/data";
    for (const auto& d : {proj_, home_, outside_, data_}) ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
    std::filesystem::create_directories(proj_ + "/src/lib");
    std::filesystem::create_directories(proj_ + "/docs");
    write_file(proj_ + "/src/main.c", "int main() { return 0; }\n");
    write_file(proj_ + "/src/lib/util.c", "int util(void) { return 42; }\n", 0600);
    write_file(proj_ + "/src/lib/util.h", std::string(70000, 'h'), 0640);
    for (int i = 1; i <= 5; ++i)
      write_file(proj_ + "/docs/" + std::to_string(i) + ".txt", "foo line " + std::to_string(i) + "\nfoo\n");
    write_file(proj_ + "/a", "the new b\n");
    write_file(proj_ + "/b", "the old b, which mv replaces\n");
    write_file(proj_ + "/big.log", test::random_bytes(200000, 7));
    write_file(proj_ + "/run.sh", "#!/bin/sh\necho hi\n", 0755);
    write_file(proj_ + "/data.txt", "precious data\n");
    // find -delete: *.tmp files in a directory and below; the rest stays.
    std::filesystem::create_directories(proj_ + "/notes/deep");
    write_file(proj_ + "/notes/a.tmp", "scratch a\n");
    write_file(proj_ + "/notes/b.tmp", test::random_bytes(5000, 11), 0600);
    write_file(proj_ + "/notes/deep/c.tmp", "scratch c, deeper\n", 0640);
    write_file(proj_ + "/notes/keep.md", "# not a .tmp file\n");
    // cp over: the target exists with content, mode and times of its own.
    write_file(proj_ + "/template.txt", "the template, copied over the target\n");
    write_file(proj_ + "/target.txt", "the target's own content, which cp replaces\n", 0640);
    write_file(home_ + "/notes.txt", "notes in the home directory\n");
    write_file(outside_ + "/x.txt", "outside the working directory and home\n");
    if (who.drop) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_))
        ASSERT_EQ(lchown(entry.path().c_str(), who.uid, who.gid), 0);
      ASSERT_EQ(chown(dir_.c_str(), who.uid, who.gid), 0);
    }
    // xattrs where the filesystem takes them: a file find deletes and the
    // file cp writes over carry some, compared after the undo.
    if (auto xa = test::user_xattrs(proj_); xa) {
      for (const char* f : {"/notes/b.tmp", "/target.txt"})
        ASSERT_EQ(setxattr((proj_ + f).c_str(), "user.origin", f, strlen(f), 0), 0) << f;
    } else {
      std::cerr << "note: user xattrs not compared: " << xa.reason << "\n";
    }
    // Past times on everything, so a restored mtime is told from a new one.
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_))
      if (!entry.is_directory()) test::set_times(entry.path(), 1600000000, 1, 1600000000, 123456789);
  }

  // A git repository proj_/name with `files` committed, then `edits` (sh)
  // run in it, owned by `who`; the files' times in the past.
  void git_repo(const std::string& name, const std::map<std::string, std::string>& files, const std::string& edits,
                const Identity& who) {
    std::string repo = proj_ + "/" + name;
    std::filesystem::create_directories(repo);
    for (const auto& [f, content] : files) write_file(repo + "/" + f, content);
    if (who.drop) {
      ASSERT_EQ(chown(repo.c_str(), who.uid, who.gid), 0);
      for (const auto& [f, content] : files) ASSERT_EQ(chown((repo + "/" + f).c_str(), who.uid, who.gid), 0);
    }
    Ran g = run({"/bin/sh", "-c",
                 "git init -q && git add . && git -c user.name=t -c user.email=t@t commit -qm init && " + edits},
                repo, who);
    ASSERT_EQ(g.status, 0) << g.err;
    for (const auto& entry : std::filesystem::directory_iterator(repo))
      if (entry.is_regular_file()) test::set_times(entry.path(), 1600000000, 1, 1600000000, 987654321);
  }

  // Runs argv as `who` in `cwd` with HOME at the test's home.
  Ran run(const std::vector<std::string>& argv, const std::string& cwd, const Identity& who) {
    return wait_for(start(argv, cwd, who));
  }

  // The same without waiting: the child's pid, for wait_for().
  pid_t start(const std::vector<std::string>& argv, const std::string& cwd, const Identity& who) {
    std::string outp = dir_ + "/.out", errp = dir_ + "/.err";
    pid_t pid = fork();
    if (pid == 0) {
      int o = open(outp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      int e = open(errp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
      int n = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (o < 0 || e < 0 || n < 0) _exit(120);
      dup2(n, 0);
      dup2(o, 1);
      dup2(e, 2);
      if (who.drop && (setgroups(0, nullptr) != 0 || setgid(who.gid) != 0 || setuid(who.uid) != 0)) _exit(121);
      if (chdir(cwd.c_str()) != 0) _exit(122);
      setenv("HOME", home_.c_str(), 1);
      unsetenv("XDG_RUNTIME_DIR");  // no GUI to ask
      unsetenv("XDG_CONFIG_HOME");
      unsetenv("XDG_DATA_HOME");
      setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(127);
    }
    return pid;
  }

  Ran wait_for(pid_t pid) {
    std::string outp = dir_ + "/.out", errp = dir_ + "/.err";
    Ran r;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.out = slurp(outp);
    r.err = slurp(errp);
    return r;
  }

  // The home as a user compares it, less what `cottonbox run` itself makes
  // before a session where ~/.config exists (session.cpp,
  // make_dir_in_parent): its empty configuration directories, so that each
  // can be one read-only mount.
  // They are no change of the session's, and undo does not remove them.
  std::map<std::string, Seen> home_tree() {
    auto t = tree(home_);
    for (const char* d : {".config/environment.d", ".config/cottonbox", ".config"}) {
      auto it = t.find(d);
      if (it == t.end()) continue;
      EXPECT_TRUE(S_ISDIR(it->second.mode)) << d;
      if (std::string(d) != ".config") {
        EXPECT_TRUE(std::filesystem::is_empty(home_ + "/" + d)) << d << " is not empty";
      }
      t.erase(it);
    }
    return t;
  }

  // Every file of `before` is there after undo, as it was.
  static void expect_back(const std::map<std::string, Seen>& before, const std::map<std::string, Seen>& after) {
    for (const auto& [rel, st] : before) {
      auto it = after.find(rel);
      if (it == after.end()) {
        ADD_FAILURE() << rel << " is missing after undo";
        continue;
      }
      EXPECT_EQ(it->second, st) << rel;
    }
  }

  std::string db() const { return data_ + "/audit.db"; }
  std::string store() const { return data_ + "/keep"; }

  // One session of `script` (sh -c; each command a child of the shell).
  Ran session(const std::string& script, const Identity& who, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {kCottonbox, "run", "--db", db(), "--ask", "deny", "-q"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", "/bin/sh", "-c", script + "; true"});
    return run(argv, proj_, who);
  }

  // `cottonbox changes --json` of the last session, one object per line.
  std::vector<nlohmann::json> changes(const Identity& who, int64_t session) {
    Ran r = run({kCottonbox, "changes", "--session", std::to_string(session), "--db", db(), "--json"}, proj_, who);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<nlohmann::json> out;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    return out;
  }

  // The change line of `path`, or null.
  static nlohmann::json line_of(const std::vector<nlohmann::json>& lines, const std::string& path) {
    for (const auto& l : lines)
      if (l["path"] == path) return l;
    return nullptr;
  }

  // The whole scenario: every kind of destruction, then undo.
  void destroy_and_undo(const Identity& who, bool with_git) {
    lay_out(who);
    if (with_git) {
      git_repo("repo", {{"tracked.txt", "committed\n"}, {"other.txt", "also committed\n"}},
               "echo 'uncommitted work' >> tracked.txt && echo 'more uncommitted' > other.txt", who);
      // reset --hard over an unstaged edit, a staged edit, and a file added
      // to the index but never committed (reset --hard deletes it).
      git_repo("repo2", {{"tracked.txt", "committed 2\n"}, {"staged.txt", "committed, then staged\n"}},
               "echo 'edited, not committed' >> tracked.txt && echo 'a staged edit' >> staged.txt && "
               "git add staged.txt && echo 'new work, added but never committed' > added.txt && git add added.txt",
               who);
      ASSERT_FALSE(std::filesystem::exists(proj_ + "/repo2/.git/ORIG_HEAD"));
    }
    auto before = tree(proj_);
    auto home_before = home_tree();
    std::string script =
        "rm -rf src; sed -i s/foo/bar/ docs/1.txt docs/2.txt docs/3.txt docs/4.txt docs/5.txt; mv a b; "
        "truncate -s0 big.log; chmod 600 run.sh; "
        "/usr/bin/python3 -c \"open('data.txt', 'w').write('rewritten by a script')\"; "
        "truncate -s 5 " +
        home_ + "/notes.txt; find notes -name '*.tmp' -delete; cp template.txt target.txt";
    if (with_git) script += "; git -C repo checkout -- .; git -C repo2 reset -q --hard";
    Ran s = session(script, who);
    ASSERT_EQ(s.status, 0) << s.err;
    // The session did what it was told.
    ASSERT_FALSE(std::filesystem::exists(proj_ + "/src"));
    ASSERT_EQ(test::read_file(proj_ + "/docs/3.txt"), "bar line 3\nbar\n");
    ASSERT_EQ(test::read_file(proj_ + "/b"), "the new b\n");
    ASSERT_EQ(state_of(proj_ + "/big.log").content.size(), 0u);
    ASSERT_EQ(state_of(proj_ + "/run.sh").mode & 07777, 0600u);
    ASSERT_EQ(test::read_file(proj_ + "/data.txt"), "rewritten by a script");
    ASSERT_FALSE(std::filesystem::exists(proj_ + "/notes/a.tmp"));
    ASSERT_FALSE(std::filesystem::exists(proj_ + "/notes/deep/c.tmp"));
    ASSERT_TRUE(std::filesystem::exists(proj_ + "/notes/keep.md"));
    ASSERT_EQ(test::read_file(proj_ + "/target.txt"), "the template, copied over the target\n");
    if (with_git) {
      ASSERT_EQ(test::read_file(proj_ + "/repo/tracked.txt"), "committed\n");
      ASSERT_EQ(test::read_file(proj_ + "/repo2/tracked.txt"), "committed 2\n");
      ASSERT_EQ(test::read_file(proj_ + "/repo2/staged.txt"), "committed, then staged\n");
      ASSERT_FALSE(std::filesystem::exists(proj_ + "/repo2/added.txt"));
    }

    // `changes`: per command, each line undoable.
    auto lines = changes(who, 1);
    struct Expect {
      std::string path, argv0;
    };
    std::vector<Expect> expected = {
        {proj_ + "/src", "rm"},
        {proj_ + "/src/main.c", "rm"},
        {proj_ + "/src/lib/util.h", "rm"},
        {proj_ + "/docs/1.txt", "sed"},
        {proj_ + "/docs/5.txt", "sed"},
        {proj_ + "/b", "mv"},
        {proj_ + "/big.log", "truncate"},
        {proj_ + "/run.sh", "chmod"},
        {proj_ + "/data.txt", "/usr/bin/python3"},
        {home_ + "/notes.txt", "truncate"},
        {proj_ + "/notes/a.tmp", "find"},
        {proj_ + "/notes/b.tmp", "find"},
        {proj_ + "/notes/deep/c.tmp", "find"},
        {proj_ + "/target.txt", "cp"},
    };
    if (with_git)
      for (const char* f : {"/repo/tracked.txt", "/repo2/tracked.txt", "/repo2/staged.txt", "/repo2/added.txt"})
        expected.push_back({proj_ + f, "git"});
    std::set<uint64_t> commands;
    for (const auto& e : expected) {
      nlohmann::json l = line_of(lines, e.path);
      ASSERT_FALSE(l.is_null()) << e.path << " is not among the changes";
      EXPECT_EQ(l["argv"][0], e.argv0) << e.path;
      EXPECT_EQ(l["undoable"], true) << l.dump();
      commands.insert(l["command"].get<uint64_t>());
    }
    EXPECT_EQ(commands.size(), with_git ? 11u : 9u) << "one command per program the shell started";
    EXPECT_TRUE(line_of(lines, proj_ + "/notes/keep.md").is_null()) << "find deleted only *.tmp";
    // What git made of its own (reset --hard writes ORIG_HEAD) is listed as
    // created: undo leaves it, undo --created removes it.
    nlohmann::json orig_head = line_of(lines, proj_ + "/repo2/.git/ORIG_HEAD");
    if (with_git) {
      ASSERT_FALSE(orig_head.is_null()) << "ORIG_HEAD is not among the changes";
      EXPECT_EQ(orig_head["argv"][0], "git");
      EXPECT_EQ(orig_head["before"], "absent") << orig_head.dump();
      EXPECT_EQ(orig_head["undo"], "created") << orig_head.dump();
      EXPECT_EQ(orig_head["undoable"], true) << orig_head.dump();
    }

    // A delete and a rename over are kept by a hard link to the very inode
    // (no bytes read), even though the session sees its files through a
    // mount namespace of its own.
    std::string journal;
    for (const auto& e : std::filesystem::directory_iterator(store() + "/journal")) journal += slurp(e.path());
    for (const char* p : {"/src/main.c", "/b"}) {
      size_t at = journal.find("path=" + proj_ + p + "\t");
      ASSERT_NE(at, std::string::npos) << p;
      std::string line = journal.substr(at, journal.find('\n', at) - at);
      EXPECT_NE(line.find("kept=linked"), std::string::npos) << line;
    }

    // `undo`: everything as it was.
    Ran u = run({kCottonbox, "undo", "--session", "1", "--db", db()}, proj_, who);
    EXPECT_EQ(u.status, 0) << u.out << u.err;
    auto after = tree(proj_);
    expect_back(before, after);
    // Plain undo gives back what was destroyed and leaves what the session
    // created: here only git's ORIG_HEAD (the commit reset --hard moved
    // from), which a user may still want.  Anything else is a leftover.
    std::set<std::string> created;
    if (with_git) created.insert("repo2/.git/ORIG_HEAD");
    for (const auto& [rel, st] : after)
      if (!before.count(rel)) {
        EXPECT_TRUE(created.count(rel)) << "left by the session: " << rel;
      }
    for (const std::string& rel : created) EXPECT_TRUE(after.count(rel)) << "plain undo removed " << rel;
    EXPECT_EQ(home_tree(), home_before);

    // undo --created removes it too: then the tree is exactly as before.
    if (!created.empty()) {
      Ran c = run({kCottonbox, "undo", "--session", "1", "--created", "--db", db()}, proj_, who);
      EXPECT_EQ(c.status, 0) << c.out << c.err;
      EXPECT_EQ(tree(proj_), before) << c.out;
    }
  }

  // SIGKILL to the supervisor in the middle of an `rm -rf` of thousands of
  // files: the session's processes die with it (nothing goes on deleting
  // unsupervised), and everything deleted before the kill comes back.
  void crash_in_rm_rf(const Identity& who) {
    lay_out(who);
    constexpr int kDirs = 60, kFiles = 50;
    const std::string bulk = proj_ + "/bulk";
    ASSERT_EQ(mkdir(bulk.c_str(), 0755), 0);
    for (int d = 0; d < kDirs; ++d) {
      std::string dd = bulk + "/d" + std::to_string(d);
      ASSERT_EQ(mkdir(dd.c_str(), d % 3 ? 0755 : 0750), 0);
      for (int f = 0; f < kFiles; ++f)
        write_file(dd + "/f" + std::to_string(f) + ".c",
                   "file " + std::to_string(d) + "/" + std::to_string(f) + "\n" +
                       test::random_bytes(static_cast<size_t>(f * 37), static_cast<uint32_t>(d * kFiles + f)),
                   f % 4 ? 0644 : 0600);
    }
    for (const auto& e : std::filesystem::recursive_directory_iterator(bulk)) {
      if (who.drop) {
        ASSERT_EQ(lchown(e.path().c_str(), who.uid, who.gid), 0);
      }
      if (!e.is_directory()) test::set_times(e.path(), 1600000000, 1, 1600000000, 123456789);
    }
    if (who.drop) {
      ASSERT_EQ(chown(bulk.c_str(), who.uid, who.gid), 0);
    }
    const auto before = tree(proj_);
    auto files_left = [&] {
      size_t n = 0;
      std::error_code ec;
      for (auto it = std::filesystem::recursive_directory_iterator(bulk, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
        if (it->is_regular_file(ec)) ++n;
      return n;
    };
    auto dirs_left = [&] {
      size_t n = 0;
      std::error_code ec;
      for (auto it = std::filesystem::directory_iterator(bulk, ec); !ec && it != std::filesystem::directory_iterator();
           it.increment(ec))
        ++n;
      return n;
    };

    // Deleting more than 100 files asks (mass-delete): the user said allow.
    pid_t sup = start({kCottonbox, "run", "--db", db(), "--ask", "allow", "-q", "--", "/bin/sh", "-c",
                       "rm -rf " + bulk + "; echo " + kAfterRm + " >&2"},
                      proj_, who);
    ASSERT_GT(sup, 0);
    // On any way out: killed and reaped.
    struct Reaper {
      pid_t pid;
      ~Reaper() {
        if (pid <= 0) return;
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    } reaper{sup};
    auto t0 = std::chrono::steady_clock::now();
    std::string ns;
    std::vector<pid_t> session_pids;
    for (;;) {
      int st = 0;
      if (waitpid(sup, &st, WNOHANG) == sup) {
        reaper.pid = -1;
        FAIL() << "the session ended before the kill: " << slurp(dir_ + "/.err");
      }
      // The command's processes: those in the pid namespace of the
      // supervisor's child (cottonbox-init).
      if (ns.empty())
        for (pid_t c : children_of(sup))
          if (std::string n = pidns_of(c); !n.empty() && n != pidns_of(getpid())) ns = n;
      if (dirs_left() <= kDirs - 5) break;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) FAIL() << "rm -rf deleted nothing in 60 s";
      usleep(1000);
    }
    if (!ns.empty())
      for (pid_t p : all_pids())
        if (pidns_of(p) == ns) session_pids.push_back(p);
    ASSERT_EQ(kill(sup, SIGKILL), 0);

    // Nothing of the session outlives its supervisor: not in its pid
    // namespace, nor anywhere with the test's directory in its command line.
    std::vector<pid_t> survivors;
    for (int i = 0; i < 500; ++i) {
      survivors.clear();
      for (pid_t p : alive(all_pids()))
        if (p != getpid() && p != sup &&
            ((!ns.empty() && pidns_of(p) == ns) || cmdline_of(p).find(dir_) != std::string::npos))
          survivors.push_back(p);
      if (survivors.empty()) break;
      usleep(10000);
    }
    for (pid_t p : survivors) {
      ADD_FAILURE() << "pid " << p << " outlived the supervisor: " << cmdline_of(p);
      kill(p, SIGKILL);
    }
    EXPECT_FALSE(ns.empty()) << "no pid namespace found under the supervisor";
    EXPECT_GE(session_pids.size(), 3u) << "cottonbox-init, sh and rm were running";
    // Nor did the shell go on after rm (notified calls fail with ENOSYS
    // once the supervisor is gone; the rest would run unsupervised).
    EXPECT_EQ(slurp(dir_ + "/.err").find(kAfterRm), std::string::npos) << "the session went on after the kill";

    // The kill landed in the middle.
    const size_t left = files_left();
    const size_t total = static_cast<size_t>(kDirs) * kFiles;
    ASSERT_GT(left, 0u) << "rm -rf finished before the kill";
    ASSERT_LT(left, total - 4 * kFiles) << "fewer than 4 directories deleted before the kill";
    std::cerr << "note: " << total - left << " of " << total << " files deleted before the kill\n";

    // The supervisor is still a zombie (not reaped: its parent may be
    // slow to), and the session has not ended: both must count as over.
    ASSERT_TRUE(alive({sup}).empty());
    Ran ss = run({kCottonbox, "sessions", "--db", db(), "--json"}, proj_, who);
    EXPECT_NE(ss.out.find("\"aborted\""), std::string::npos) << ss.out << ss.err;

    // `changes` lists each deleted file as undoable, though the session
    // never ended.
    auto lines = changes(who, 1);
    size_t gone = 0;
    for (const auto& [rel, st] : before) {
      if (rel.rfind("bulk/", 0) != 0 || std::filesystem::exists(proj_ + "/" + rel)) continue;
      ++gone;
      nlohmann::json l = line_of(lines, proj_ + "/" + rel);
      if (l.is_null()) {
        ADD_FAILURE() << rel << " was deleted and is not among the changes";
        continue;
      }
      EXPECT_EQ(l["undoable"], true) << l.dump();
    }
    EXPECT_GT(gone, 0u);

    Ran u = run({kCottonbox, "undo", "--session", "1", "--db", db()}, proj_, who);
    EXPECT_EQ(u.status, 0) << u.out.substr(u.out.size() > 4000 ? u.out.size() - 4000 : 0) << u.err;
    auto after = tree(proj_);
    expect_back(before, after);
    for (const auto& [rel, st] : after)
      if (!before.count(rel)) {
        ADD_FAILURE() << "left by the session: " << rel;
      }
    reaper.pid = -1;
    EXPECT_EQ(wait_for(sup).status, 128 + SIGKILL);
  }

  std::string dir_, proj_, home_, outside_, data_;
};

// The throwaway plain user (made once, as root), or why not.
std::optional<Identity> plain_user(const std::string& cottonbox, std::string* why) {
  if (geteuid() != 0) {
    *why = std::string("needs root to make and become a throwaway user (") + kUser + ")";
    return std::nullopt;
  }
  if (!getpwnam(kUser)) {
    std::string cmd = std::string("useradd --system --no-create-home --shell /usr/sbin/nologin ") + kUser;
    if (system(cmd.c_str()) != 0 || !getpwnam(kUser)) {
      *why = std::string("cannot create the user ") + kUser;
      return std::nullopt;
    }
  }
  const passwd* pw = getpwnam(kUser);
  Identity user{pw->pw_uid, pw->pw_gid, true};
  // The binary must be reachable by the user (a build under /root is not).
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(user.gid) != 0 || setuid(user.uid) != 0) _exit(1);
    _exit(access(cottonbox.c_str(), X_OK) == 0 ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    *why = std::string(kUser) + " cannot execute " + cottonbox;
    return std::nullopt;
  }
  return user;
}

TEST_F(KeepRun, RealProgramsDestroyAndUndoGivesEverythingBackAsRoot) {
  CB_REQUIRE_HOST(cb::test::root());
  destroy_and_undo(Identity{}, true);
}

TEST_F(KeepRun, RealProgramsDestroyAndUndoGivesEverythingBackAsAPlainUser) {
  std::string why;
  auto user = plain_user(kCottonbox, &why);
  if (!user) GTEST_SKIP() << why;
  destroy_and_undo(*user, true);
}

TEST_F(KeepRun, TheSupervisorKilledInTheMiddleOfRmRfEverythingDeletedComesBackAsRoot) {
  CB_REQUIRE_HOST(cb::test::root());
  crash_in_rm_rf(Identity{});
}

TEST_F(KeepRun, TheSupervisorKilledInTheMiddleOfRmRfEverythingDeletedComesBackAsAPlainUser) {
  std::string why;
  auto user = plain_user(kCottonbox, &why);
  if (!user) GTEST_SKIP() << why;
  crash_in_rm_rf(*user);
}

TEST_F(KeepRun, NoKeepKeepsNothing) {
  CB_REQUIRE_HOST(cb::test::root());
  lay_out(Identity{});
  Ran s = session("rm -rf src; truncate -s0 big.log", Identity{}, {"--no-keep"});
  ASSERT_EQ(s.status, 0) << s.err;
  ASSERT_FALSE(std::filesystem::exists(proj_ + "/src"));
  EXPECT_FALSE(std::filesystem::exists(store())) << "--no-keep made a keep store";
  auto lines = changes(Identity{}, 1);
  for (const char* p : {"/src/main.c", "/big.log"}) {
    nlohmann::json l = line_of(lines, proj_ + p);
    ASSERT_FALSE(l.is_null()) << p;
    EXPECT_EQ(l["undoable"], false) << l.dump();
  }
}

TEST_F(KeepRun, OutsideTheWorkingDirectoryAndHomeNothingIsKept) {
  CB_REQUIRE_HOST(cb::test::root());
  lay_out(Identity{});
  Ran s = session("rm " + outside_ + "/x.txt; rm src/main.c", Identity{});
  ASSERT_EQ(s.status, 0) << s.err;
  auto lines = changes(Identity{}, 1);
  nlohmann::json out = line_of(lines, outside_ + "/x.txt");
  ASSERT_FALSE(out.is_null());
  EXPECT_EQ(out["undoable"], false) << out.dump();
  nlohmann::json in = line_of(lines, proj_ + "/src/main.c");
  ASSERT_FALSE(in.is_null());
  EXPECT_EQ(in["undoable"], true) << in.dump();
  // Nothing of it is in the journal either.
  std::string journal;
  for (const auto& e : std::filesystem::directory_iterator(store() + "/journal")) journal += slurp(e.path());
  EXPECT_EQ(journal.find(outside_), std::string::npos);
  EXPECT_NE(journal.find(proj_ + "/src/main.c"), std::string::npos);
}

TEST_F(KeepRun, AFileLinkedOutOfScopeAndTruncatedThereComesBackWhereItWas) {
  CB_REQUIRE_HOST(cb::test::root());
  lay_out(Identity{});
  auto before = state_of(home_ + "/notes.txt");
  // A second name outside the working directory and home, where nothing is
  // kept; the truncation through it empties the file in the home directory.
  Ran s =
      session("ln " + home_ + "/notes.txt " + outside_ + "/other-name && : > " + outside_ + "/other-name", Identity{});
  ASSERT_EQ(s.status, 0) << s.err;
  ASSERT_EQ(state_of(home_ + "/notes.txt").content, "");
  auto lines = changes(Identity{}, 1);
  nlohmann::json l = line_of(lines, home_ + "/notes.txt");
  ASSERT_FALSE(l.is_null()) << "the truncation is not listed under the file's own name";
  EXPECT_EQ(l["undoable"], true) << l.dump();
  Ran u = run({kCottonbox, "undo", "--session", "1", "--db", db()}, proj_, Identity{});
  EXPECT_EQ(u.status, 0) << u.out << u.err;
  auto after = state_of(home_ + "/notes.txt");
  EXPECT_EQ(after.content, before.content);
  EXPECT_EQ(after.mode, before.mode);
}

TEST_F(KeepRun, WhatCannotBeKeptIsRecordedNeverSilent) {
  CB_REQUIRE_HOST(cb::test::root());
  lay_out(Identity{});
  ASSERT_EQ(mkfifo((proj_ + "/pipe").c_str(), 0644), 0);
  Ran s = session("rm pipe", Identity{});
  ASSERT_EQ(s.status, 0) << s.err;
  // The event of the call says so...
  Ran e = run({kCottonbox, "events", "--session", "1", "--db", db(), "--json", "--action", "file.delete"}, proj_,
              Identity{});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.out.find("not kept for undo: " + proj_ + "/pipe: a fifo is a special file"), std::string::npos) << e.out;
  // ...the session says how many...
  Ran ss = run({kCottonbox, "sessions", "--db", db(), "--json"}, proj_, Identity{});
  EXPECT_NE(ss.out.find("1 changes could not be kept for undo"), std::string::npos) << ss.out;
  // ...and `changes` why.
  nlohmann::json l = line_of(changes(Identity{}, 1), proj_ + "/pipe");
  ASSERT_FALSE(l.is_null());
  EXPECT_EQ(l["undoable"], false);
  EXPECT_NE(l["reason"].get<std::string>().find("special file"), std::string::npos) << l.dump();
}

TEST_F(KeepRun, TheSessionCannotSeeOrTouchTheStore) {
  CB_REQUIRE_HOST(cb::test::root());
  lay_out(Identity{});
  // A first session makes the store and keeps something in it.
  ASSERT_EQ(session("rm src/main.c", Identity{}).status, 0);
  ASSERT_TRUE(std::filesystem::exists(store() + "/journal"));
  std::string probe = "ls -A " + store() + " > " + dir_ + "/seen 2>&1; echo $? >> " + dir_ + "/seen; rm -rf " +
                      store() + "/journal " + store() + "/objects; cat " + store() + "/VERSION >> " + dir_ +
                      "/seen 2>&1";
  Ran s = session(probe, Identity{});
  ASSERT_EQ(s.status, 0) << s.err;
  std::string seen = slurp(dir_ + "/seen");
  EXPECT_EQ(seen.find("journal"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("cottonbox keep store"), std::string::npos) << seen;
  // Still whole afterwards: the first session can still be undone.
  Ran u = run({kCottonbox, "undo", "--session", "1", "--db", db()}, proj_, Identity{});
  EXPECT_EQ(u.status, 0) << u.out << u.err;
  EXPECT_EQ(test::read_file(proj_ + "/src/main.c"), "int main() { return 0; }\n");
}

}  // namespace
}  // namespace cb::keep
