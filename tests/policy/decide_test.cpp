#include <gtest/gtest.h>

#include <map>
#include <string>

#include "policy/policy.h"

namespace cb {
namespace {

const char* const kHoudini = R"(version: 1
default: allow
rules:
  - id: houdini-protect
    action: [file.delete, file.rename, file.truncate, file.write, file.attr]
    path: ["${PROTECT}/**"]
    decision: deny
    message: "houdini: the fixture under ${PROTECT} must survive"
)";

Policy load(const std::string& text, bool guards = true) {
  LoadOptions o;
  o.vars = {{"CWD", "/home/u/p"}, {"HOME", "/home/u"}, {"PROTECT", "/srv/fixture"}};
  o.add_guards = guards;
  auto r = load_policy_text({{"p.yaml", text}}, o);
  EXPECT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  return r.policy ? std::move(*r.policy) : Policy{};
}

std::shared_ptr<ProcessInfo> proc(std::string comm, std::string exe = "", std::vector<std::string> ancestors = {}) {
  auto p = std::make_shared<ProcessInfo>();
  p->pid = 100;
  // A plain struct for a real program: its identity is its name.
  p->names = {comm};
  p->comm = std::move(comm);
  p->exe = std::move(exe);
  p->ancestors = std::move(ancestors);
  return p;
}

Event ev(Action a, std::string path, std::shared_ptr<ProcessInfo> p = proc("sh", "/bin/sh")) {
  Event e;
  e.action = a;
  e.path = std::move(path);
  e.proc = std::move(p);
  return e;
}

TEST(Decide, FirstMatchWinsAndDefault) {
  Policy p = load(R"(version: 1
default: ask
rules:
  - {id: allow-tmp, action: file.delete, path: /tmp/**, decision: allow}
  - {id: deny-all-deletes, action: file.delete, decision: deny, message: no}
  - {id: log-writes, action: file.write, path: /var/log/**, decision: log}
)");
  Verdict v = decide(p, ev(Action::FileDelete, "/tmp/x"));
  EXPECT_EQ(v.decision, Decision::Allow);
  EXPECT_EQ(v.rule_id, "allow-tmp");
  EXPECT_FALSE(v.builtin);
  v = decide(p, ev(Action::FileDelete, "/etc/x"));
  EXPECT_EQ(v.decision, Decision::Deny);
  EXPECT_EQ(v.rule_id, "deny-all-deletes");
  EXPECT_EQ(v.message, "no");
  EXPECT_EQ(decide(p, ev(Action::FileWrite, "/var/log/syslog")).decision, Decision::Log);
  v = decide(p, ev(Action::FileWrite, "/etc/x"));
  EXPECT_EQ(v.decision, Decision::Ask);
  EXPECT_EQ(v.rule_id, "");
  EXPECT_EQ(v.message, "");
  EXPECT_EQ(decide(p, ev(Action::ProcExec, "/bin/ls")).decision, Decision::Ask);
}

TEST(Decide, KeepFromTheRuleElseTheScope) {
  Policy p = load(R"(version: 1
keep:
  except: ["**/build/**"]
rules:
  - {id: scratch, action: file.delete, path: /home/u/p/scratch/**, decision: allow, keep: false}
  - {id: etc, action: file.mutate, path: /etc/**, decision: allow, keep: true}
  - {id: no-secrets, action: file.delete, path: /home/u/p/secret, decision: deny}
)");
  // The scope: CWD and HOME by default, less `except`.
  EXPECT_TRUE(decide(p, ev(Action::FileDelete, "/home/u/p/src/a.c")).keep);
  EXPECT_TRUE(decide(p, ev(Action::FileTruncate, "/home/u/notes")).keep);
  EXPECT_TRUE(decide(p, ev(Action::FileAttr, "/home/u/p/run.sh")).keep);
  EXPECT_TRUE(decide(p, ev(Action::FileRename, "/home/u/p/a")).keep);
  EXPECT_TRUE(decide(p, ev(Action::FileWrite, "/home/u/p/a")).keep);
  EXPECT_FALSE(decide(p, ev(Action::FileDelete, "/home/u/p/build/a.o")).keep);
  EXPECT_FALSE(decide(p, ev(Action::FileDelete, "/var/tmp/x")).keep);
  // Another name of a file in scope (a hard link made in /var/tmp) is in
  // scope as the file is: truncating it there destroys the kept file.
  Event linked = ev(Action::FileTruncate, "/var/tmp/x");
  linked.aliases = {"/home/u/notes"};
  EXPECT_TRUE(decide(p, linked).keep);
  linked.aliases = {"/home/u/p/build/a.o"};
  EXPECT_FALSE(decide(p, linked).keep);
  // Nothing is destroyed by these.
  EXPECT_FALSE(decide(p, ev(Action::FileCreate, "/home/u/p/new")).keep);
  EXPECT_FALSE(decide(p, ev(Action::FileRead, "/home/u/p/a")).keep);
  EXPECT_FALSE(decide(p, ev(Action::FileLink, "/home/u/p/a")).keep);
  EXPECT_FALSE(decide(p, ev(Action::ProcExec, "/home/u/p/a.out")).keep);
  // A rule's `keep:` wins over the scope, either way.
  EXPECT_FALSE(decide(p, ev(Action::FileDelete, "/home/u/p/scratch/x")).keep);
  EXPECT_TRUE(decide(p, ev(Action::FileWrite, "/etc/hosts")).keep);
  EXPECT_FALSE(decide(p, ev(Action::FileCreate, "/etc/new")).keep);
  // A rule without `keep:` leaves it to the scope.
  EXPECT_TRUE(decide(p, ev(Action::FileDelete, "/home/u/p/secret")).keep);
}

TEST(Decide, ProcessListsMatchIdentitiesNotNames) {
  Policy p = load(R"(version: 1
lists:
  archivers: [tar, zip, git-remote-https]
rules:
  - {id: a, action: file.delete, process: '@archivers', decision: deny}
)");
  EXPECT_EQ(decide(p, ev(Action::FileDelete, "/x", proc("tar"))).decision, Decision::Deny);
  auto zip = proc("python3", "/usr/bin/python3");
  zip->names = {"zip"};
  EXPECT_EQ(decide(p, ev(Action::FileDelete, "/x", zip)).decision, Decision::Deny);
  // Named tar by its command name or its executable's name, but no identity.
  auto named = proc("tar", "/tmp/bin/tar");
  named->names.clear();
  EXPECT_EQ(decide(p, ev(Action::FileDelete, "/x", named)).decision, Decision::Allow);
  EXPECT_EQ(decide(p, ev(Action::FileDelete, "/x", proc("rm", "/usr/bin/rm"))).decision, Decision::Allow);
  EXPECT_EQ(decide(p, ev(Action::FileDelete, "/x", nullptr)).decision, Decision::Allow);
  EXPECT_EQ(decide(p, ev(Action::FileDelete, "/x", proc("tarx", "/bin/tarx"))).decision, Decision::Allow);
}

TEST(Decide, WhenConditions) {
  Policy p = load(R"(version: 1
rules:
  - id: mass
    action: file.delete
    path: /home/u/p/**
    when: 'proc.deletes > 100 and not path matches "**/build/**"'
    decision: ask
)");
  Event e = ev(Action::FileDelete, "/home/u/p/src/a.c");
  e.proc_deletes = 101;
  EXPECT_EQ(decide(p, e).decision, Decision::Ask);
  e.proc_deletes = 100;
  EXPECT_EQ(decide(p, e).decision, Decision::Allow);
  e.proc_deletes = 5000;
  e.path = "/home/u/p/build/a.o";
  EXPECT_EQ(decide(p, e).decision, Decision::Allow);
}

// A directory renamed to (or above) a protected name, or a symbolic link
// made there, creates everything below it: judged by that end too.
TEST(Decide, RenamesAndSymlinksAreJudgedWhereTheyLand) {
  Policy p = load(R"(version: 1
rules:
  - {id: git-config, action: file.mutate, path: ["${HOME}/.config/git/**"], decision: deny}
)");
  Event e = ev(Action::FileRename, "/tmp/prepared");
  e.target = "/home/u/.config";
  e.is_dir = true;
  EXPECT_EQ(decide(p, e).rule_id, "git-config");
  e.target = "/home/u/.config/git";
  EXPECT_EQ(decide(p, e).rule_id, "git-config");
  e.target = "/home/u/.config/other";
  EXPECT_EQ(decide(p, e).rule_id, "");
  // A file renamed there is judged by the create of its new name (its own facet).
  e.target = "/home/u/.config";
  e.is_dir = false;
  EXPECT_EQ(decide(p, e).rule_id, "");
  Event link = ev(Action::FileLink, "/home/u/.config");
  link.syscall = "symlinkat";
  link.target = "/tmp/prepared";
  EXPECT_EQ(decide(p, link).rule_id, "git-config");
  link.path = "/home/u/proj/build/link";
  EXPECT_EQ(decide(p, link).rule_id, "");
  // A hard link names one file: judged by its own name only.
  Event hard = ev(Action::FileLink, "/home/u/.config");
  hard.syscall = "linkat";
  EXPECT_EQ(decide(p, hard).rule_id, "");
}

TEST(Decide, AliasesMatch) {
  Policy p = load(kHoudini);
  Event e = ev(Action::FileWrite, "/tmp/hardlink");
  EXPECT_EQ(decide(p, e).decision, Decision::Allow);
  e.aliases = {"/var/other", "/srv/fixture/data.bin"};
  EXPECT_EQ(decide(p, e).decision, Decision::Deny);
}

// Renaming or removing an ancestor directory moves everything below it.
TEST(Decide, AncestorDirectoryRenameAndDelete) {
  Policy p = load(kHoudini);
  for (std::string dir : {"/srv", "/srv/", "/", "/srv/fixture"}) {
    Event e = ev(Action::FileRename, dir);
    e.is_dir = true;
    e.target = "/tmp/away";
    Verdict v = decide(p, e);
    EXPECT_EQ(v.decision, Decision::Deny) << dir;
    EXPECT_EQ(v.rule_id, "houdini-protect");
    EXPECT_EQ(v.message, "houdini: the fixture under /srv/fixture must survive");
  }
  Event del = ev(Action::FileDelete, "/srv");
  del.is_dir = true;
  EXPECT_EQ(decide(p, del).decision, Decision::Deny);
  // Not an ancestor, or not a directory event.
  Event sibling = ev(Action::FileRename, "/srv/fixture2");
  sibling.is_dir = true;
  EXPECT_EQ(decide(p, sibling).decision, Decision::Allow);
  Event file = ev(Action::FileRename, "/srv");
  EXPECT_EQ(decide(p, file).decision, Decision::Allow);
  // A write to a directory is not a write to what is below it.
  Event write = ev(Action::FileAttr, "/srv");
  write.is_dir = true;
  EXPECT_EQ(decide(p, write).decision, Decision::Allow);
}

// Only protecting rules look below a moved directory: an allow for one
// file inside must not allow moving the whole tree.
TEST(Decide, AnAllowBelowADirectoryDoesNotAllowMovingIt) {
  Policy p = load(R"(version: 1
rules:
  - {id: cache-ok, action: [file.delete, file.rename], path: /home/u/.cache/**, decision: allow}
  - {id: watch, action: file.rename, path: /home/u/big/**, decision: log}
  - {id: keep-home, action: [file.delete, file.rename], path: /home/u/**, decision: deny}
  - {id: ask-srv, action: file.rename, path: /srv/x/y, decision: ask}
)");
  Event home = ev(Action::FileRename, "/home/u");
  home.is_dir = true;
  EXPECT_EQ(decide(p, home).rule_id, "keep-home");
  Event parent = ev(Action::FileRename, "/home");
  parent.is_dir = true;
  EXPECT_EQ(decide(p, parent).rule_id, "keep-home");
  Event cache = ev(Action::FileRename, "/home/u/.cache");
  cache.is_dir = true;
  EXPECT_EQ(decide(p, cache).rule_id, "cache-ok");
  Event srv = ev(Action::FileRename, "/srv");
  srv.is_dir = true;
  EXPECT_EQ(decide(p, srv).decision, Decision::Ask);
}

TEST(Decide, GuardsDenyUnlessAUserRuleAllows) {
  Policy p = load("version: 1\n");
  for (Action a : {Action::SysIoUring, Action::ProcTrace, Action::SysKernel}) {
    Verdict v = decide(p, ev(a, "x"));
    EXPECT_EQ(v.decision, Decision::Deny) << action_name(a);
    EXPECT_TRUE(v.builtin);
    EXPECT_EQ(v.rule_id.rfind("cottonbox:guard-", 0), 0u) << v.rule_id;
    EXPECT_FALSE(v.message.empty());
  }
  // Namespaces of any kind and mounts in them are what sandboxes are made of.
  EXPECT_EQ(decide(p, ev(Action::SysNamespace, "user,mnt,pid,net")).decision, Decision::Allow);
  EXPECT_EQ(decide(p, ev(Action::SysNamespace, "user,mnt,pid,net")).rule_id, "cottonbox:namespaces");
  EXPECT_EQ(decide(p, ev(Action::SysMount, "/tmp/x")).rule_id, "cottonbox:mounts");
  // What would undo a layer of the session is refused before every rule,
  // one that allows mounts outright included.
  Policy mounts_ok = load("version: 1\nrules:\n  - {id: all-mounts, action: sys.mount, decision: allow}\n");
  Event undo = ev(Action::SysMount, "/home/u/.config/cottonbox");
  undo.breaks_layer = "it would uncover what a read-only tree of the session covers";
  Verdict refused = decide(mounts_ok, undo);
  EXPECT_EQ(refused.decision, Decision::Deny);
  EXPECT_EQ(refused.rule_id, "cottonbox:layers");
  EXPECT_TRUE(refused.builtin);
  EXPECT_NE(refused.message.find("uncover"), std::string::npos) << refused.message;
  undo.breaks_layer.clear();
  EXPECT_EQ(decide(mounts_ok, undo).rule_id, "all-mounts");
  Policy allowing = load(R"(version: 1
rules:
  - {id: uring-ok, action: sys.io_uring, decision: allow}
  - {id: gdb-ok, action: proc.trace, process: gdb, decision: allow}
)");
  Verdict v = decide(allowing, ev(Action::SysIoUring, ""));
  EXPECT_EQ(v.decision, Decision::Allow);
  EXPECT_EQ(v.rule_id, "uring-ok");
  EXPECT_FALSE(v.builtin);
  EXPECT_EQ(decide(allowing, ev(Action::ProcTrace, "/bin/x", proc("gdb"))).decision, Decision::Allow);
  EXPECT_EQ(decide(allowing, ev(Action::ProcTrace, "/bin/x", proc("strace"))).decision, Decision::Deny);
}

TEST(Decide, SelfProtectionBeatsAUserAllow) {
  Policy p = load(R"(version: 1
default: deny
rules:
  - {id: anything-goes, action: '*', decision: allow}
)");
  add_self_protection(
      p, SelfProtection{{"/var/lib/cb/audit.db", "/var/lib/cb/audit.db-wal", "/etc/cb/policy[1].yaml"}, {"/run/cb"}});
  ASSERT_GE(p.rules.size(), 3u);
  EXPECT_EQ(p.rules[0].id, "cottonbox:self-protect-files");
  EXPECT_EQ(p.rules[1].id, "cottonbox:self-protect-control");
  EXPECT_TRUE(p.rules[0].builtin());

  for (Action a : {Action::FileWrite, Action::FileDelete, Action::FileRename, Action::FileTruncate, Action::FileAttr,
                   Action::FileLink, Action::FileCreate}) {
    Verdict v = decide(p, ev(a, "/var/lib/cb/audit.db"));
    EXPECT_EQ(v.decision, Decision::Deny) << action_name(a);
    EXPECT_EQ(v.rule_id, "cottonbox:self-protect-files");
    EXPECT_TRUE(v.builtin);
  }
  EXPECT_EQ(decide(p, ev(Action::FileWrite, "/var/lib/cb/audit.db-wal")).decision, Decision::Deny);
  // Metacharacters in protected names are escaped: exact names only.
  EXPECT_EQ(decide(p, ev(Action::FileWrite, "/etc/cb/policy[1].yaml")).decision, Decision::Deny);
  EXPECT_EQ(decide(p, ev(Action::FileWrite, "/etc/cb/policy1.yaml")).decision, Decision::Allow);
  EXPECT_EQ(decide(p, ev(Action::FileWrite, "/var/lib/cb/audit.db-shm")).decision, Decision::Allow);
  EXPECT_EQ(decide(p, ev(Action::FileRead, "/var/lib/cb/audit.db")).decision, Decision::Allow);
  // Moving the database's directory away.
  Event mv = ev(Action::FileRename, "/var/lib/cb");
  mv.is_dir = true;
  EXPECT_EQ(decide(p, mv).rule_id, "cottonbox:self-protect-files");
  // The control socket.
  Verdict c = decide(p, ev(Action::NetConnect, "unix:/run/cb/control.sock"));
  EXPECT_EQ(c.decision, Decision::Deny);
  EXPECT_EQ(c.rule_id, "cottonbox:self-protect-control");
  EXPECT_EQ(decide(p, ev(Action::FileDelete, "/run/cb/control.sock")).decision, Decision::Deny);
  EXPECT_EQ(decide(p, ev(Action::NetConnect, "unix:/run/other.sock")).decision, Decision::Allow);
  // Hard links to the database are the database.
  Event link = ev(Action::FileWrite, "/tmp/innocent");
  link.aliases = {"/var/lib/cb/audit.db"};
  EXPECT_EQ(decide(p, link).decision, Decision::Deny);

  // Idempotent; empty lists add no rule (a rule without paths would match everything).
  size_t n = p.rules.size();
  add_self_protection(p, SelfProtection{{"/var/lib/cb/audit.db"}, {}});
  EXPECT_EQ(p.rules.size(), n - 1);
  EXPECT_EQ(p.rules[0].id, "cottonbox:self-protect-files");
  EXPECT_EQ(p.rules[1].id, "anything-goes");
  add_self_protection(p, SelfProtection{});
  EXPECT_EQ(p.rules[0].id, "anything-goes");
}

// Anchors only let decide() pass over rules that cannot match: on globs
// whose alternatives start in different directories, socket addresses,
// patterns that start anywhere, escaped names and cottonbox's own rules,
// every verdict is the one the rules give without anchors.
TEST(Decide, AnchorsChangeNoVerdict) {
  Policy p = load(R"(version: 1
default: allow
rules:
  - {id: braces-below, action: file.mutate, path: ["/a/{b,c}/x/**", "/a/b/y"], decision: deny}
  - {id: braces-first, action: file.mutate, path: ["/{d,e}/**"], decision: ask}
  - {id: sockets, action: [net.connect, file.mutate], path: ["unix:/run/s/**", "/run/s/**"], decision: deny}
  - {id: anywhere, action: file.delete, path: ["**/rel/**"], decision: deny}
  - {id: star-dir, action: file.rename, path: ["/srv/*/keep/**"], decision: deny}
  - {id: escaped, action: file.write, path: ["/f/\\{x\\}/**"], decision: deny}
  - {id: allow-below, action: file.delete, path: ["/a/b/x/tmp/**"], decision: allow}
)");
  add_self_protection(p, SelfProtection{{"/var/lib/cb/audit.db"}, {"/run/cb"}});
  std::map<std::string, std::string> anchors;
  for (const auto& r : p.rules) anchors[r.id] = r.anchor;
  EXPECT_EQ(anchors["braces-below"], "/a");
  EXPECT_EQ(anchors["star-dir"], "/srv");
  EXPECT_EQ(anchors["escaped"], "/f/{x}");
  EXPECT_EQ(anchors["braces-first"], "");
  EXPECT_EQ(anchors["sockets"], "");
  EXPECT_EQ(anchors["anywhere"], "");
  EXPECT_EQ(anchors["cottonbox:self-protect-files"], "/var/lib/cb/audit.db");
  Policy plain = p;
  for (auto& r : plain.rules) r.anchor.clear();

  const std::vector<std::string> paths = {"",
                                          "/",
                                          "/a",
                                          "/a/",
                                          "/a/b",
                                          "/a/b/x",
                                          "/a/b/x/1",
                                          "/a/c/x/2",
                                          "/a/b/y",
                                          "/a/bx/y",
                                          "/ab",
                                          "/a/b/x/tmp/t",
                                          "/d",
                                          "/d/1",
                                          "/e/2",
                                          "/de",
                                          "/run/s/x",
                                          "unix:/run/s/x",
                                          "unix:/run/cb/c",
                                          "/run/cb/c",
                                          "rel/x",
                                          "/rel/x",
                                          "/srv/1/keep/k",
                                          "/srv/1",
                                          "/srv",
                                          "/f/{x}/1",
                                          "/f/x/1",
                                          "/f",
                                          "/var/lib/cb/audit.db",
                                          "/var/lib/cb",
                                          "/var/lib/cb/",
                                          "/var",
                                          "/tmp/x"};
  size_t compared = 0, decided = 0;
  for (int i = 0; i < static_cast<int>(Action::Count); ++i)
    for (const auto& path : paths)
      for (int shape = 0; shape < 4; ++shape) {
        Event e = ev(static_cast<Action>(i), path);
        e.is_dir = shape == 1 || shape == 3;
        if (shape >= 2) {
          // The same file through another mount, as a file and as a directory.
          e.path = "/mnt/other" + path;
          e.aliases = {path};
        }
        Verdict a = decide(p, e), b = decide(plain, e);
        ASSERT_EQ(a.rule_id, b.rule_id) << action_name(e.action) << " " << e.path << " dir " << e.is_dir;
        ASSERT_EQ(a.decision, b.decision) << action_name(e.action) << " " << e.path;
        ++compared;
        decided += !a.rule_id.empty();
      }
  EXPECT_GT(decided, compared / 10);
}

TEST(Decide, ActionsNeedingDecisionAndLogged) {
  Policy p = load(R"(version: 1
rules:
  - {id: a, action: file.delete, decision: deny}
  - {id: b, action: file.rename, decision: ask}
  - {id: c, action: file.write, decision: allow}
  - {id: d, action: [proc.exec, net.connect], decision: log}
)",
                  false);
  EXPECT_EQ(actions_needing_decision(p), bit(Action::FileDelete) | bit(Action::FileRename));
  EXPECT_EQ(actions_logged(p), bit(Action::ProcExec) | bit(Action::NetConnect));
  Policy guarded = load("version: 1\n");
  EXPECT_EQ(actions_needing_decision(guarded),
            bit(Action::SysIoUring) | bit(Action::ProcTrace) | bit(Action::SysKernel));
  EXPECT_EQ(actions_needing_decision(load("version: 1\ndefault: deny\n")), kAllActions);
  EXPECT_EQ(actions_needing_decision(load("version: 1\ndefault: ask\n")), kAllActions);
  EXPECT_EQ(actions_needing_decision(load("version: 1\ndefault: log\n", false)), 0u);
}

TEST(StaticDenials, HoudiniYieldsExactlyOneRoot) {
  Policy p = load(kHoudini);
  auto d = static_denials(p);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].root, "/srv/fixture");
  EXPECT_EQ(d[0].actions, bit(Action::FileDelete) | bit(Action::FileRename) | bit(Action::FileTruncate) |
                              bit(Action::FileWrite) | bit(Action::FileAttr));
  EXPECT_EQ(d[0].rule_id, "houdini-protect");
  EXPECT_EQ(d[0].message, "houdini: the fixture under /srv/fixture must survive");

  // Self-protection adds the control directory, and takes nothing from the fixture.
  add_self_protection(p, SelfProtection{{"/home/u/.local/share/cottonbox/audit.db"}, {"/run/cb"}});
  d = static_denials(p);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].root, "/run/cb");
  EXPECT_EQ(d[0].rule_id, "cottonbox:self-protect-control");
  EXPECT_EQ(d[1].root, "/srv/fixture");
  EXPECT_EQ(d[1].actions, bit(Action::FileDelete) | bit(Action::FileRename) | bit(Action::FileTruncate) |
                              bit(Action::FileWrite) | bit(Action::FileAttr));
}

TEST(StaticDenials, EarlierRuleUnderTheTreeRemovesItsActions) {
  Policy p = load(R"(version: 1
rules:
  - {id: scratch, action: [file.write, file.create], path: /srv/fixture/tmp/**, decision: allow}
  - {id: protect, action: [file.write, file.delete], path: /srv/fixture/**, decision: deny}
)");
  auto d = static_denials(p);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].actions, bit(Action::FileDelete));
}

TEST(StaticDenials, EarlierRulesThatCouldMatchBelow) {
  auto roots = [](const std::string& earlier) {
    Policy p = load("version: 1\nrules:\n" + earlier +
                    "  - {id: protect, action: file.delete, path: /srv/f/**, decision: deny}\n");
    return static_denials(p);
  };
  // No paths, a leading wildcard, an ancestor base: any of them might match below.
  EXPECT_TRUE(roots("  - {id: e, action: file.delete, decision: log}\n").empty());
  EXPECT_TRUE(roots("  - {id: e, action: file.delete, path: '**/*.o', decision: allow}\n").empty());
  EXPECT_TRUE(roots("  - {id: e, action: file.delete, path: '/srv/*/x', decision: allow}\n").empty());
  EXPECT_TRUE(roots("  - {id: e, action: file.delete, path: /srv/f, decision: allow}\n").empty());
  // Even a conditional deny: the supervisor decides it.
  EXPECT_TRUE(roots("  - {id: e, action: file.delete, path: /srv/f/a, process: rm, decision: deny}\n").empty());
  // Unrelated paths or actions leave the tree alone.
  EXPECT_EQ(roots("  - {id: e, action: file.delete, path: /srv/g/**, decision: allow}\n").size(), 1u);
  EXPECT_EQ(roots("  - {id: e, action: file.write, path: /srv/f/**, decision: allow}\n").size(), 1u);
  EXPECT_EQ(roots("  - {id: e, action: [file.delete, net.connect], path: 'unix:/srv/f/**', "
                  "decision: allow}\n")
                .size(),
            1u);
}

TEST(StaticDenials, ConditionalAndPartialRulesAreNotReported) {
  EXPECT_TRUE(static_denials(load(R"(version: 1
rules:
  - {id: a, action: file.delete, path: /srv/f/**, process: rm, decision: deny}
  - {id: b, action: file.delete, path: /srv/g/**, when: 'uid == 0', decision: deny}
  - {id: c, action: file.delete, path: '/srv/h/**/*.c', decision: deny}
  - {id: d, action: file.delete, path: '/srv/i/*', decision: deny}
  - {id: e, action: file.delete, path: /srv/j/**, decision: ask}
  - {id: f, action: net.connect, path: 'unix:/srv/k/**', decision: deny}
  - {id: g, action: '*', path: '**', decision: deny}
)"))
                  .empty());
}

TEST(StaticDenials, OnlyFileMutationsAndEachTree) {
  auto d = static_denials(load(R"(version: 1
rules:
  - {id: a, action: '*', path: [/srv/a/**, /srv/b/**, /srv/c/x.txt], decision: deny, message: m}
)"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].root, "/srv/a");
  EXPECT_EQ(d[1].root, "/srv/b");
  EXPECT_EQ(d[0].actions, kFileMutate);
  EXPECT_EQ(d[0].message, "m");
}

TEST(StaticDenials, AnEarlierWholeTreeDenyKeepsTheActionsInItsName) {
  auto d = static_denials(load(R"(version: 1
rules:
  - {id: outer, action: file.delete, path: /srv/**, decision: deny}
  - {id: inner, action: [file.delete, file.write], path: /srv/f/**, decision: deny}
)"));
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].root, "/srv");
  EXPECT_EQ(d[0].rule_id, "outer");
  EXPECT_EQ(d[0].actions, bit(Action::FileDelete));
  EXPECT_EQ(d[1].root, "/srv/f");
  EXPECT_EQ(d[1].rule_id, "inner");
  EXPECT_EQ(d[1].actions, bit(Action::FileWrite));
}

// What static_denials reports must be what decide() says for every event
// below the root, whoever causes it.
TEST(StaticDenials, AgreeWithDecide) {
  Policy p = load(R"(version: 1
rules:
  - {id: allow-git, action: file.mutate, path: '**/.git/**', process: git, decision: allow}
  - {id: outer, action: file.delete, path: /srv/**, decision: deny}
  - {id: scratch, action: file.write, path: /srv/f/tmp/**, decision: allow}
  - {id: inner, action: [file.delete, file.write, file.attr], path: /srv/f/**, decision: deny}
)");
  for (const auto& d : static_denials(p)) {
    for (const char* rel : {"", "/x", "/a/b/c", "/.git/HEAD", "/tmp/y"}) {
      for (int i = 0; i < static_cast<int>(Action::Count); ++i) {
        auto a = static_cast<Action>(i);
        if (!(d.actions & bit(a))) continue;
        for (auto who : {proc("git", "/usr/bin/git"), proc("rm", "/bin/rm")}) {
          Verdict v = decide(p, ev(a, d.root + rel, who));
          EXPECT_EQ(v.decision, Decision::Deny) << d.root + rel << " " << action_name(a);
        }
      }
    }
  }
}

TEST(DescribeRule, ShowsEverything) {
  Policy p = load(R"(version: 1
rules:
  - id: r
    action: [file.delete, file.rename]
    path: [/a/**, /b]
    process: [tar, zip]
    when: 'uid == 0 and not is_dir'
    decision: ask
    message: careful
)");
  EXPECT_EQ(describe_rule(p.rules[0]),
            "rule r\n"
            "  decision: ask\n"
            "  actions:  file.delete, file.rename\n"
            "  paths:    /a/**\n"
            "            /b\n"
            "  process:  tar, zip\n"
            "  when:     (uid == 0 and (not is_dir))\n"
            "  message:  careful\n"
            "  defined:  p.yaml:3:5\n");
  std::string guard = describe_rule(p.rules[1]);
  EXPECT_NE(guard.find("rule cottonbox:guard-io_uring (built-in)\n"), std::string::npos) << guard;
  EXPECT_NE(guard.find("  paths:    any\n"), std::string::npos) << guard;
  EXPECT_EQ(guard.find("defined"), std::string::npos) << guard;
}

}  // namespace
}  // namespace cb
