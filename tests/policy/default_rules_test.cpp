// rules/default.yaml, the shipped policy, judged on plain events.
#include <gtest/gtest.h>

#include <string>

#include "policy/policy.h"

namespace cb {
namespace {

const std::string kCwd = "/home/u/proj";
const std::string kHome = "/home/u";

class DefaultRules : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LoadOptions o;
    o.vars = {{"CWD", kCwd}, {"HOME", kHome}};
    auto r = load_policy_files({COTTONBOX_DEFAULT_RULES}, o);
    for (const auto& e : r.errors) ADD_FAILURE() << format_diagnostic(e);
    ASSERT_TRUE(r.policy);
    policy_ = new Policy(std::move(*r.policy));
  }
  static void TearDownTestSuite() {
    delete policy_;
    policy_ = nullptr;
  }

  static std::shared_ptr<ProcessInfo> proc(std::string comm, std::string exe,
                                           std::vector<std::string> ancestors = {"bash", "claude"},
                                           std::vector<std::string> argv = {}, std::vector<std::string> names = {}) {
    auto p = std::make_shared<ProcessInfo>();
    p->names = std::move(names);
    p->pid = 1234;
    p->uid = 1000;
    p->comm = std::move(comm);
    p->exe = std::move(exe);
    p->ancestors = std::move(ancestors);
    p->argv = std::move(argv);
    p->cwd = kCwd;
    return p;
  }
  static std::shared_ptr<ProcessInfo> rm() { return proc("rm", "/usr/bin/rm"); }
  static std::shared_ptr<ProcessInfo> git(std::vector<std::string> argv = {"git", "commit"}) {
    return proc("git", "/usr/bin/git", {"", ""}, std::move(argv), {"git"});
  }
  static std::shared_ptr<ProcessInfo> python() { return proc("python3", "/usr/bin/python3.11"); }

  static Verdict judge(Action a, const std::string& path, std::shared_ptr<ProcessInfo> p, uint32_t deletes = 1,
                       bool is_dir = false) {
    Event e;
    e.action = a;
    e.path = path;
    e.syscall = a == Action::FileCreate && is_dir ? "mkdirat" : "";
    e.proc = std::move(p);
    e.proc_deletes = e.tree_deletes = deletes;
    e.is_dir = is_dir;
    return decide(*policy_, e);
  }

  static Policy* policy_;
};
Policy* DefaultRules::policy_ = nullptr;

#define EXPECT_DECISION(verdict, expected)                                                    \
  do {                                                                                        \
    Verdict v_ = (verdict);                                                                   \
    EXPECT_EQ(decision_name(v_.decision), decision_name(expected)) << "rule: " << v_.rule_id; \
  } while (0)

TEST_F(DefaultRules, RequiredDecisions) {
  EXPECT_DECISION(judge(Action::FileDelete, kHome + "/.ssh/id_ed25519", rm()), Decision::Deny);
  EXPECT_DECISION(judge(Action::FileWrite, kCwd + "/.git/HEAD", python()), Decision::Deny);
  EXPECT_DECISION(judge(Action::FileWrite, kCwd + "/.git/index", git()), Decision::Allow);
  EXPECT_DECISION(judge(Action::FileCreate, kCwd + "/build/x.o", proc("cc", "/usr/bin/x86_64-linux-gnu-gcc-12")),
                  Decision::Allow);
  EXPECT_DECISION(judge(Action::FileWrite, kCwd + "/build/x.o", proc("cc", "/usr/bin/x86_64-linux-gnu-gcc-12")),
                  Decision::Allow);
  EXPECT_DECISION(judge(Action::FileDelete, kCwd + "/src/a.c", rm(), 3), Decision::Allow);
  EXPECT_DECISION(judge(Action::FileDelete, kCwd + "/src/a.c", rm(), 500), Decision::Ask);
  EXPECT_DECISION(judge(Action::FileDelete, kHome + "/.cache/pip/x", rm()), Decision::Allow);
  EXPECT_DECISION(judge(Action::FileDelete, kHome + "/notes.txt", rm()), Decision::Deny);
  EXPECT_DECISION(judge(Action::SysIoUring, "", python()), Decision::Deny);
}

// A normal build, test and git workflow, and the agent's own state: zero
// prompts, zero denials.
TEST_F(DefaultRules, NormalWorkflowIsSilent) {
  struct Case {
    Action action;
    std::string path;
    std::shared_ptr<ProcessInfo> proc;
    uint32_t deletes = 1;
    bool is_dir = false;
  };
  auto remote = proc("git-remote-http", "/usr/lib/git-core/git-remote-https", {"git", ""}, {}, {"git"});
  auto cargo = proc("cargo", "/home/u/.cargo/bin/cargo", {"", ""}, {}, {"cargo"});
  auto claude = proc("claude", "/home/u/.local/share/claude/versions/1.0/claude", {"bash"});
  std::vector<Case> cases = {
      // git
      {Action::FileCreate, kCwd + "/.git/objects/ab/cdef", git()},
      {Action::FileRename, kCwd + "/.git/index.lock", git()},
      {Action::FileDelete, kCwd + "/.git/index", git()},
      {Action::FileWrite, kCwd + "/.git/refs/heads/main", git()},
      {Action::FileDelete, kCwd + "/.git/objects/ab/cdef", git({"git", "gc"}), 5000},
      {Action::FileDelete, kCwd + "/src/old.c", git({"git", "checkout", "other"}), 800},
      {Action::FileDelete, kCwd + "/src/old.c", git({"git", "rebase", "main"}), 800},
      {Action::FileWrite, kCwd + "/.git/COMMIT_EDITMSG", proc("vim", "/usr/bin/vim.basic", {"git", ""})},
      {Action::FileRename, kCwd + "/.git/rebase-merge/git-rebase-todo", proc("vim", "/usr/bin/vim.basic", {"git"})},
      {Action::FileCreate, kCwd + "/.git/objects/pack/pack-1.pack", remote},
      {Action::FileRename, kCwd + "/.git/objects/pack/tmp_pack_x", remote},
      {Action::FileCreate, kCwd + "/newcrate/.git/HEAD", cargo},
      {Action::FileRename, kCwd + "/newcrate/.git/config.lock", cargo},
      {Action::FileCreate, kCwd + "/newcrate/.git/hooks/pre-commit.sample", cargo},
      {Action::FileCreate, "/srv/new/.git/hooks", git({"git", "init"}), 1, true},
      {Action::FileCreate, "/srv/new/.git/hooks/pre-push.sample", git({"git", "init"})},
      {Action::FileCreate, "/srv/new/.git/config", git({"git", "init"})},
      {Action::FileCreate, kCwd + "/.git/worktrees/wt/commondir", git({"git", "worktree", "add"})},
      {Action::FileDelete, "/tmp/scratch-clone/.git/objects/pack/p.pack", rm(), 50},
      {Action::FileDelete, kHome + "/.cargo/git/checkouts/x-1/abc/.git/index", cargo},
      // build and test
      {Action::FileCreate, kCwd + "/build/CMakeFiles/x.dir/a.o", proc("cc1plus", "/usr/lib/gcc/cc1plus")},
      {Action::FileTruncate, kCwd + "/build/app", proc("ld", "/usr/bin/ld.bfd")},
      {Action::FileAttr, kCwd + "/build/app", proc("ld", "/usr/bin/ld.bfd")},
      {Action::FileRename, kCwd + "/build/.ninja_log.tmp", proc("ninja", "/usr/bin/ninja")},
      {Action::FileDelete, kCwd + "/build/a.o", rm(), 5000},
      {Action::FileDelete, kCwd + "/build", rm(), 5001, true},
      {Action::FileDelete, kCwd + "/src/a.o", rm(), 300},
      {Action::FileDelete, kCwd + "/target/debug/deps/libx.rlib", cargo, 3000},
      {Action::FileDelete, kCwd + "/node_modules/lodash/index.js", proc("npm", "/usr/bin/node"), 9000},
      {Action::FileDelete, kCwd + "/web/dist/main.js", proc("node", "/usr/bin/node"), 900},
      {Action::FileDelete, kCwd + "/pkg/__pycache__/m.cpython-311.pyc", python(), 400},
      {Action::FileDelete, kCwd + "/.pytest_cache/v/cache/nodeids", python(), 400},
      {Action::FileDelete, kCwd + "/pkg/foo.egg-info/PKG-INFO", python(), 400},
      {Action::FileDelete, kCwd + "/.venv/lib/python3.11/site-packages/x.py", python(), 4000},
      {Action::FileCreate, kCwd + "/src/new.c", python()},
      {Action::FileWrite, kCwd + "/src/a.c", python()},
      {Action::FileTruncate, kCwd + "/src/a.c", python()},
      {Action::FileRename, kCwd + "/src/a.c", proc("mv", "/usr/bin/mv")},
      {Action::FileDelete, kCwd + "/src/a.c", rm(), 100},
      {Action::FileLink, kCwd + "/bin/tool", proc("ln", "/usr/bin/ln")},
      {Action::ProcExec, "/usr/bin/make", proc("bash", "/usr/bin/bash")},
      {Action::NetConnect, "tcp:140.82.112.3:443", remote},
      {Action::FileDelete, "/tmp/pytest-of-u/pytest-1/x", python(), 600},
      // caches and the agent's own state
      {Action::FileRename, kHome + "/.claude.json.tmp.123", claude},
      {Action::FileDelete, kHome + "/.claude.json", claude},
      {Action::FileWrite, kHome + "/.claude/projects/x/session.jsonl", claude},
      {Action::FileDelete, kHome + "/.claude/todos/a.json", claude},
      {Action::FileRename, kHome + "/.claude/statsig/x.tmp", claude},
      {Action::FileDelete, kHome + "/.codex/sessions/x.json", proc("codex", "/usr/bin/codex")},
      {Action::FileRename, kHome + "/.config/claude-code/settings.json.tmp", claude},
      {Action::FileDelete, kHome + "/.cache/pip/http/a/b", python()},
      {Action::FileRename, kHome + "/.cache/go-build/ab/x-d", proc("go", "/usr/lib/go/bin/go")},
      {Action::FileDelete, kHome + "/.npm/_cacache/tmp/x", proc("npm", "/usr/bin/node")},
      {Action::FileRename, kHome + "/.cargo/registry/cache/x.crate", cargo},
      {Action::FileDelete, kHome + "/.cargo/.global-cache-journal", cargo},
      {Action::FileDelete, kHome + "/.rustup/tmp/x", proc("rustup", "/home/u/.cargo/bin/rustup")},
      {Action::FileRename, kHome + "/go/pkg/mod/cache/download/x.tmp", proc("go", "/usr/lib/go/bin/go")},
      {Action::FileWrite, kHome + "/.gnupg/random_seed", proc("gpg", "/usr/bin/gpg", {"git"})},
      {Action::FileCreate, kHome + "/.bash_history", proc("bash", "/usr/bin/bash")},
      {Action::FileWrite, kHome + "/.kube/cache/discovery/x.json", proc("kubectl", "/usr/bin/kubectl")},
      {Action::FileRead, kHome + "/.ssh/id_ed25519", proc("ssh", "/usr/bin/ssh", {"git"})},
      {Action::FileRead, kHome + "/.bashrc", proc("bash", "/usr/bin/bash")},
  };
  for (const auto& c : cases) {
    Verdict v = judge(c.action, c.path, c.proc, c.deletes, c.is_dir);
    EXPECT_EQ(v.decision, Decision::Allow) << action_name(c.action) << " " << c.path << " by " << c.proc->comm << ": "
                                           << decision_name(v.decision) << " by " << v.rule_id;
  }
}

TEST_F(DefaultRules, WhatCannotBeGotBackIsDenied) {
  struct Case {
    Action action;
    std::string path;
    std::shared_ptr<ProcessInfo> proc;
    std::string rule;
    bool is_dir = false;
  };
  std::vector<Case> cases = {
      // credentials and shell configuration, whoever writes
      {Action::FileCreate, kHome + "/.ssh/authorized_keys", proc("sh", "/bin/sh"), "home-credentials"},
      {Action::FileAttr, kHome + "/.ssh/id_ed25519", proc("chmod", "/bin/chmod"), "home-credentials"},
      {Action::FileRename, kHome + "/.ssh", proc("mv", "/bin/mv"), "home-credentials", true},
      {Action::FileWrite, kHome + "/.aws/credentials", python(), "home-credentials"},
      {Action::FileWrite, kHome + "/.gnupg/pubring.kbx", proc("gpg", "/usr/bin/gpg"), "home-credentials"},
      {Action::FileWrite, kHome + "/.docker/config.json", proc("docker", "/usr/bin/docker"), "home-credentials"},
      {Action::FileWrite, kHome + "/.netrc", python(), "home-credentials"},
      {Action::FileWrite, kHome + "/.git-credentials", proc("git", "/usr/bin/git"), "home-credentials"},
      {Action::FileTruncate, kHome + "/.npmrc", proc("npm", "/usr/bin/node"), "home-credentials"},
      {Action::FileWrite, kHome + "/.kube/config", proc("kubectl", "/usr/bin/kubectl"), "home-credentials"},
      {Action::FileWrite, kHome + "/.config/gcloud/credentials.db", python(), "home-credentials"},
      {Action::FileWrite, kHome + "/.bashrc", proc("bash", "/usr/bin/bash"), "runs-code-later"},
      {Action::FileRename, kHome + "/.zshrc", proc("sed", "/usr/bin/sed"), "runs-code-later"},
      {Action::FileWrite, kHome + "/.profile", python(), "runs-code-later"},
      {Action::FileWrite, kHome + "/.gitconfig", git({"git", "config", "--global"}), "runs-code-later"},
      {Action::FileCreate, kHome + "/.config/git/config", git(), "runs-code-later"},
      // what runs code later: a list in the policy
      {Action::FileCreate, kHome + "/.bash_aliases", proc("bash", "/usr/bin/bash"), "runs-code-later"},
      {Action::FileCreate, kHome + "/.local/bin/git", proc("cp", "/usr/bin/cp"), "runs-code-later"},
      {Action::FileCreate, kHome + "/.local/lib/python3.11/site-packages/zz.pth", python(), "runs-code-later"},
      {Action::FileCreate, kHome + "/.local/lib/python3.11/site-packages/sitecustomize.py", python(),
       "runs-code-later"},
      {Action::FileCreate, kHome + "/.cargo/config.toml", python(), "runs-code-later"},
      {Action::FileCreate, kHome + "/.config/autostart/x.desktop", python(), "runs-code-later"},
      {Action::FileLink, kHome + "/.config/systemd/user/default.target.wants/x.service", python(), "runs-code-later"},
      {Action::FileCreate, kHome + "/.local/share/dbus-1/services/x.service", python(), "runs-code-later"},
      {Action::FileCreate, kHome + "/.local/share/bash-completion/completions/git", python(), "runs-code-later"},
      {Action::FileCreate, "/var/spool/cron/crontabs/u", proc("crontab", "/usr/bin/crontab"), "runs-code-later"},
      {Action::FileCreate, kHome + "/.config/environment.d/x.conf", python(), "runs-code-later"},
      // no trust by ancestry, by command name or by executable name
      {Action::FileWrite, kCwd + "/.git/hooks/pre-commit.log", proc("python3", "/usr/bin/python3", {"", "git"}),
       "git-internals"},
      {Action::FileDelete, kCwd + "/.git/HEAD", proc("rm", "/usr/bin/rm", {"git", ""}), "git-internals"},
      {Action::FileDelete, kCwd + "/.git/HEAD", proc("git", "/tmp/x/bin/git"), "git-internals"},
      {Action::FileDelete, kCwd + "/.git/HEAD", proc("git-gc", "/tmp/x/libexec/git-core/git-gc"), "git-internals"},
      // git internals by anything but git
      {Action::FileWrite, kCwd + "/.git/HEAD", python(), "git-internals"},
      {Action::FileDelete, kCwd + "/.git/objects/ab/cdef", rm(), "git-internals"},
      {Action::FileTruncate, kCwd + "/.git/index", proc("sh", "/bin/sh"), "git-internals"},
      {Action::FileRename, kCwd + "/.git", proc("mv", "/bin/mv"), "git-dir-move", true},
      {Action::FileRename, kCwd, proc("mv", "/bin/mv"), "git-dir-move", true},
      // ... and what git does with the user's authority that hands the repository over
      {Action::FileRename, kCwd + "/.git", git({"git", "init", "--separate-git-dir=/tmp/x"}), "git-dir-move", true},
      {Action::FileCreate, kCwd + "/.git/hooks/post-checkout", git({"git", "init", "--template=/tmp/t"}), "git-hooks"},
      {Action::FileCreate, kCwd + "/.git/commondir", proc("bash", "/usr/bin/bash"), "git-redirects"},
      {Action::FileCreate, kCwd + "/.git/objects/info/alternates", python(), "git-redirects"},
      {Action::FileDelete, kCwd + "/vendor/lib/.git/refs/heads/main", rm(), "git-internals-elsewhere"},
      {Action::FileWrite, kHome + "/other/.git/config", python(), "git-internals-elsewhere"},
      {Action::FileCreate, kCwd + "/.git/hooks/pre-commit", python(), "git-hooks"},
      {Action::FileCreate, "/srv/repo/.git/hooks/post-checkout", python(), "git-hooks"},
      // deleting or moving away files in $HOME
      {Action::FileDelete, kHome + "/notes.txt", rm(), "home-keep-files"},
      {Action::FileRename, kHome + "/Documents/thesis.tex", proc("mv", "/bin/mv"), "home-keep-files"},
      {Action::FileDelete, kHome + "/.local/share/Trash/files/x", rm(), "home-keep-files"},
      {Action::FileRename, kHome, proc("mv", "/bin/mv"), "home-credentials", true},
      {Action::FileRename, "/home", proc("mv", "/bin/mv"), "home-credentials", true},
      // deputies outside the session, each named
      {Action::NetConnect, "unix:/tmp/tmux-1000/default", proc("tmux", "/usr/bin/tmux"), "deputy-tmux"},
      {Action::NetConnect, "unix:/run/screen/S-u/123.main", proc("screen", "/usr/bin/screen"), "deputy-screen"},
      {Action::NetConnect, "unix:/run/user/1000/bus", proc("systemd-run", "/usr/bin/systemd-run"), "deputy-dbus"},
      {Action::NetConnect, "unix:/run/dbus/system_bus_socket", python(), "deputy-dbus"},
      {Action::NetConnect, "unix:/run/user/1000/systemd/private", python(), "deputy-systemd"},
      {Action::NetConnect, "unix:/var/run/docker.sock", proc("docker", "/usr/bin/docker"), "deputy-containers"},
      {Action::NetConnect, "unix:/run/containerd/containerd.sock", python(), "deputy-containers"},
      // switching off the guard
      {Action::SysIoUring, "", python(), "no-io-uring"},
      {Action::SysKernel, "bpf", proc("bpftool", "/usr/sbin/bpftool"), "no-kernel"},
      {Action::ProcTrace, "/usr/bin/python3", proc("gdb", "/usr/bin/gdb"), "no-tracing"},
  };
  for (const auto& c : cases) {
    Verdict v = judge(c.action, c.path, c.proc, 1, c.is_dir);
    EXPECT_EQ(v.decision, Decision::Deny) << action_name(c.action) << " " << c.path << " by " << c.proc->comm << ": "
                                          << decision_name(v.decision) << " by " << v.rule_id;
    EXPECT_EQ(v.rule_id, c.rule) << action_name(c.action) << " " << c.path;
    EXPECT_FALSE(v.message.empty()) << v.rule_id;
  }
}

TEST_F(DefaultRules, AsksBeforeMassDeletionOfWork) {
  EXPECT_DECISION(judge(Action::FileDelete, kCwd + "/src/a.c", rm(), 101), Decision::Ask);
  EXPECT_DECISION(judge(Action::FileDelete, kCwd + "/src/a.c", rm(), 100), Decision::Allow);
  EXPECT_DECISION(judge(Action::FileDelete, kCwd + "/docs/build.md", rm(), 500), Decision::Ask);
  EXPECT_DECISION(judge(Action::FileDelete, kCwd + "/src", rm(), 500, true), Decision::Ask);
  // `git clean` removes untracked files: no other copy.
  EXPECT_DECISION(judge(Action::FileDelete, kCwd + "/notes/draft.md", git({"git", "clean", "-fdx"}), 300),
                  Decision::Ask);
  Verdict v = judge(Action::FileDelete, kCwd + "/src/a.c", python(), 1000);
  EXPECT_EQ(v.rule_id, "mass-delete");
  EXPECT_FALSE(v.message.empty());
}

TEST_F(DefaultRules, SandboxesInsideTheSessionRun) {
  // bwrap, unshare, srt and codex's sandbox make namespaces and mount in them.
  for (const char* kinds : {"user,mnt,pid", "user,mnt,pid,net,ipc,uts,cgroup", "mnt", "net"})
    EXPECT_DECISION(judge(Action::SysNamespace, kinds, proc("bwrap", "/usr/bin/bwrap")), Decision::Allow);
  EXPECT_DECISION(judge(Action::SysMount, "/tmp/.bwrap/newroot", proc("bwrap", "/usr/bin/bwrap")), Decision::Allow);
  EXPECT_DECISION(judge(Action::SysMount, "/proc", proc("unshare", "/usr/bin/unshare")), Decision::Allow);
}

TEST_F(DefaultRules, DeputiesAreKnownByTheirServerWhateverTheSocketIsCalled) {
  // As the supervisor builds the event: net.server is who listens outside
  // the session (host/unix_servers.h), the socket's name tells nothing.
  auto connect = [&](const char* sock, std::vector<std::string> servers) {
    Event e;
    e.action = Action::NetConnect;
    e.proc = python();
    e.path = std::string("unix:") + sock;
    e.net = net_object_from_path(e.path);
    e.net.servers = std::move(servers);
    return decide(*policy_, e);
  };
  struct Case {
    const char* sock;
    std::vector<std::string> servers;
    const char* rule;
  } cases[] = {
      {"/home/u/.x/s", {"/usr/bin/tmux"}, "deputy-tmux-server"},
      {"/tmp/sock", {"/usr/local/bin/tmux"}, "deputy-tmux-server"},
      {"/tmp/sock", {"/usr/bin/screen"}, "deputy-tmux-server"},
      {"/tmp/kitty", {"/usr/bin/kitty"}, "deputy-terminal-server"},
      {"/tmp/b.sock", {"/usr/lib/systemd/systemd", "/usr/bin/dbus-daemon"}, "deputy-dbus-server"},
      {"/srv/d.sock", {"/usr/sbin/dockerd"}, "deputy-containers-server"},
      {"/tmp/nv", {"/usr/bin/nvim"}, "deputy-editors-server"},
      {"/tmp/e", {"/usr/bin/emacs-gtk"}, "deputy-editors-server"},
  };
  for (const auto& c : cases) {
    Verdict v = connect(c.sock, c.servers);
    EXPECT_DECISION(v, Decision::Deny);
    EXPECT_EQ(v.rule_id, c.rule) << c.sock << " served by " << c.servers.front();
  }
  // The session's own servers, and servers that run nothing on request.
  EXPECT_DECISION(connect("/tmp/tmux-test/s", {}), Decision::Allow);
  EXPECT_DECISION(connect("/run/systemd/resolve/io.systemd.Resolve", {"/usr/lib/systemd/systemd-resolved"}),
                  Decision::Allow);
  EXPECT_DECISION(connect("/run/user/1000/gnupg/S.gpg-agent", {"/usr/bin/gpg-agent"}), Decision::Allow);
  EXPECT_DECISION(connect("/tmp/.X11-unix/X0", {"/usr/lib/xorg/Xorg"}), Decision::Allow);
  EXPECT_DECISION(connect("/tmp/tmuxlike", {"/usr/bin/tmuxinator"}), Decision::Allow);
}

TEST_F(DefaultRules, CloudMetadataIsRefusedByAddressAndName) {
  // As the supervisor builds the event: the object from the address read,
  // IPv4-mapped folded; the names from the session's map.
  auto net = [](Action a, const char* addr, std::vector<std::string> names = {}) {
    Event e;
    e.action = a;
    e.proc = proc("python3", "/usr/bin/python3.11");
    e.net = make_net_object(a == Action::NetSend ? NetProto::Udp : NetProto::Tcp, *IpAddr::parse(addr), 80);
    e.net.hosts = names;
    e.net.names = names;
    e.path = std::string(a == Action::NetSend ? "udp:" : "tcp:") + e.net.addr_text + ":80";
    return decide(*policy_, e);
  };
  for (const char* a : {"169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "100.100.100.200"}) {
    EXPECT_EQ(net(Action::NetConnect, a).rule_id, "no-cloud-metadata") << a;
  }
  EXPECT_EQ(net(Action::NetConnect, "10.0.0.7", {"metadata.google.internal"}).rule_id, "no-cloud-metadata");
  EXPECT_DECISION(net(Action::NetConnect, "127.0.0.1"), Decision::Allow);
  EXPECT_DECISION(net(Action::NetConnect, "104.16.0.35", {"registry.npmjs.org"}), Decision::Allow);
}

TEST_F(DefaultRules, OnlyMutationsAndTheGuardReachTheSupervisor) {
  ActionMask need = actions_needing_decision(*policy_);
  EXPECT_EQ(need, kFileMutate | bit(Action::SysIoUring) | bit(Action::ProcTrace) | bit(Action::SysKernel) |
                      bit(Action::NetConnect));
  EXPECT_FALSE(need & bit(Action::FileRead));
  EXPECT_FALSE(need & bit(Action::ProcExec));
  EXPECT_EQ(actions_logged(*policy_), 0u);
}

TEST_F(DefaultRules, StaticDenialsAreCredentialTrees) {
  std::map<std::string, ActionMask> roots;
  for (const auto& d : static_denials(*policy_)) roots[d.root] |= d.actions;
  EXPECT_EQ(roots[kHome + "/.ssh"], kFileMutate);
  EXPECT_EQ(roots[kHome + "/.config/git"], kFileMutate);
  // Trees with allowed caches inside, or that git may write, are the supervisor's.
  EXPECT_EQ(roots.count(kHome + "/.gnupg"), 0u);
  EXPECT_EQ(roots.count(kHome + "/.kube"), 0u);
  EXPECT_EQ(roots.count(kCwd + "/.git"), 0u);
  EXPECT_EQ(roots[kHome + "/.local/bin"], kFileMutate);
  for (const auto& [root, actions] : roots) {
    EXPECT_TRUE(root.starts_with(kHome + "/.") || root.starts_with("/etc/") || root.starts_with("/var/spool/") ||
                root.starts_with("/usr/share/git-core/") || root == kHome + "/bin")
        << root;
    // decide() agrees for anyone, anywhere below.
    for (int i = 0; i < static_cast<int>(Action::Count); ++i) {
      auto a = static_cast<Action>(i);
      if (!(actions & bit(a))) continue;
      EXPECT_EQ(judge(a, root + "/x/y", git()).decision, Decision::Deny) << root;
      EXPECT_EQ(judge(a, root, python()).decision, Decision::Deny) << root;
    }
  }
}

TEST_F(DefaultRules, WorksWhenTheWorkingDirectoryIsHome) {
  LoadOptions o;
  o.vars = {{"CWD", kHome}, {"HOME", kHome}};
  auto r = load_policy_files({COTTONBOX_DEFAULT_RULES}, o);
  ASSERT_TRUE(r.policy);
  Event e;
  e.action = Action::FileDelete;
  e.path = kHome + "/.ssh/id_ed25519";
  e.proc = rm();
  EXPECT_EQ(decide(*r.policy, e).decision, Decision::Deny);
  e.path = kHome + "/scratch.txt";
  EXPECT_EQ(decide(*r.policy, e).decision, Decision::Allow);
}

// Each rule's anchor only lets decide() pass over rules that cannot match:
// every verdict is the one the rules give without anchors, for paths inside
// and outside each anchor, above them (a directory removed whole), through
// an alias, by git and by anyone, below and above the mass-delete count.
TEST_F(DefaultRules, AnchorsChangeNoVerdict) {
  Policy plain = *policy_;
  size_t anchored = 0;
  for (auto& r : plain.rules) {
    anchored += !r.anchor.empty();
    r.anchor.clear();
  }
  // The home-directory rules are the ones worth passing over.
  EXPECT_GE(anchored, 5u);
  for (const auto& r : policy_->rules) {
    if (r.id == "home-credentials" || r.id == "home-keep-files") {
      EXPECT_EQ(r.anchor, kHome) << r.id;
    }
  }
  const std::vector<std::string> paths = {"/",
                                          "/home",
                                          kHome,
                                          kHome + "/.ssh",
                                          kHome + "/.ssh/id_rsa",
                                          kHome + "/.sshx",
                                          kHome + "/.gnupg/random_seed",
                                          kHome + "/.gnupg/S.agent",
                                          kHome + "/.cargo/.package-cache",
                                          kHome + "/.cargo",
                                          kHome + "/.cache/pip/x",
                                          kHome + "/.config",
                                          kHome + "/.config/gh/hosts.yml",
                                          kHome + "/.bashrc",
                                          kHome + "/notes.txt",
                                          kHome + "x/.ssh/id_rsa",
                                          kCwd,
                                          kCwd + "/.git",
                                          kCwd + "/.git/index",
                                          kCwd + "/.git/hooks/pre-commit",
                                          kCwd + "/.git/hooks/x.sample",
                                          kCwd + "/src/a.c",
                                          kCwd + "/build/a.o",
                                          kCwd + "/a.o",
                                          "/tmp/r/.git/HEAD",
                                          "/srv/r/.git/config",
                                          "/srv/r/.git/hooks/post-merge",
                                          "/etc/passwd",
                                          "/tmp/x",
                                          "unix:/run/x.sock",
                                          "relative/x",
                                          "/home/",
                                          kHome + "/",
                                          kHome + "/.ssh/",
                                          kCwd + "/",
                                          ""};
  std::vector<std::shared_ptr<ProcessInfo>> procs = {rm(), git(), git({"git", "clean", "-fdx"}), python()};
  size_t compared = 0, denied = 0;
  for (int i = 0; i < static_cast<int>(Action::Count); ++i)
    for (const auto& path : paths)
      for (const auto& p : procs)
        for (uint32_t deletes : {1u, 500u})
          for (int shape = 0; shape < 3; ++shape) {
            Event e;
            e.action = static_cast<Action>(i);
            e.proc = p;
            e.proc_deletes = e.tree_deletes = deletes;
            e.is_dir = shape == 1;
            if (shape == 2) {
              // Seen through another mount of the same tree.
              e.path = "/mnt/alias" + path;
              e.aliases = {path};
            } else {
              e.path = path;
            }
            Verdict a = decide(*policy_, e), b = decide(plain, e);
            ASSERT_EQ(a.decision, b.decision) << action_name(e.action) << " " << e.path << " dir " << e.is_dir;
            ASSERT_EQ(a.rule_id, b.rule_id) << action_name(e.action) << " " << e.path;
            ++compared;
            denied += a.decision != Decision::Allow;
          }
  EXPECT_GT(denied, compared / 20);
}

}  // namespace
}  // namespace cb
