// replay() and suggest() as pure functions: sessions of stored events in,
// reports out.  (tests/cli/audit_cli_test.cpp runs them on real sessions.)
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "audit/judge.h"
#include "audit/replay.h"
#include "audit/rule_text.h"
#include "audit/suggest.h"
#include "policy/glob.h"
#include "policy/policy.h"

namespace cb::audit {
namespace {

Policy load(const std::string& text) {
  LoadOptions o;
  o.vars = {{"CWD", "/w"}, {"HOME", "/h"}};
  auto r = load_policy_text({{"p.yaml", text}}, o);
  EXPECT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  return r.policy ? std::move(*r.policy) : Policy{};
}

std::shared_ptr<const ProcessInfo> proc(std::string comm) {
  auto p = std::make_shared<ProcessInfo>();
  p->pid = 10;
  p->proc_id = 1;
  p->comm = comm;
  p->exe = "/usr/bin/" + comm;
  p->argv = {comm};
  return p;
}

// An event as the supervisor would have recorded it under `p`.
db::StoredEvent recorded(const Policy& p, int64_t id, Action a, std::string path, std::string comm = "rm",
                         bool allowed_if_asked = true) {
  db::StoredEvent e;
  e.id = id;
  e.session = 1;
  e.row.seq = static_cast<uint64_t>(id);
  e.row.ev.action = a;
  e.row.ev.path = std::move(path);
  e.row.ev.proc = proc(comm);
  e.image_recorded = e.deletes_recorded = e.facets_recorded = true;
  e.row.verdict = rejudge(p, e, Identity::Recorded).verdict;
  Decision d = e.row.verdict.decision;
  e.row.allowed = d == Decision::Allow || d == Decision::Log || (d == Decision::Ask && allowed_if_asked);
  e.row.layer = Layer::Notify;
  if (d == Decision::Ask)
    e.approval = ApprovalRow{e.row.seq, 1, 2, "tty", allowed_if_asked ? "allow-once" : "deny-once", ""};
  return e;
}

const char* kPolicy = R"(version: 1
default: allow
rules:
  - id: protect
    action: [file.delete, file.rename]
    path: ["/w/prot/**"]
    decision: deny
  - id: ask-work
    action: file.delete
    path: ["/w/work/**"]
    decision: ask
)";

ReplaySession session_of(const Policy& original, std::vector<db::StoredEvent> events, const std::string& next) {
  ReplaySession s;
  s.summary.id = 1;
  s.summary.start.tracer = "seccomp,ebpf";
  s.events = std::move(events);
  s.original = original;
  s.next = load(next);
  return s;
}

TEST(Replay, CountsGroupsAndSaysItInWords) {
  Policy p = load(kPolicy);
  std::vector<db::StoredEvent> ev = {
      recorded(p, 1, Action::FileDelete, "/w/prot/a"), recorded(p, 2, Action::FileDelete, "/w/work/a"),
      recorded(p, 3, Action::FileDelete, "/w/other"), recorded(p, 4, Action::FileWrite, "/w/other")};
  std::vector<ReplaySession> s;
  s.push_back(session_of(p, ev, "version: 1\ndefault: deny\nrules: []\n"));
  ReplayReport r = replay(s);
  EXPECT_EQ(r.judged, 4u);
  ASSERT_EQ(r.changes.size(), 3u);  // 2 (ask), 3 and 4 (allow) -> deny; 1 stays deny
  EXPECT_EQ(replay_summary(r), "would deny 2 that were allowed, deny 1 that was asked");
  EXPECT_TRUE(r.uncertain.empty());
  nlohmann::json j = replay_json(r, s);
  ASSERT_EQ(j["by_rule"].size(), 1u);
  EXPECT_TRUE(j["by_rule"][0]["rule"].is_null());
}

TEST(Replay, ACallIsJudgedWithAllItsParts) {
  // mv x /w/prot/a: the rename of x, and the deletion of the file it replaces.
  Policy p = load(kPolicy);
  db::StoredEvent e;
  e.id = 7;
  e.row.ev.action = Action::FileRename;
  e.row.ev.path = "/w/x";
  e.row.ev.target = "/w/prot/a";
  e.row.ev.proc = proc("mv");
  e.row.ev.proc_deletes = 1;
  e.row.facets = {FacetRow{Action::FileDelete, "/w/prot/a", "", {}, false, 0}};
  e.image_recorded = e.deletes_recorded = e.facets_recorded = true;
  e.row.verdict = Verdict{Decision::Deny, "protect", "", false};
  auto parts = judged_events(e);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].proc_deletes, 0u) << "the rename saw the count before the call's deletion";
  EXPECT_EQ(parts[1].proc_deletes, 1u);
  Rejudged r = rejudge(p, e, Identity::Recorded);
  EXPECT_EQ(r.verdict.rule_id, "protect");
  EXPECT_EQ(r.facet, 1u);
  std::vector<ReplaySession> s;
  s.push_back(session_of(p, {e}, kPolicy));
  EXPECT_TRUE(replay(s).changes.empty()) << "the same policy changes nothing";
}

TEST(Replay, WhatWasNotRecordedMakesAnEventUncertain) {
  Policy p = load(kPolicy);
  db::StoredEvent old = recorded(p, 1, Action::FileDelete, "/w/other");
  old.image_recorded = old.deletes_recorded = false;  // a row from before schema 3
  db::StoredEvent mounted = recorded(p, 2, Action::FileDelete, "/w/alias/a");
  mounted.row.verdict = Verdict{Decision::Deny, "protect", "", false};  // a mount refused it under another name
  mounted.row.layer = Layer::Mount;
  std::vector<ReplaySession> s;
  s.push_back(session_of(p, {old, mounted},
                         "version: 1\nrules:\n  - id: no-rm\n    action: file.delete\n    process: [rm]\n"
                         "    when: 'proc.deletes > 5'\n    decision: deny\n"));
  ReplayReport r = replay(s);
  ASSERT_EQ(r.uncertain.size(), 2u);
  std::string all;
  for (const auto& u : r.uncertain)
    for (const auto& why : u.reasons) all += why + "\n";
  EXPECT_NE(all.find("the process as it was"), std::string::npos) << all;
  EXPECT_NE(all.find("proc.deletes was not recorded"), std::string::npos) << all;
  EXPECT_NE(all.find("read-only mount"), std::string::npos) << all;

  // A session whose policy texts were not kept: said once, for the session.
  s[0].original.reset();
  r = replay(s);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("were not recorded"), std::string::npos);
}

TEST(Suggest, TheNarrowestRuleThatChangesNothingElse) {
  Policy p = load(kPolicy);
  std::vector<db::StoredEvent> ev = {
      recorded(p, 1, Action::FileDelete, "/w/work/a"),               // asked, allowed
      recorded(p, 2, Action::FileDelete, "/w/work/b"),               // asked, allowed
      recorded(p, 3, Action::FileDelete, "/w/work/c", "rm", false),  // asked, refused
      recorded(p, 4, Action::FileDelete, "/w/work/sub/d"),           // asked, allowed, elsewhere
      recorded(p, 5, Action::FileDelete, "/w/prot/x"),               // denied by a rule
  };
  db::SessionSummary s;
  s.id = 1;
  s.start.argv = {"agent"};
  Suggestion sug = suggest(s, ev, &p, 0);
  EXPECT_EQ(std::set<size_t>(sug.target.begin(), sug.target.end()), (std::set<size_t>{0, 1, 3}));
  // work/* would also allow c: exact paths instead.
  EXPECT_EQ(sug.yaml.find("/w/work/*"), std::string::npos) << sug.yaml;
  EXPECT_NE(sug.yaml.find("path: [\"/w/work/a\", \"/w/work/b\"]"), std::string::npos) << sug.yaml;
  EXPECT_NE(sug.yaml.find("path: [\"/w/work/sub/d\"]"), std::string::npos) << sug.yaml;

  // Replayed in front of the session's policy: exactly the target changes.
  std::vector<ReplaySession> rs;
  rs.push_back(session_of(p, ev, kPolicy));
  LoadOptions o;
  o.vars = {{"CWD", "/w"}, {"HOME", "/h"}};
  auto both = load_policy_text({{"s.yaml", sug.yaml}, {"p.yaml", kPolicy}}, o);
  ASSERT_TRUE(both.policy);
  rs[0].next = std::move(*both.policy);
  ReplayReport r = replay(rs);
  std::set<size_t> changed;
  for (const auto& c : r.changes) changed.insert(c.event);
  EXPECT_EQ(changed, (std::set<size_t>{0, 1, 3}));

  // Without the refusal, one process deleting two files in one directory
  // gets the directory.
  ev.erase(ev.begin() + 2);
  sug = suggest(s, ev, &p, 0);
  EXPECT_NE(sug.yaml.find("path: [\"/w/work/*\"]"), std::string::npos) << sug.yaml;
}

// ------------------------------------------------------------ identity --

const FileId kGitFile{1, 100, 1700000000, 5};
const FileId kCopyFile{1, 555, 1800000000, 7};
const FileId kRmFile{1, 200, 1700000000, 5};

// A process image as the supervisor records it: its identities and how
// they were found.
std::shared_ptr<const ProcessInfo> image(std::string comm, std::string exe, std::vector<std::string> names,
                                         IdentityFacts facts) {
  auto p = std::make_shared<ProcessInfo>(*proc(comm));
  p->exe = std::move(exe);
  p->names = std::move(names);
  p->identity = std::move(facts);
  return p;
}
const auto kRealGit = [] { return image("git", "/usr/bin/git", {"git"}, {IdentityCheck::Trusted, kGitFile, ""}); };
const auto kFakeGit = [] {
  return image("git", "/tmp/x/bin/git", {},
               {IdentityCheck::NotTrusted, kCopyFile, "/tmp/x/bin/git is no file the policy trusts"});
};

const char* kRepoPolicy = R"(version: 1
default: allow
rules:
  - id: git-in-repo
    action: file.mutate
    path: ["/w/.git/**"]
    process: [git]
    decision: allow
  - id: no-one-else
    action: [file.delete, file.rename]
    path: ["/w/.git/**"]
    decision: deny
)";

// The policy with the identity table a load on a machine with these files gives.
Policy repo_policy(const std::string& text = kRepoPolicy) {
  Policy p = load(text);
  p.identities.files.clear();
  p.identities.unresolved.clear();
  for (const auto& name : {"git", "vcs"}) p.identities.files.push_back(IdentityFile{name, "/usr/bin/git", kGitFile});
  p.identities.files.push_back(IdentityFile{"rm", "/usr/bin/rm", kRmFile});
  return p;
}

db::StoredEvent by(const Policy& p, int64_t id, std::shared_ptr<const ProcessInfo> who, Action a, std::string path,
                   std::string target = "") {
  db::StoredEvent e = recorded(p, id, a, std::move(path));
  e.row.ev.proc = std::move(who);
  e.row.ev.target = std::move(target);
  if (a == Action::FileRename && !e.row.ev.target.empty())
    e.row.facets = {FacetRow{Action::FileDelete, e.row.ev.target, "", {}, false, 0}};  // it replaces the target
  e.identity_recorded = true;
  e.row.verdict = rejudge(p, e, Identity::Recorded).verdict;
  e.row.allowed = e.row.verdict.decision != Decision::Deny;
  return e;
}

TEST(Replay, ProcessesAreJudgedByTheIdentityRecordedNeverByTheirCommandName) {
  Policy p = repo_policy();
  std::vector<db::StoredEvent> ev = {
      by(p, 1, kRealGit(), Action::FileDelete, "/w/.git/index.lock"),
      by(p, 2, kFakeGit(), Action::FileDelete, "/w/.git/HEAD"),
      // A rename over a ref: every part of it is judged as git.
      by(p, 3, kRealGit(), Action::FileRename, "/w/.git/refs/heads/main.lock", "/w/.git/refs/heads/main"),
  };
  EXPECT_EQ(ev[0].row.verdict.rule_id, "git-in-repo");
  EXPECT_EQ(ev[1].row.verdict.rule_id, "no-one-else") << "called git, but not git's file";
  EXPECT_EQ(ev[2].row.verdict.rule_id, "git-in-repo");
  for (const auto& part : judged_events(ev[2]))
    EXPECT_EQ(part.proc->names, std::vector<std::string>{"git"}) << "the replaced file is deleted by git too";

  // The policy the session ran with, replayed: exactly what happened.
  std::vector<ReplaySession> s;
  s.push_back(session_of(p, ev, kRepoPolicy));
  s[0].next = repo_policy();
  ReplayReport r = replay(s);
  EXPECT_TRUE(r.changes.empty()) << replay_text(r, s, "same");
  EXPECT_TRUE(r.uncertain.empty()) << replay_text(r, s, "same");

  // A policy that calls git's file vcs: each process is looked up by the
  // file it ran.  The real git is vcs there; the copy is nobody.
  const char* vcs =
      "version: 1\ndefault: allow\nrules:\n"
      "  - {id: vcs-in-repo, action: file.mutate, path: [\"/w/.git/**\"], process: [vcs], decision: allow}\n"
      "  - {id: repo, action: file.mutate, path: [\"/w/.git/**\"], decision: deny}\n";
  s[0].next = repo_policy(vcs);
  EXPECT_EQ(rejudge(s[0].next, ev[0], Identity::Afresh).verdict.rule_id, "vcs-in-repo");
  EXPECT_EQ(rejudge(s[0].next, ev[1], Identity::Afresh).verdict.rule_id, "repo");
  r = replay(s);
  EXPECT_TRUE(r.changes.empty()) << replay_text(r, s, "vcs");
  EXPECT_TRUE(r.uncertain.empty()) << replay_text(r, s, "vcs");
  // The same, where git's file is no longer the one the policy means (it
  // was upgraded since): git's events change, and are said to be uncertain.
  s[0].next = repo_policy(vcs);
  for (auto& f : s[0].next.identities.files) f.id.ctime_sec += 1;
  r = replay(s);
  std::set<int64_t> changed;
  for (const auto& c : r.changes) changed.insert(ev[c.event].id);
  EXPECT_EQ(changed, (std::set<int64_t>{1, 3})) << replay_text(r, s, "upgraded");
  std::string text = replay_text(r, s, "upgraded");
  EXPECT_NE(text.find("git (pid 0, identity git)  file.delete /w/.git/index.lock"), std::string::npos) << text;
  EXPECT_NE(text.find("it was git when it ran, and git's files have changed since"), std::string::npos) << text;
}

TEST(Replay, AnIdentityNotRecordedIsTheOnePathGivesNotTheCommandName) {
  // A trail from before schema 6: the process's image without its identity.
  Policy p = repo_policy();
  db::StoredEvent real = by(p, 1, image("git", "/usr/bin/git", {}, {}), Action::FileDelete, "/w/.git/index.lock");
  db::StoredEvent fake = by(p, 2, image("git", "/tmp/x/bin/git", {}, {}), Action::FileDelete, "/w/.git/HEAD");
  real.identity_recorded = fake.identity_recorded = false;
  real.row.verdict = Verdict{Decision::Allow, "git-in-repo", "", false};  // what the supervisor decided
  fake.row.verdict = Verdict{Decision::Deny, "no-one-else", "", false};
  EXPECT_EQ(rejudge(p, real, Identity::Recorded).verdict.rule_id, "git-in-repo") << "/usr/bin/git is git's path";
  EXPECT_EQ(rejudge(p, fake, Identity::Recorded).verdict.rule_id, "no-one-else") << "not for a name it chose";
  EXPECT_TRUE(identity_matters(p, fake));
  db::StoredEvent elsewhere = by(p, 3, image("git", "/tmp/x/bin/git", {}, {}), Action::FileDelete, "/w/src/a");
  EXPECT_FALSE(identity_matters(p, elsewhere)) << "no rule there reads the process";

  std::vector<ReplaySession> s;
  s.push_back(session_of(p, {real, fake}, kRepoPolicy));
  s[0].next = repo_policy();
  ReplayReport r = replay(s);
  EXPECT_TRUE(r.changes.empty()) << replay_text(r, s, "same");
  ASSERT_EQ(r.uncertain.size(), 2u) << "said where it matters";
  EXPECT_NE(r.uncertain[1].reasons.back().find("judged by the path of its executable, /tmp/x/bin/git"),
            std::string::npos)
      << r.uncertain[1].reasons.back();
}

TEST(Suggest, ARuleNamesTheProcessByIdentityNeverByItsCommandName) {
  const char* asks = R"(version: 1
default: allow
rules:
  - id: ask-work
    action: file.delete
    path: ["/w/work/**"]
    decision: ask
)";
  Policy p = load(asks);
  auto rm =
      image("rm", "/usr/bin/rm", {}, {IdentityCheck::NotTrusted, kRmFile, "/usr/bin/rm is no file the policy trusts"});
  auto preloaded =
      image("rm", "/usr/bin/rm", {}, {IdentityCheck::Disqualified, kRmFile, "it was started with LD_PRELOAD set: ..."});
  std::vector<db::StoredEvent> ev = {
      by(p, 1, kRealGit(), Action::FileDelete, "/w/work/g"), by(p, 2, kFakeGit(), Action::FileDelete, "/w/work/f"),
      by(p, 3, rm, Action::FileDelete, "/w/work/r"), by(p, 4, preloaded, Action::FileDelete, "/w/work/p")};
  for (auto& e : ev) e.row.allowed = true;  // each was asked and allowed
  // The namer finds /usr/bin/rm's name for its file, and nothing for the
  // copy (as system_name_of() on the real files).
  int looked = 0;
  ProgramNamer namer = [&](const ProcessInfo& q) {
    ++looked;
    return q.identity.exe == kRmFile ? std::string("rm") : std::string();
  };
  db::SessionSummary sum;
  sum.id = 1;
  Suggestion sug = suggest(sum, ev, &p, 0, namer);
  std::map<std::string, std::vector<std::string>> procs_of;  // path -> the rule's processes
  for (const auto& r : sug.rules)
    for (const auto& path : r.paths) procs_of[path] = r.processes;
  EXPECT_EQ(procs_of["/w/work/g"], std::vector<std::string>{"git"});
  EXPECT_EQ(procs_of["/w/work/r"], std::vector<std::string>{"rm"});
  EXPECT_EQ(procs_of["/w/work/f"], std::vector<std::string>{}) << "called git, but git's identity is not its";
  EXPECT_EQ(procs_of["/w/work/p"], std::vector<std::string>{}) << "a disqualified process is named by nothing";
  EXPECT_EQ(looked, 2) << "only clean processes without an identity are looked up, once each";
  EXPECT_NE(sug.yaml.find("# for any process: 'git' (/tmp/x/bin/git is no file the policy trusts)"), std::string::npos)
      << sug.yaml;
  EXPECT_EQ(std::set<size_t>(sug.target.begin(), sug.target.end()), (std::set<size_t>{0, 1, 2, 3}));
}

TEST(RuleText, ExactGlobsMatchExactlyTheirPath) {
  for (std::string path :
       std::vector<std::string>{"/w/a*b?[c]{d,e}\\f", std::string("/w/bad\xff\xfe", 8), "/w/${HOME}/x", "/plain"}) {
    std::string g = exact_glob(path);
    auto compiled = Glob::compile(g);
    ASSERT_TRUE(compiled) << g;
    EXPECT_TRUE(compiled->match(path)) << g;
    EXPECT_EQ(g.find("${"), std::string::npos) << "never a variable for the loader: " << g;
  }
  EXPECT_FALSE(Glob::compile(exact_glob("/w/a*b"))->match("/w/aXb"));
  EXPECT_EQ(yaml_quote("a\"b\\c\n"), "\"a\\\"b\\\\c\\x0a\"");
}

}  // namespace
}  // namespace cb::audit
