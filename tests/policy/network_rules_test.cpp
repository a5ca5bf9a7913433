// rules/network.yaml beside rules/default.yaml, judged on the connections
// of ordinary coding work and of an exfiltration.
#include <gtest/gtest.h>

#include <string>

#include "policy/policy.h"

namespace cb {
namespace {

class NetworkRules : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LoadOptions o;
    o.vars = {{"CWD", "/home/u/proj"}, {"HOME", "/home/u"}};
    auto r = load_policy_files({COTTONBOX_DEFAULT_RULES, COTTONBOX_NETWORK_RULES}, o);
    for (const auto& e : r.errors) ADD_FAILURE() << format_diagnostic(e);
    ASSERT_TRUE(r.policy);
    policy_ = new Policy(std::move(*r.policy));
  }
  static void TearDownTestSuite() {
    delete policy_;
    policy_ = nullptr;
  }

  static Verdict connect(const std::string& comm, const char* addr, uint16_t port, std::vector<std::string> hosts = {},
                         Action a = Action::NetConnect, uint64_t taint = 0) {
    Event e;
    e.action = a;
    auto p = std::make_shared<ProcessInfo>();
    p->pid = 1234;
    p->comm = comm;
    p->exe = "/usr/bin/" + comm;
    p->ancestors = {"bash", "claude"};
    e.proc = p;
    IpAddr ip = *IpAddr::parse(addr);
    e.net = make_net_object(a == Action::NetSend ? NetProto::Udp : NetProto::Tcp, ip, port);
    e.net.hosts = hosts;
    e.net.names = hosts;
    e.path = std::string(net_proto_name(e.net.proto)) + ":" + (ip.family == 6 ? "[" + ip.text() + "]" : ip.text()) +
             ":" + std::to_string(port);
    e.read_taint = taint;
    return decide(*policy_, e);
  }
  static uint64_t secrets() {
    for (size_t i = 0; i < policy_->taints.size(); ++i)
      if (policy_->taints[i].name == "secrets") return uint64_t{1} << i;
    ADD_FAILURE() << "no secrets taint";
    return 0;
  }
  static Policy* policy_;
};
Policy* NetworkRules::policy_ = nullptr;

bool prompts(const Verdict& v) { return v.decision == Decision::Ask || v.decision == Decision::Deny; }

TEST_F(NetworkRules, OrdinaryWorkRunsWithoutAPrompt) {
  EXPECT_FALSE(prompts(connect("node", "104.16.0.35", 443, {"registry.npmjs.org"})));
  EXPECT_FALSE(prompts(connect("git-remote-http", "140.82.112.3", 443, {"github.com"})));
  EXPECT_FALSE(prompts(connect("ssh", "140.82.112.3", 22, {"github.com"})));
  EXPECT_FALSE(prompts(connect("pip", "151.101.0.223", 443, {"pypi.org"})));
  EXPECT_FALSE(prompts(connect("pip", "151.101.1.63", 443, {"files.pythonhosted.org"})));
  EXPECT_FALSE(prompts(connect("cargo", "13.224.0.1", 443, {"index.crates.io"})));
  EXPECT_FALSE(prompts(connect("pytest", "127.0.0.1", 5432)));
  EXPECT_FALSE(prompts(connect("node", "::1", 3000)));
  EXPECT_FALSE(prompts(connect("node", "127.0.0.1", 3000, {}, Action::NetListen)));
  EXPECT_FALSE(prompts(connect("node", "127.83.0.1", 53, {}, Action::NetSend)));
  EXPECT_FALSE(prompts(connect("curl", "93.184.216.34", 443, {"example.com"})));
  // Every connection is recorded with the rule that let it through.
  EXPECT_EQ(connect("curl", "93.184.216.34", 443, {"example.com"}).rule_id, "record-network");
  EXPECT_EQ(connect("curl", "93.184.216.34", 443, {"example.com"}).decision, Decision::Log);
}

TEST_F(NetworkRules, MetadataServicesAreRefusedEveryWay) {
  for (const char* a : {"169.254.169.254", "::ffff:169.254.169.254", "fd00:ec2::254", "100.100.100.200"})
    EXPECT_EQ(connect("python3", a, 80).rule_id, "no-cloud-metadata") << a;
  EXPECT_EQ(connect("python3", "10.1.2.3", 80, {"metadata.google.internal"}).rule_id, "no-cloud-metadata");
  EXPECT_EQ(connect("python3", "169.254.169.254", 53, {}, Action::NetSend).rule_id, "no-cloud-metadata-datagrams");
  EXPECT_EQ(connect("python3", "169.254.169.254", 80).decision, Decision::Deny);
}

TEST_F(NetworkRules, WhatReadASecretIsAskedWhereItSendsIt) {
  uint64_t t = secrets();
  EXPECT_EQ(taint_bits(*policy_, "/home/u/.aws/credentials"), t);
  EXPECT_EQ(taint_bits(*policy_, "/home/u/proj/.env"), t);
  EXPECT_EQ(taint_bits(*policy_, "/home/u/proj/.env.local"), t);
  EXPECT_EQ(taint_bits(*policy_, "/home/u/proj/src/env.py"), 0u);
  Verdict v = connect("python3", "203.0.113.9", 443, {"paste.example"}, Action::NetConnect, t);
  EXPECT_EQ(v.decision, Decision::Ask);
  EXPECT_EQ(v.rule_id, "secrets-then-network");
  EXPECT_EQ(connect("python3", "203.0.113.9", 53, {}, Action::NetSend, t).rule_id, "secrets-then-network");
  // ...but not to the registries and forges, nor to this machine.
  EXPECT_FALSE(prompts(connect("npm", "104.16.0.35", 443, {"registry.npmjs.org"}, Action::NetConnect, t)));
  EXPECT_FALSE(prompts(connect("git", "140.82.112.3", 22, {"github.com"}, Action::NetConnect, t)));
  EXPECT_FALSE(prompts(connect("pytest", "127.0.0.1", 5432, {}, Action::NetConnect, t)));
  // A forge reached on another port, or a registry's address not resolved as such, is asked.
  EXPECT_EQ(connect("git", "140.82.112.3", 8080, {"github.com"}, Action::NetConnect, t).decision, Decision::Ask);
  EXPECT_EQ(connect("npm", "104.16.0.35", 443, {}, Action::NetConnect, t).decision, Decision::Ask);
}

}  // namespace
}  // namespace cb
