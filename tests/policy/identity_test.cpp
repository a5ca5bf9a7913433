// Process identity (policy/identity.h): what names a process may carry,
// judged on plain structs; the loader's `identities:` on real files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "policy/identity.h"
#include "policy/policy.h"
#include "policy/trust.h"

namespace cb {
namespace {

using namespace std::string_literals;

const FileId kGit{1, 100, 1700000000, 5};
const FileId kRm{1, 200, 1700000000, 5};

Identities table() {
  Identities ids;
  ids.files.push_back(IdentityFile{"git", "/usr/bin/git", kGit, 0, false});
  return ids;
}

ExeFacts facts(FileId id, std::string exe = "/usr/bin/git", std::string env = "HOME=/root\0PATH=/usr/bin\0"s) {
  ExeFacts f;
  f.known = true;
  f.id = id;
  f.exe = std::move(exe);
  f.environ = std::move(env);
  return f;
}

TEST(Identity, TheFileTheKernelRanConfersItsName) {
  EXPECT_EQ(identify(table(), facts(kGit)), std::vector<std::string>{"git"});
  // A copy or a hard link of another program, whatever it is called.
  EXPECT_TRUE(identify(table(), facts(kRm, "/tmp/x/bin/git")).empty());
  // Unknown executable (gone, unreadable /proc): no identity.
  ExeFacts unknown = facts(kGit);
  unknown.known = false;
  EXPECT_TRUE(identify(table(), unknown).empty());
}

TEST(Identity, ATrustedFileChangedInPlaceLosesIt) {
  FileId rewritten = kGit;
  rewritten.ctime_nsec += 1;
  EXPECT_TRUE(identify(table(), facts(rewritten)).empty());
  FileId other_fs = kGit;
  other_fs.dev = 2;
  EXPECT_TRUE(identify(table(), facts(other_fs)).empty());
}

TEST(Identity, LoaderInjectionRemovesIt) {
  for (const char* var : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH"}) {
    std::string env = "HOME=/root\0"s + var + "=/tmp/evil\0PATH=/usr/bin\0"s;
    EXPECT_TRUE(identify(table(), facts(kGit, "/usr/bin/git", env)).empty()) << var;
    EXPECT_EQ(injection_var(env), var);
  }
  // Set but empty injects nothing; a name that merely starts alike is not it.
  EXPECT_EQ(identify(table(), facts(kGit, "/usr/bin/git", "LD_PRELOAD=\0LD_PRELOADX=/x\0"s)).size(), 1u);
  // git's own variables point git at other programs, which have their own identity.
  EXPECT_EQ(identify(table(), facts(kGit, "/usr/bin/git", "GIT_EXEC_PATH=/usr/lib/git-core\0"s)).size(), 1u);
}

TEST(Identity, TheDynamicLoaderIsNobody) {
  EXPECT_TRUE(is_dynamic_loader("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
  EXPECT_TRUE(is_dynamic_loader("/tmp/x/ld.so"));
  EXPECT_TRUE(is_dynamic_loader("/lib/ld-musl-x86_64.so.1"));
  EXPECT_FALSE(is_dynamic_loader("/usr/bin/ld"));
  EXPECT_FALSE(is_dynamic_loader("/usr/bin/git"));
  // Even if its inode were somehow the trusted one.
  EXPECT_TRUE(identify(table(), facts(kGit, "/lib64/ld-linux-x86-64.so.2")).empty());
}

TEST(Identity, OneFileMayCarrySeveralNames) {
  Identities ids = table();
  ids.files.push_back(IdentityFile{"git-tools", "/usr/bin/git", kGit, 0, false});
  EXPECT_EQ(ids.names_of(kGit), (std::vector<std::string>{"git", "git-tools"}));
}

// What the trail keeps of each image: how its identity was found, or the
// reason it has none, in words `cottonbox why` shows.
TEST(Identity, ItSaysHowItWasFoundOrWhyThereIsNone) {
  IdentityFacts f;
  EXPECT_EQ(identify(table(), facts(kGit), &f), std::vector<std::string>{"git"});
  EXPECT_EQ(f, (IdentityFacts{IdentityCheck::Trusted, kGit, ""}));

  EXPECT_TRUE(identify(table(), facts(kRm, "/tmp/x/bin/git"), &f).empty());
  EXPECT_EQ(f, (IdentityFacts{IdentityCheck::NotTrusted, kRm, "/tmp/x/bin/git is no file the policy trusts"}));

  identify(table(), facts(kGit, "/usr/bin/git", "A=1\0LD_PRELOAD=/tmp/evil.so\0"s), &f);
  EXPECT_EQ(f.check, IdentityCheck::Disqualified);
  EXPECT_EQ(f.exe, kGit) << "the file is kept: it is still what ran";
  EXPECT_EQ(f.why, "it was started with LD_PRELOAD set: the dynamic loader runs code that is not its file's");

  identify(table(), facts(kGit, "/lib64/ld-linux-x86-64.so.2"), &f);
  EXPECT_EQ(f.check, IdentityCheck::Disqualified);
  EXPECT_EQ(f.why, "/lib64/ld-linux-x86-64.so.2 is the dynamic loader: it runs whatever file it is given");

  ExeFacts gone = facts(kGit);
  gone.known = false;
  identify(table(), gone, &f);
  EXPECT_EQ(f.check, IdentityCheck::Unknown);
  EXPECT_EQ(f.exe, FileId{});
  EXPECT_NE(f.why.find("could not be read"), std::string::npos) << f.why;

  // A policy that trusts nothing still looks: the file is kept for replays.
  EXPECT_TRUE(identify(Identities{}, facts(kRm, "/usr/bin/rm"), &f).empty());
  EXPECT_EQ(f.check, IdentityCheck::NotTrusted);
  EXPECT_EQ(f.exe, kRm);

  for (auto c : {IdentityCheck::Unknown, IdentityCheck::Trusted, IdentityCheck::NotTrusted, IdentityCheck::Disqualified,
                 IdentityCheck::NotChecked})
    EXPECT_EQ(parse_identity_check(identity_check_name(c)), c);
  EXPECT_FALSE(parse_identity_check("git"));
}

// Another policy's table, applied to what the trail kept: exact for a
// trusted or disqualified image, and the doubt said for the others.
TEST(Identity, AnotherPolicyLooksTheRecordedFileUp) {
  Identities other;
  other.files.push_back(IdentityFile{"vcs", "/usr/bin/git", kGit, 0, false});
  other.files.push_back(IdentityFile{"rm", "/usr/bin/rm", kRm, 0, false});
  std::string doubt;

  // Trusted as git: under the other table, the same file is vcs.
  EXPECT_EQ(identities_under(other, {"git"}, {IdentityCheck::Trusted, kGit, ""}, &doubt),
            std::vector<std::string>{"vcs"});
  EXPECT_EQ(doubt, "");
  // Not trusted then (rm): the other table trusts its file, but its code
  // was never checked.
  EXPECT_EQ(identities_under(other, {}, {IdentityCheck::NotTrusted, kRm, "x"}, &doubt), std::vector<std::string>{"rm"});
  EXPECT_NE(doubt.find("its code was not checked"), std::string::npos) << doubt;
  // A copy elsewhere is another file: nobody, exactly.
  FileId copy{1, 999, 1700000000, 5};
  EXPECT_TRUE(identities_under(other, {}, {IdentityCheck::NotTrusted, copy, "x"}, &doubt).empty());
  EXPECT_EQ(doubt, "");
  // Disqualified (LD_PRELOAD): no table gives it one.
  EXPECT_TRUE(identities_under(other, {}, {IdentityCheck::Disqualified, kGit, "x"}, &doubt).empty());
  EXPECT_EQ(doubt, "");
  // git's file upgraded since the session: the name both know misses it.
  Identities upgraded = table();
  upgraded.files[0].id.ctime_sec += 100;
  EXPECT_TRUE(identities_under(upgraded, {"git"}, {IdentityCheck::Trusted, kGit, ""}, &doubt).empty());
  EXPECT_NE(doubt.find("git's files have changed since"), std::string::npos) << doubt;
  // Never looked at: none, and said.
  EXPECT_TRUE(identities_under(other, {}, {IdentityCheck::NotChecked, {}, "x"}, &doubt).empty());
  EXPECT_NE(doubt.find("not identified"), std::string::npos) << doubt;
}

FileId id_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), st.st_ctim.tv_sec,
                st.st_ctim.tv_nsec};
}

// On real files: a system program's name for its very file, and for
// nothing else.
TEST(Identity, ASystemProgramIsNamedOnlyForItsOwnFile) {
  EXPECT_EQ(system_name_of("/usr/bin/rm", id_of("/usr/bin/rm")), "rm");
  char tmpl[] = "/tmp/cb-sysname-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string dir = tmpl;
  // A copy of rm called git: the name finds /usr/bin/git, another file.
  ASSERT_EQ(std::system(("cp /usr/bin/rm " + dir + "/git").c_str()), 0);
  EXPECT_EQ(system_name_of(dir + "/git", id_of(dir + "/git")), "");
  // The path of the real one with the copy's file (as if replaced): no.
  EXPECT_EQ(system_name_of("/usr/bin/rm", id_of(dir + "/git")), "");
  // A name no system directory has.
  ASSERT_EQ(std::system(("cp /usr/bin/rm " + dir + "/cb-no-such-tool").c_str()), 0);
  EXPECT_EQ(system_name_of(dir + "/cb-no-such-tool", id_of(dir + "/cb-no-such-tool")), "");
  EXPECT_EQ(system_name_of("/usr/bin/rm", FileId{}), "") << "nothing known of the file";
  std::system(("rm -rf " + dir).c_str());
}

Event event_by(std::vector<std::string> names, std::string comm, std::string exe) {
  auto p = std::make_shared<ProcessInfo>();
  p->names = std::move(names);
  p->comm = std::move(comm);
  p->exe = std::move(exe);
  Event e;
  e.action = Action::FileDelete;
  e.path = "/r/.git/HEAD";
  e.proc = std::move(p);
  return e;
}

LoadOptions no_io() {
  LoadOptions o;
  o.resolve_identities = false;
  return o;
}

TEST(Identity, ProcessRulesAndProcNameMatchTheIdentityNotTheCommandName) {
  auto r = load_policy_text({{"p.yaml", R"(version: 1
rules:
  - {id: by-git, action: file.delete, process: [git], decision: allow}
  - {id: named-git, action: file.delete, when: 'proc.name == "git"', decision: allow}
  - {id: comm-git, action: file.delete, when: 'proc.comm == "git"', decision: log}
  - {id: rest, action: file.delete, decision: deny}
)"}},
                            no_io());
  ASSERT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  EXPECT_EQ(decide(*r.policy, event_by({"git"}, "git", "/usr/bin/git")).rule_id, "by-git");
  // Named git by comm, argv[0], prctl or a file called git: not git.
  EXPECT_EQ(decide(*r.policy, event_by({}, "git", "/tmp/bin/git")).rule_id, "comm-git");
  EXPECT_EQ(decide(*r.policy, event_by({}, "rm", "/tmp/bin/git")).rule_id, "rest");
  // proc.name reads the identity: "" for none.
  Policy p = *r.policy;
  p.rules.erase(p.rules.begin());
  EXPECT_EQ(decide(p, event_by({"git"}, "x", "/usr/bin/git")).rule_id, "named-git");
  EXPECT_EQ(decide(p, event_by({"tools", "git"}, "x", "/usr/bin/git")).rule_id, "named-git");
  EXPECT_EQ(decide(p, event_by({}, "git", "/usr/bin/git")).rule_id, "comm-git");
}

// The loader resolves every trusted name: declared files, and names rules
// use, looked up in the system's directories only.
TEST(Identity, LoaderResolvesDeclaredFilesAndNamesRulesUse) {
  char tmpl[] = "/tmp/cb-identity-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string dir = tmpl;
  std::string tool = dir + "/tool";
  { std::ofstream(tool) << "#!/bin/sh\n"; }
  chmod(tool.c_str(), 0755);
  { std::ofstream(dir + "/helper-a") << "x"; }
  chmod((dir + "/helper-a").c_str(), 0755);
  auto r = load_policy_text({{"p.yaml",
                              "version: 1\n"
                              "identities:\n"
                              "  mytool: [" +
                                  tool + ", \"" + dir +
                                  "/helper-*\"]\n"
                                  "rules:\n"
                                  "  - {id: a, action: file.delete, process: [mytool, sh], decision: allow}\n"
                                  "  - {id: b, action: file.delete, when: 'proc.name == \"nosuchtool-cb\"', "
                                  "decision: deny}\n"}},
                            LoadOptions{});
  ASSERT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  const Identities& ids = r.policy->identities;
  std::vector<std::string> paths;
  for (const auto& f : ids.files)
    if (f.name == "mytool") paths.push_back(f.path);
  // realpath'd; the glob listed.  (/tmp itself may be a link.)
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_TRUE(paths[0].ends_with("/tool"));
  EXPECT_TRUE(paths[1].ends_with("/helper-a"));
  bool sh = false;
  for (const auto& f : ids.files) sh |= f.name == "sh";
  EXPECT_TRUE(sh) << "sh is found in the system's directories";
  EXPECT_EQ(ids.unresolved, std::vector<std::string>{"nosuchtool-cb"});
  // The change time is part of it: touching the file's inode changes it.
  struct stat st;
  ASSERT_EQ(stat(tool.c_str(), &st), 0);
  FileId now{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), st.st_ctim.tv_sec, st.st_ctim.tv_nsec};
  EXPECT_EQ(ids.names_of(now), std::vector<std::string>{"mytool"});
  usleep(20000);
  chmod(tool.c_str(), 0700);
  ASSERT_EQ(stat(tool.c_str(), &st), 0);
  FileId later{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), st.st_ctim.tv_sec,
               st.st_ctim.tv_nsec};
  EXPECT_TRUE(ids.names_of(later).empty());
  std::system(("rm -rf " + dir).c_str());
}

TEST(Identity, LoaderRejectsBadIdentities) {
  auto r = load_policy_text({{"p.yaml",
                              "version: 1\n"
                              "identities:\n"
                              "  git: [usr/bin/git, \"/usr/*/git\"]\n"}},
                            no_io());
  ASSERT_FALSE(r.policy);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(format_diagnostic(r.errors[0]),
            "p.yaml:3:9: error: identity 'git': 'usr/bin/git' must be an absolute path");
  EXPECT_EQ(format_diagnostic(r.errors[1]),
            "p.yaml:3:22: error: identity 'git': wildcards may appear only in the last component");
}

// Paths in rules may come from a named list: data, not code.
TEST(Identity, PathListsAreData) {
  LoadOptions o = no_io();
  o.vars = {{"HOME", "/home/u"}};
  auto r = load_policy_text({{"p.yaml",
                              "version: 1\n"
                              "lists:\n"
                              "  later: [\"${HOME}/.bash_aliases\", \"${HOME}/.local/bin/**\"]\n"
                              "rules:\n"
                              "  - {id: a, action: file.mutate, path: ['@later'], decision: deny}\n"}},
                            o);
  ASSERT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  Event e;
  e.action = Action::FileCreate;
  e.path = "/home/u/.local/bin/git";
  EXPECT_EQ(decide(*r.policy, e).rule_id, "a");
  e.path = "/home/u/.bash_aliases";
  EXPECT_EQ(decide(*r.policy, e).rule_id, "a");
  e.path = "/home/u/notes";
  EXPECT_EQ(decide(*r.policy, e).rule_id, "");
  auto bad = load_policy_text({{"p.yaml",
                                "version: 1\nrules:\n"
                                "  - {id: a, action: file.mutate, path: ['@nope'], decision: deny}\n"}},
                              o);
  ASSERT_FALSE(bad.policy);
  EXPECT_EQ(format_diagnostic(bad.errors[0]), "p.yaml:3:41: error: unknown list '@nope'");
}

// ${HOME} through a symbolic link is the real directory: rules name what the
// supervisor sees.
TEST(Identity, VariablesNamingPathsAreCanonical) {
  char tmpl[] = "/tmp/cb-canon-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl));
  std::string dir = tmpl;
  mkdir((dir + "/home").c_str(), 0755);
  ASSERT_EQ(symlink("home", (dir + "/homelink").c_str()), 0);
  char real[PATH_MAX];
  ASSERT_TRUE(realpath((dir + "/home").c_str(), real));
  LoadOptions o = no_io();
  o.vars = {{"HOME", dir + "/homelink"}, {"DATA", dir + "/homelink/not/yet"}, {"NAME", "plain"}};
  auto r = load_policy_text({{"p.yaml",
                              "version: 1\nrules:\n"
                              "  - {id: a, action: file.delete, path: ['${HOME}/**'], decision: deny}\n"}},
                            o);
  ASSERT_TRUE(r.policy);
  EXPECT_EQ(r.policy->vars.at("HOME"), std::string(real));
  EXPECT_EQ(r.policy->vars.at("DATA"), std::string(real) + "/not/yet");
  EXPECT_EQ(r.policy->vars.at("NAME"), "plain");
  Event e;
  e.action = Action::FileDelete;
  e.path = std::string(real) + "/.ssh/id_rsa";
  EXPECT_EQ(decide(*r.policy, e).rule_id, "a");
  std::system(("rm -rf " + dir).c_str());
}

// `cottonbox check` warns about exceptions a session could acquire.
TEST(Identity, CheckWarnsAboutTrustAProcessControls) {
  auto r = load_policy_text({{"p.yaml", R"(version: 1
rules:
  - {id: by-comm, action: file.delete, when: 'proc.comm == "git"', decision: allow}
  - {id: by-exe, action: file.delete, when: 'proc.exe matches "**/git-core/*"', decision: allow}
  - {id: deny-by-comm, action: file.delete, when: 'proc.comm == "rm"', decision: deny}
  - {id: by-name, action: file.delete, when: 'proc.name == "git"', decision: allow}
)"}},
                            no_io());
  ASSERT_TRUE(r.policy);
  Policy p = *r.policy;
  p.identities.files.push_back(IdentityFile{"mytool", "/home/u/bin/mytool", kRm, 1000, true});
  p.identities.unresolved.push_back("nosuch");
  auto w = trust_warnings(p);
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0],
            "p.yaml:3: rule 'by-comm' allows by proc.comm, the command name, which a process sets itself (prctl, "
            "/proc/self/comm, a file's name): a session can acquire this exception (use process: or proc.name, an "
            "identity)");
  EXPECT_NE(w[1].find("rule 'by-exe' allows by proc.exe"), std::string::npos);
  EXPECT_EQ(w[2],
            "identity 'mytool' is the file /home/u/bin/mytool, which someone other than root can change or replace: a "
            "session running as that user could have planted it before this policy loaded");
  EXPECT_NE(w[3].find("'nosuch' names no executable"), std::string::npos);
}

}  // namespace
}  // namespace cb
