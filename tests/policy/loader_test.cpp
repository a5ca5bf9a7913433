#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>

#include "policy/policy.h"
#include "policy/sha256.h"

namespace cb {
namespace {

LoadOptions options() {
  LoadOptions o;
  o.vars = {{"CWD", "/home/u/p"}, {"HOME", "/home/u"}, {"PROTECT", "/srv/fixture"}};
  return o;
}

LoadResult load(const std::string& text, LoadOptions opts = options()) {
  return load_policy_text({{"p.yaml", text}}, opts);
}

std::vector<std::string> errors_of(const LoadResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.errors) out.push_back(format_diagnostic(d));
  return out;
}

std::vector<std::string> errors(const std::string& text) {
  auto r = load(text);
  EXPECT_FALSE(r.policy) << "loaded: " << text;
  return errors_of(r);
}

// Exactly one error, with its location.
void expect_error(const std::string& text, const std::string& expected) {
  auto e = errors(text);
  ASSERT_EQ(e.size(), 1u) << ::testing::PrintToString(e);
  EXPECT_EQ(e[0], expected);
}

Policy load_ok(const std::string& text, LoadOptions opts = options()) {
  auto r = load(text, opts);
  EXPECT_TRUE(r.policy) << ::testing::PrintToString(errors_of(r));
  return r.policy ? std::move(*r.policy) : Policy{};
}

const std::string kHead = "version: 1\nrules:\n";

TEST(Loader, LoadsTheIssueExample) {
  Policy p = load_ok(R"(version: 1
default: allow
lists:
  archivers: [tar, zip, 7z, rsync]
rules:
  - id: protect-src
    action: [file.delete, file.rename, file.truncate, file.write]
    path: ["${PROTECT}/**"]
    process: ["@archivers"]          # optional: comm or executable basename, or a list
    when: 'proc.name == "tar" and not path matches "**/*.o"'   # optional
    decision: deny                    # deny | allow | ask | log
    message: "free text shown to the user"
)");
  ASSERT_EQ(p.rules.size(), 6u);  // the rule, three guards and the namespace and mount allowances
  const Rule& r = p.rules[0];
  EXPECT_EQ(r.id, "protect-src");
  EXPECT_EQ(r.actions,
            bit(Action::FileDelete) | bit(Action::FileRename) | bit(Action::FileTruncate) | bit(Action::FileWrite));
  ASSERT_EQ(r.paths.size(), 1u);
  EXPECT_EQ(r.paths[0].text(), "/srv/fixture/**");
  EXPECT_EQ(r.processes, (std::vector<std::string>{"tar", "zip", "7z", "rsync"}));
  ASSERT_TRUE(r.when);
  EXPECT_EQ(r.when_text, "proc.name == \"tar\" and not path matches \"**/*.o\"");
  EXPECT_EQ(r.decision, Decision::Deny);
  EXPECT_EQ(r.message, "free text shown to the user");
  EXPECT_EQ(r.loc.file, "p.yaml");
  EXPECT_EQ(r.loc.line, 6);
  EXPECT_EQ(r.loc.col, 5);
  EXPECT_FALSE(r.builtin());
  EXPECT_EQ(p.default_decision, Decision::Allow);
  EXPECT_EQ(p.files, std::vector<std::string>{"p.yaml"});
  EXPECT_EQ(p.vars.at("PROTECT"), "/srv/fixture");
  EXPECT_EQ(p.hash.size(), 64u);
}

TEST(Loader, GuardsComeLastAndAreBuiltin) {
  Policy p = load_ok(kHead + "  - {id: a, action: '*', decision: log}\n");
  ASSERT_EQ(p.rules.size(), 6u);
  // Namespaces and mounts in them are allowed (what would undo a layer is
  // refused before any rule: decide_test); the other guards deny.
  std::vector<std::tuple<std::string, ActionMask, Decision>> want = {
      {"cottonbox:guard-io_uring", bit(Action::SysIoUring), Decision::Deny},
      {"cottonbox:namespaces", bit(Action::SysNamespace), Decision::Allow},
      {"cottonbox:mounts", bit(Action::SysMount), Decision::Allow},
      {"cottonbox:guard-trace", bit(Action::ProcTrace), Decision::Deny},
      {"cottonbox:guard-kernel", bit(Action::SysKernel), Decision::Deny},
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const Rule& g = p.rules[i + 1];
    EXPECT_EQ(g.id, std::get<0>(want[i]));
    EXPECT_EQ(g.actions, std::get<1>(want[i]));
    EXPECT_EQ(g.decision, std::get<2>(want[i]));
    EXPECT_TRUE(g.builtin());
    EXPECT_TRUE(g.paths.empty());
    if (g.decision == Decision::Deny) {
      EXPECT_NE(g.message.find("denied because"), std::string::npos) << g.message;
    }
  }
  auto opts = options();
  opts.add_guards = false;
  EXPECT_EQ(load_ok(kHead + "  - {id: a, action: '*', decision: log}\n", opts).rules.size(), 1u);
}

TEST(Loader, ActionGroupsAndPathNormalisation) {
  Policy p = load_ok(kHead + R"(  - id: a
    action: [file.mutate, net.*]
    path: ["${CWD}//src//", "/", "*.o", "tcp:*:22", "unix:/run/*.sock"]
    decision: ask
  - id: b
    action: sys.namespace
    path: user
    decision: allow
)");
  EXPECT_EQ(p.rules[0].actions, kFileMutate | bit(Action::NetConnect) | bit(Action::NetBind) | bit(Action::NetSend) |
                                    bit(Action::NetListen));
  std::vector<std::string> texts;
  for (const auto& g : p.rules[0].paths) texts.push_back(g.text());
  EXPECT_EQ(texts, (std::vector<std::string>{"/home/u/p/src", "/", "*.o", "tcp:*:22", "unix:/run/*.sock"}));
  EXPECT_EQ(p.rules[1].paths[0].text(), "user");
}

TEST(Loader, VariableValuesAreMatchedLiterally) {
  auto opts = options();
  opts.vars["PROTECT"] = "/srv/a[1]{x,y}";
  Policy p = load_ok(kHead + "  - {id: a, action: file.write, path: '${PROTECT}/**', decision: deny}\n", opts);
  EXPECT_TRUE(p.rules[0].paths[0].match("/srv/a[1]{x,y}/f"));
  EXPECT_FALSE(p.rules[0].paths[0].match("/srv/a1x/f"));
  EXPECT_TRUE(p.rules[0].paths[0].is_whole_tree());
  EXPECT_EQ(p.rules[0].paths[0].literal_base(), "/srv/a[1]{x,y}");

  // A literal "${" in a glob: escape the brace.
  Policy dollar = load_ok(kHead + "  - {id: a, action: file.write, path: '/x/$\\{HOME\\}/*', decision: deny}\n");
  EXPECT_TRUE(dollar.rules[0].paths[0].match("/x/${HOME}/f"));
}

TEST(Loader, MessagesAndWhenExpandVariables) {
  Policy p = load_ok(kHead + R"(  - id: a
    action: file.delete
    when: 'path matches "${HOME}/.cache/**"'
    decision: allow
    message: "kept: ${PROTECT}, not $HOME or $"
)");
  EXPECT_EQ(p.rules[0].message, "kept: /srv/fixture, not $HOME or $");
  Event ev;
  ev.action = Action::FileDelete;
  ev.path = "/home/u/.cache/x";
  EXPECT_TRUE(eval_expr(*p.rules[0].when, ev));
}

TEST(Loader, DefaultFromTheLastFileThatSetsIt) {
  auto two = [](const std::string& a, const std::string& b) {
    auto r = load_policy_text({{"a.yaml", a}, {"b.yaml", b}}, options());
    EXPECT_TRUE(r.policy) << ::testing::PrintToString(errors_of(r));
    return r.policy ? *r.policy : Policy{};
  };
  EXPECT_EQ(two("version: 1\ndefault: deny\n", "version: 1\n").default_decision, Decision::Deny);
  EXPECT_EQ(two("version: 1\ndefault: deny\n", "version: 1\ndefault: ask\n").default_decision, Decision::Ask);
  EXPECT_EQ(two("version: 1\n", "version: 1\n").default_decision, Decision::Allow);
}

TEST(Loader, RulesAndListsSpanFiles) {
  auto r = load_policy_text({{"a.yaml",
                              "version: 1\nlists:\n  tools: [make]\nrules:\n"
                              "  - {id: one, action: file.write, process: '@late', decision: deny}\n"},
                             {"b.yaml",
                              "version: 1\nlists:\n  late: [cc, '@tools']\nrules:\n"
                              "  - {id: two, action: file.write, decision: allow}\n"}},
                            options());
  ASSERT_TRUE(r.policy) << ::testing::PrintToString(errors_of(r));
  EXPECT_EQ(r.policy->rules[0].id, "one");
  EXPECT_EQ(r.policy->rules[0].processes, (std::vector<std::string>{"cc", "make"}));
  EXPECT_EQ(r.policy->rules[1].id, "two");
  EXPECT_EQ(r.policy->files, (std::vector<std::string>{"a.yaml", "b.yaml"}));
}

TEST(Loader, NullListsAndRulesAreEmpty) {
  Policy p = load_ok("version: 1\nlists:\nrules:\n");
  EXPECT_EQ(p.rules.size(), 5u);  // only the built-ins
}

// ---------------------------------------------------------------- errors

TEST(LoaderErrors, Yaml) {
  expect_error("version: 1\nrules:\n  - id: [x\n", "p.yaml:4:1: error: invalid YAML: end of sequence flow not found");
  expect_error("version: 1\nrules: [\n", "p.yaml:3:1: error: invalid YAML: end of sequence flow not found");
  expect_error("# only a comment\n", "p.yaml:1:1: error: empty policy; expected at least 'version: 1'");
  expect_error("- a\n- b\n",
               "p.yaml:1:1: error: a policy must be a mapping with 'version', 'default', 'lists' "
               "and 'rules'");
}

TEST(LoaderErrors, TopLevel) {
  expect_error("default: deny\n", "p.yaml:1:1: error: missing 'version: 1'");
  expect_error("version: 2\n", "p.yaml:1:10: error: unsupported version '2'; this cottonbox reads version 1");
  expect_error("version: [1]\n", "p.yaml:1:10: error: 'version' must be a number");
  expect_error("version: 1\ndefault: alow\n", "p.yaml:2:10: error: unknown decision 'alow'; did you mean 'allow'?");
  expect_error("version: 1\ndefault: maybe\n",
               "p.yaml:2:10: error: unknown decision 'maybe' (expected allow, deny, ask or log)");
  expect_error("version: 1\ndefault:\n", "p.yaml:2:1: error: 'default' must be one of allow, deny, ask or log");
  expect_error("version: 1\nrule: []\n", "p.yaml:2:1: error: unknown key 'rule'; did you mean 'rules'?");
  expect_error("version: 1\nfoo: []\n",
               "p.yaml:2:1: error: unknown key 'foo' (expected version, default, lists, identities, rules or keep)");
  expect_error("version: 1\nversion: 1\n", "p.yaml:2:1: error: duplicate key 'version' (first at 1:1)");
  expect_error("version: 1\nrules: {a: 1}\n", "p.yaml:2:8: error: 'rules' must be a list of rules");
  expect_error("version: 1\nrules:\n  - just a string\n",
               "p.yaml:3:5: error: a rule must be a mapping with 'id', 'action', 'decision' and "
               "optionally 'path', 'host', 'port', 'process', 'when' and 'message'");
}

TEST(LoaderErrors, Lists) {
  expect_error("version: 1\nlists: [a]\n", "p.yaml:2:8: error: 'lists' must map list names to lists of strings");
  expect_error("version: 1\nlists:\n  a: x\n", "p.yaml:3:6: error: list 'a' must be a list of strings");
  expect_error("version: 1\nlists:\n  a: [x, [y]]\n", "p.yaml:3:10: error: list 'a' must be a list of strings");
  expect_error("version: 1\nlists:\n  bad name: [x]\n",
               "p.yaml:3:3: error: invalid list name 'bad name' (use letters, digits, '_', '.' and "
               "'-')");
  expect_error("version: 1\nlists:\n  a: [x, '@b']\n", "p.yaml:3:10: error: unknown list '@b'");
  expect_error("version: 1\nlists:\n  arch: [x]\n  a: ['@archs']\n",
               "p.yaml:4:7: error: unknown list '@archs'; did you mean 'arch'?");
  expect_error("version: 1\nlists:\n  a: [x, '@b']\n  b: ['@c']\n  c: ['@a']\n",
               "p.yaml:5:7: error: lists include each other in a cycle: @a -> @b -> @c -> @a");
  expect_error("version: 1\nlists:\n  a: ['@a']\n", "p.yaml:3:7: error: lists include each other in a cycle: @a -> @a");
}

TEST(LoaderErrors, ListDefinedTwiceAcrossFiles) {
  auto r = load_policy_text(
      {{"a.yaml", "version: 1\nlists:\n  tools: [make]\n"}, {"b.yaml", "version: 1\nlists:\n    tools: [cc]\n"}},
      options());
  EXPECT_FALSE(r.policy);
  EXPECT_EQ(errors_of(r), std::vector<std::string>{"b.yaml:3:5: error: list 'tools' already defined at a.yaml:3:3"});
}

TEST(LoaderErrors, RuleIdDefinedTwiceAcrossFiles) {
  auto r = load_policy_text({{"a.yaml",
                              "version: 1\nrules:\n  - action: file.write\n    decision: deny\n\n"
                              "  - action: file.write\n    id: x\n    decision: deny\n"},
                             {"b.yaml", "version: 1\nrules:\n  - {id: x, action: file.write, decision: deny}\n"}},
                            options());
  EXPECT_FALSE(r.policy);
  EXPECT_EQ(errors_of(r), (std::vector<std::string>{"a.yaml:3:5: error: rule has no 'id'",
                                                    "b.yaml:3:10: error: rule id 'x' already defined at a.yaml:7:9"}));
}

TEST(Loader, KeepScopeDefaultsToTheWorkingDirectoryAndHome) {
  Policy p = load_ok(kHead + "  - {id: a, action: file.write, decision: deny, path: /x/**}\n");
  EXPECT_TRUE(in_keep_scope(p.keep, "/home/u/p/src/a.c"));
  EXPECT_TRUE(in_keep_scope(p.keep, "/home/u/notes.txt"));
  EXPECT_FALSE(in_keep_scope(p.keep, "/srv/fixture/a"));
  EXPECT_FALSE(p.rules[0].keep.has_value());
}

TEST(Loader, KeepSectionAndRuleKeep) {
  Policy p = load_ok(
      "version: 1\n"
      "lists:\n"
      "  outputs: ['**/build/**', '**/*.o']\n"
      "keep:\n"
      "  paths: ['${PROTECT}/**', '${CWD}/**']\n"
      "  except: ['@outputs', '${CWD}/tmp/**']\n"
      "rules:\n"
      "  - {id: scratch, action: file.delete, path: '${CWD}/scratch/**', decision: allow, keep: false}\n"
      "  - {id: etc, action: file.mutate, path: '/etc/**', decision: allow, keep: true}\n");
  EXPECT_TRUE(in_keep_scope(p.keep, "/srv/fixture/a"));
  EXPECT_TRUE(in_keep_scope(p.keep, "/home/u/p/src/a.c"));
  EXPECT_FALSE(in_keep_scope(p.keep, "/home/u/other"));  // `paths` replaces the default
  EXPECT_FALSE(in_keep_scope(p.keep, "/home/u/p/build/a.c"));
  EXPECT_FALSE(in_keep_scope(p.keep, "/home/u/p/src/a.o"));
  EXPECT_FALSE(in_keep_scope(p.keep, "/home/u/p/tmp/x"));
  ASSERT_EQ(p.rules.size(), 2u + 5u);  // and the guards
  EXPECT_EQ(p.rules[0].keep, std::optional<bool>(false));
  EXPECT_EQ(p.rules[1].keep, std::optional<bool>(true));
}

TEST(LoaderErrors, Keep) {
  expect_error(kHead + "  - {id: a, action: file.write, decision: allow, keep: maybe}\n",
               "p.yaml:3:56: error: 'keep' must be true or false, not 'maybe'");
  expect_error(kHead + "  - {id: a, action: file.write, decision: allow, keep: [true]}\n",
               "p.yaml:3:56: error: 'keep' must be true or false");
  expect_error("version: 1\nkeep: [a]\n", "p.yaml:2:7: error: 'keep' must be a mapping with 'paths' and/or 'except'");
  expect_error("version: 1\nkeep:\n  exept: ['/x/**']\n",
               "p.yaml:3:3: error: unknown key 'exept' in 'keep'; did you mean 'except'?");
  expect_error("version: 1\nkeep:\n  except: ['@nolist']\n", "p.yaml:3:12: error: unknown list '@nolist'");
  expect_error("version: 1\nkeep:\n  paths: ['relative/**']\n",
               "p.yaml:3:11: error: path 'relative/**' must be absolute or start with '*'");
}

TEST(LoaderErrors, RuleKeys) {
  expect_error(kHead + "  - id: a\n    action: file.write\n", "p.yaml:3:5: error: rule 'a' has no 'decision'");
  expect_error(kHead + "  - id: a\n    decision: deny\n", "p.yaml:3:5: error: rule 'a' has no 'action'");
  expect_error(kHead + "  - {id: a, action: file.write, decision: deny, paths: /x}\n",
               "p.yaml:3:49: error: unknown key 'paths' in rule; did you mean 'path'?");
  expect_error(kHead + "  - {id: a, action: file.write, decision: deny, color: red}\n",
               "p.yaml:3:49: error: unknown key 'color' in rule (expected id, action, path, "
               "host, port, process, when, decision, message or keep)");
  expect_error(kHead + "  - id: a\n    id: b\n    action: file.write\n    decision: deny\n",
               "p.yaml:4:5: error: duplicate key 'id' (first at 3:5)");
  expect_error(kHead + "  - {id: [a], action: file.write, decision: deny}\n",
               "p.yaml:3:10: error: 'id' must be a string");
  expect_error(kHead + "  - {id: 'a b', action: file.write, decision: deny}\n",
               "p.yaml:3:10: error: invalid rule id 'a b' (use letters, digits, '_', '.', ':' and "
               "'-')");
  expect_error(kHead + "  - {id: 'cottonbox:mine', action: file.write, decision: deny}\n",
               "p.yaml:3:10: error: rule ids starting with 'cottonbox:' are reserved for built-in "
               "rules");
  expect_error(kHead + "  - {id: a, action: file.write, decision: dney}\n",
               "p.yaml:3:43: error: unknown decision 'dney'; did you mean 'deny'?");
  expect_error(kHead + "  - {id: a, action: file.write, decision: [deny]}\n",
               "p.yaml:3:43: error: 'decision' must be one of allow, deny, ask or log");
  expect_error(kHead + "  - {id: a, action: file.write, decision: deny, message: [x]}\n",
               "p.yaml:3:58: error: 'message' must be a string");
  expect_error(kHead + "  - {id: a, action: file.write, decision: deny, when: [x]}\n",
               "p.yaml:3:55: error: 'when' must be a string (an expression)");
}

TEST(LoaderErrors, Actions) {
  expect_error(kHead + "  - id: a\n    action: [file.read, file.delet]\n    decision: deny\n",
               "p.yaml:4:25: error: unknown action 'file.delet'; did you mean 'file.delete'?");
  expect_error(kHead + "  - id: a\n    action: 3\n    decision: deny\n", "p.yaml:4:13: error: unknown action '3'");
  expect_error(kHead + "  - id: a\n    action: {file.read: 1}\n    decision: deny\n",
               "p.yaml:4:13: error: 'action' must be a string or a list of strings");
  expect_error(kHead + "  - id: a\n    action:\n    decision: deny\n",
               "p.yaml:4:5: error: 'action' must be a string or a list of strings");
  expect_error(kHead + "  - id: a\n    action: []\n    decision: deny\n",
               "p.yaml:4:13: error: 'action' is an empty list");
  expect_error(kHead + "  - id: a\n    action: [file.read, [x]]\n    decision: deny\n",
               "p.yaml:4:25: error: 'action' must be a string or a list of strings");
}

TEST(LoaderErrors, Paths) {
  const std::string rule = kHead + "  - id: a\n    action: file.write\n    decision: deny\n";
  expect_error(rule + "    path: ['${PROTECT}/**', '${NOPE}/x']\n",
               "p.yaml:6:30: error: undefined variable '${NOPE}' (set it with --var NOPE=VALUE)");
  expect_error(rule + "    path: \"/a/${HOEM}/x\"\n",
               "p.yaml:6:15: error: undefined variable '${HOEM}'; did you mean 'HOME'?");
  expect_error(rule + "    path: /a/${HOME\n", "p.yaml:6:14: error: unterminated '${' (write ${NAME})");
  expect_error(rule + "    path: '/a/${1x}'\n", "p.yaml:6:15: error: invalid variable name '${1x}'");
  expect_error(rule + "    path: src/**\n", "p.yaml:6:11: error: path 'src/**' must be absolute or start with '*'");
  expect_error(rule + "    path: ~/.ssh/**\n",
               "p.yaml:6:11: error: path '~/.ssh/**' must be absolute or start with '*' (write "
               "${HOME} for '~')");
  expect_error(rule + "    path: [/ok, '/a/[bc']\n",
               "p.yaml:6:21: error: bad pattern '/a/[bc': unclosed '[' at offset 3");
  expect_error(rule + "    path: ['${CWD}/{a,{b}}']\n",
               "p.yaml:6:12: error: bad pattern '/home/u/p/{a,{b}}': nested '{' (braces do not "
               "nest) at offset 13");
  expect_error(rule + "    path: []\n", "p.yaml:6:11: error: 'path' is an empty list; leave it out to match any path");
  expect_error(rule + "    path: 'tcp:*:22'\n",
               "p.yaml:6:11: error: path 'tcp:*:22' must be absolute or start with '*'");
  expect_error(kHead + "  - id: a\n    action: net.connect\n    decision: deny\n    path: [bogus]\n",
               "p.yaml:6:12: error: 'bogus' is not an address pattern (tcp:HOST:PORT, "
               "udp:HOST:PORT or unix:PATH)");
  expect_error(kHead + "  - id: a\n    action: net.teleport\n    decision: deny\n",
               "p.yaml:4:13: error: unknown action 'net.teleport'");
}

TEST(Loader, EachActionTakesPatternsOfItsObject) {
  // Facilities are named as the kernel names them; addresses have a
  // scheme; paths are absolute.
  auto r =
      load_policy_text({{"p.yaml", kHead + "  - {id: k, action: sys.kernel, decision: deny, path: [bpf, 'kexec_*']}\n"
                                           "  - {id: n, action: sys.namespace, decision: allow, path: [user]}\n"
                                           "  - {id: c, action: net.connect, decision: deny, path: ['tcp:*:22']}\n"
                                           "  - {id: f, action: [file.write, net.bind], decision: deny, path: "
                                           "[/etc/**, 'udp:*:53']}\n"}},
                       options());
  ASSERT_TRUE(r.policy) << (r.errors.empty() ? "" : format_diagnostic(r.errors[0]));
  Event ev;
  ev.action = Action::SysKernel;
  ev.path = "kexec_load";
  EXPECT_EQ(decide(*r.policy, ev).rule_id, "k");
}

TEST(LoaderErrors, Processes) {
  const std::string rule = kHead + "  - id: a\n    action: file.write\n    decision: deny\n";
  expect_error(rule + "    process: ['@nope']\n", "p.yaml:6:15: error: unknown list '@nope'");
  expect_error(
      rule + "    process: [tar, /bin/tar]\n",
      "p.yaml:6:20: error: process '/bin/tar' must be an identity's name: an executable's name in the system's "
      "directories or one declared under 'identities' (no '/')");
  expect_error(rule + "    process: []\n",
               "p.yaml:6:14: error: 'process' is an empty list; leave it out to match any process");
}

TEST(LoaderErrors, MessageVariables) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    message: \"no ${SSH} here\"\n",
               "p.yaml:6:18: error: undefined variable '${SSH}' (set it with --var SSH=VALUE)");
}

// An error inside `when:` points at the exact byte inside the YAML scalar,
// whatever the scalar's style.
TEST(LoaderErrors, WhenPlainScalar) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: proc.nam == \"x\"\n",
               "p.yaml:6:11: error: unknown field 'proc.nam'; did you mean 'proc.name'?");
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: path == \"a\" and (uid == 0\n",
               "p.yaml:6:36: error: expected ')' to close '(' at offset 16");
}

TEST(LoaderErrors, WhenSingleQuoted) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: 'path == \"a\" and uid == \"0\"'\n",
               "p.yaml:6:35: error: cannot compare 'uid' (a number) with a string");
  // '' is one quote in the value.
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: 'path == \"it''s\" and uid < \"x\"'\n",
               "p.yaml:6:36: error: cannot order strings with '<'");
  // The end of the expression, after trailing blanks.
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: 'path ==  '\n",
               "p.yaml:6:21: error: unexpected end of expression; expected a field, a string or a "
               "number");
}

TEST(LoaderErrors, WhenDoubleQuotedWithEscapes) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: \"path == \\\"a\\\" and\\tuid\"\n",
               "p.yaml:6:31: error: 'uid' is a number, not a condition; compare it with a value");
}

TEST(LoaderErrors, WhenBlockLiteral) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: |  # a comment on the header\n"
                   "      proc.name == \"tar\"\n"
                   "        and path matchs \"x\"\n",
               "p.yaml:8:18: error: expected an operator (==, !=, <, <=, >, >=, in, startswith, "
               "endswith, contains, matches), found 'matchs'; did you mean 'matches'?");
}

TEST(LoaderErrors, WhenBlockFolded) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: >-\n"
                   "      proc.name == \"x\"\n"
                   "\n"
                   "      and uid < \"0\"\n",
               "p.yaml:9:15: error: cannot order strings with '<'");
}

TEST(LoaderErrors, WhenPlainMultiLine) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: proc.name == \"x\"\n"
                   "      and path matches \"/a/[b\"\n",
               "p.yaml:7:28: error: bad pattern for 'matches': unclosed '[' at offset 3");
}

TEST(LoaderErrors, WhenVariables) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: 'path startswith \"${HOEM}/\"'\n",
               "p.yaml:6:29: error: undefined variable '${HOEM}'; did you mean 'HOME'?");
}

TEST(LoaderErrors, WhenUnknownList) {
  expect_error(kHead +
                   "  - id: a\n    action: file.write\n    decision: deny\n"
                   "    when: proc.name in @tools\n",
               "p.yaml:6:24: error: unknown list '@tools'");
}

TEST(LoaderErrors, EveryErrorIsReportedInFileOrder) {
  auto r = load_policy_text({{"a.yaml", R"(version: 1
default: dney
rules:
  - id: r1
    action: [file.delet, file.write]
    path: ["${NOPE}/**", "relative/**"]
    when: 'proc.nam == "x"'
    decision: deny
    mesage: hi
  - id: r1
    action: file.read
    decision: allow
)"},
                             {"b.yaml", "version: 3\nrules:\n  - {id: r1, action: file.read}\n"}},
                            options());
  EXPECT_FALSE(r.policy);
  EXPECT_EQ(errors_of(r), (std::vector<std::string>{
                              "a.yaml:2:10: error: unknown decision 'dney'; did you mean 'deny'?",
                              "a.yaml:5:14: error: unknown action 'file.delet'; did you mean 'file.delete'?",
                              "a.yaml:6:13: error: undefined variable '${NOPE}' (set it with --var NOPE=VALUE)",
                              "a.yaml:6:26: error: path 'relative/**' must be absolute or start with '*'",
                              "a.yaml:7:12: error: unknown field 'proc.nam'; did you mean 'proc.name'?",
                              "a.yaml:9:5: error: unknown key 'mesage' in rule; did you mean 'message'?",
                              "a.yaml:10:9: error: rule id 'r1' already defined at a.yaml:4:9",
                              "b.yaml:1:10: error: unsupported version '3'; this cottonbox reads version 1",
                              "b.yaml:3:5: error: rule 'r1' has no 'decision'",
                              "b.yaml:3:10: error: rule id 'r1' already defined at a.yaml:4:9",
                          }));
}

TEST(LoaderErrors, ByteOrderMarkDoesNotShiftColumns) {
  expect_error(
      "\xEF\xBB\xBFversion: 1\nrules:\n  - {id: a, action: file.write, decision: deny, "
      "when: 'uid =='}\n",
      "p.yaml:3:62: error: unexpected end of expression; expected a field, a string or a "
      "number");
}

// ---------------------------------------------------------------- files

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cb-policy-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const auto& f : files_) std::remove(f.c_str());
    ::rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    files_.push_back(p);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

TEST(LoaderFiles, LoadsARealFile) {
  TempDir dir;
  std::string f = dir.write("p.yaml",
                            "version: 1\ndefault: ask\nrules:\n"
                            "  - {id: a, action: file.write, path: '${CWD}/**', decision: deny}\n");
  auto r = load_policy_files({f}, options());
  ASSERT_TRUE(r.policy) << ::testing::PrintToString(errors_of(r));
  EXPECT_EQ(r.policy->default_decision, Decision::Ask);
  EXPECT_EQ(r.policy->files, std::vector<std::string>{f});
  EXPECT_EQ(r.policy->rules[0].loc.file, f);
  // Same content and vars: same hash as from memory.
  auto mem = load_policy_text({{f,
                                "version: 1\ndefault: ask\nrules:\n"
                                "  - {id: a, action: file.write, path: '${CWD}/**', decision: deny}\n"}},
                              options());
  EXPECT_EQ(r.policy->hash, mem.policy->hash);
}

TEST(LoaderFiles, ReportsUnreadableFilesAndStillChecksTheOthers) {
  TempDir dir;
  std::string bad = dir.write("bad.yaml", "version: 1\nrules:\n  - {id: a, action: file.wirte, decision: deny}\n");
  std::string missing = dir.path() + "/missing.yaml";
  auto r = load_policy_files({missing, bad, dir.path()}, options());
  EXPECT_FALSE(r.policy);
  EXPECT_EQ(errors_of(r), (std::vector<std::string>{
                              missing + ": cannot read: No such file or directory",
                              bad + ":3:21: error: unknown action 'file.wirte'; did you mean 'file.write'?",
                              dir.path() + ": cannot read: Is a directory",
                          }));
}

// ---------------------------------------------------------------- hash

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 h;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  EXPECT_EQ(h.finish_hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Split updates give the same digest as one.
  Sha256 split;
  split.update("abcdbcdecdefdefgefghfghighijhij");
  split.update("kijkljklmklmnlmnomnopnopq");
  EXPECT_EQ(split.finish_hex(), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(PolicyHash, CoversNamesContentsAndVars) {
  const std::string text = "version: 1\n";
  auto base = load(text);
  ASSERT_TRUE(base.policy);
  std::string expected =
      sha256_hex(std::string("p.yaml\0version: 1\n\0", 19) + "CWD=/home/u/p\nHOME=/home/u\nPROTECT=/srv/fixture\n");
  EXPECT_EQ(base.policy->hash, expected);

  EXPECT_NE(load("version: 1\n# changed\n").policy->hash, base.policy->hash);
  auto opts = options();
  opts.vars["PROTECT"] = "/srv/other";
  EXPECT_NE(load(text, opts).policy->hash, base.policy->hash);
  opts = options();
  opts.vars["EXTRA"] = "";
  EXPECT_NE(load(text, opts).policy->hash, base.policy->hash);
  EXPECT_NE(load_policy_text({{"q.yaml", text}}, options()).policy->hash, base.policy->hash);
  EXPECT_EQ(load(text).policy->hash, base.policy->hash);
}

TEST(FormatDiagnostic, Shapes) {
  EXPECT_EQ(format_diagnostic(Diagnostic{SourceLoc{"f.yaml", 3, 7}, "boom"}), "f.yaml:3:7: error: boom");
  EXPECT_EQ(format_diagnostic(Diagnostic{SourceLoc{"f.yaml", 0, 0}, "cannot read: x"}), "f.yaml: cannot read: x");
}

}  // namespace
}  // namespace cb
