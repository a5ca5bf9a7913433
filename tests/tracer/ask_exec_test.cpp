// What an approver (--ask exec:PROGRAM) may answer, read as the supervisor
// reads it; the approvers themselves run in tests/cli/audit_cli_test.cpp.
#include <gtest/gtest.h>

#include "ask/ask_exec.h"

namespace cb {
namespace {

TEST(ApproverOutput, AWordAndAnOptionalReason) {
  auto a = parse_approver_output("allow\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->answer, AskAnswer::AllowOnce);
  EXPECT_EQ(a->reason, "");
  a = parse_approver_output("\n  deny-tree   it deletes sources\r\nanything after is ignored\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->answer, AskAnswer::DenyTree);
  EXPECT_EQ(a->reason, "it deletes sources");
  a = parse_approver_output("allow-tree\tfine\x1b[31m");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->answer, AskAnswer::AllowTree);
  EXPECT_EQ(a->reason, "fine [31m") << "control bytes never reach the trail";
  EXPECT_EQ(parse_approver_output("deny")->answer, AskAnswer::DenyOnce);
  EXPECT_EQ(parse_approver_output("allow-once ok")->answer, AskAnswer::AllowOnce);
}

TEST(ApproverOutput, AnythingElseIsNoAnswer) {
  for (const char* bad : {"", "\n\n", "yes", "Allow", "allowed", "{\"answer\": \"allow\"}", "allow-forever"})
    EXPECT_FALSE(parse_approver_output(bad)) << bad;
  EXPECT_FALSE(parse_approver_output(std::string(70000, 'a')));
  EXPECT_NE(parse_approver_output("maybe later").error().message.find("'maybe' is no answer"), std::string::npos);
}

}  // namespace
}  // namespace cb
