// The ask broker with a clock the test moves: folding, deadlines, answers
// for a tree, and asks without anyone to ask.  The backend here is the
// broker's other side as a GUI or terminal would be: it records what it was
// shown and answers when the test says so.
#include "supervisor/ask_broker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cb {
namespace {

struct Screen : AskBackend {
  std::vector<AskRequest> shown;
  std::map<uint64_t, uint32_t> counts;
  std::vector<uint64_t> cancelled;
  std::string name() const override { return "screen"; }
  void ask(const AskRequest& r) override {
    shown.push_back(r);
    counts[r.ask_id] = 1;
  }
  void update(uint64_t id, uint32_t count) override { counts[id] = count; }
  void cancel(uint64_t id) override { cancelled.push_back(id); }
};

struct Outcome {
  uint64_t seq;
  bool allow;
  ApprovalRow approval;
};

class AskBrokerTest : public ::testing::Test {
 protected:
  int64_t now = 1'000'000'000;
  Screen screen;
  std::vector<Outcome> resolved;
  // proc 10 is the tree root; 11 and 12 are its children; 20 is elsewhere.
  std::map<uint64_t, uint64_t> parent = {{11, 10}, {12, 10}, {10, 1}, {20, 1}};

  AskBroker make(AskBackend* backend) {
    return AskBroker(
        backend, std::chrono::milliseconds(60000), [this] { return now; },
        [this](uint64_t p, uint64_t root) {
          for (uint64_t q = p; q; q = parent.count(q) ? parent[q] : 0)
            if (q == root) return true;
          return false;
        },
        [this](Pending& p, bool allow, const ApprovalRow& a) {
          resolved.push_back({p.row.seq, allow, a});
        });
  }

  static Pending pending(uint64_t seq, int32_t pid, Action a, const std::string& path, const std::string& rule) {
    Pending p;
    Facet f;
    f.action = a;
    f.path = path;
    p.cls.facets.push_back(f);
    p.row.seq = seq;
    p.row.ev.pid = pid;
    p.row.ev.action = a;
    p.row.ev.path = path;
    p.row.verdict.rule_id = rule;
    return p;
  }
};

TEST_F(AskBrokerTest, SimilarRequestsFoldIntoOnePromptAndOneAnswerResolvesThemAll) {
  AskBroker b = make(&screen);
  b.park(pending(1, 100, Action::FileDelete, "/p/build/a.o", "mass-delete"), 11, {});
  b.park(pending(2, 100, Action::FileDelete, "/p/build/b.o", "mass-delete"), 11, {});
  b.park(pending(3, 100, Action::FileDelete, "/p/src/main.c", "mass-delete"), 11, {});  // another directory
  ASSERT_EQ(screen.shown.size(), 2u);
  EXPECT_EQ(screen.counts[screen.shown[0].ask_id], 2u);
  EXPECT_EQ(b.open_asks(), 2u);
  EXPECT_TRUE(resolved.empty()) << "nothing is answered before the user answers";

  b.answer(screen.shown[0].ask_id, AskAnswer::AllowOnce, "gui");
  ASSERT_EQ(resolved.size(), 2u);
  EXPECT_TRUE(resolved[0].allow && resolved[1].allow);
  EXPECT_EQ(resolved[0].approval.answer, "allow-once");
  EXPECT_EQ(resolved[0].approval.answered_by, "gui");
  EXPECT_EQ(b.open_asks(), 1u);
  // A second answer to the same prompt (a double click) changes nothing.
  b.answer(screen.shown[0].ask_id, AskAnswer::DenyOnce, "gui");
  EXPECT_EQ(resolved.size(), 2u);
}

TEST_F(AskBrokerTest, NoAnswerBeforeTheDeadlineIsADenial) {
  AskBroker b = make(&screen);
  b.park(pending(1, 100, Action::FileDelete, "/p/x", "r"), 11, {});
  EXPECT_EQ(b.next_deadline(), now + 60'000'000'000);
  now += 59'000'000'000;
  b.expire();
  EXPECT_TRUE(resolved.empty());
  now += 1'000'000'000;
  b.expire();
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_FALSE(resolved[0].allow);
  EXPECT_EQ(resolved[0].approval.answer, "timeout");
  EXPECT_EQ(resolved[0].approval.asked_ns, 1'000'000'000);
  EXPECT_EQ(resolved[0].approval.answered_ns, now);
  EXPECT_EQ(screen.cancelled, std::vector<uint64_t>{screen.shown[0].ask_id}) << "the prompt is taken down";
  EXPECT_EQ(b.next_deadline(), 0);
}

TEST_F(AskBrokerTest, AnAnswerForATreeHoldsForItsProcessesAndTheActionOnly) {
  AskBroker b = make(&screen);
  b.park(pending(1, 100, Action::FileDelete, "/p/x", "r"), 10, {});
  b.answer(screen.shown[0].ask_id, AskAnswer::DenyTree, "tty");
  EXPECT_EQ(b.grant_for(12, Action::FileDelete), std::optional<bool>(false)) << "a child of the tree";
  EXPECT_EQ(b.grant_for(20, Action::FileDelete), std::nullopt) << "another tree is asked again";
  EXPECT_EQ(b.grant_for(12, Action::FileRename), std::nullopt) << "another action is asked again";
  // A later answer overrides an earlier one for the same tree.
  b.park(pending(2, 101, Action::FileDelete, "/p/y", "r"), 11, {});
  b.answer(screen.shown[1].ask_id, AskAnswer::AllowTree, "tty");
  EXPECT_EQ(b.grant_for(11, Action::FileDelete), std::optional<bool>(true));
}

TEST_F(AskBrokerTest, WithNobodyToAskAnAskIsDeniedAtOnce) {
  AskBroker b = make(nullptr);
  b.park(pending(7, 100, Action::FileDelete, "/p/x", "r"), 11, {});
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_FALSE(resolved[0].allow);
  EXPECT_EQ(resolved[0].approval.answered_by, "no-asker");
  EXPECT_EQ(b.open_asks(), 0u);
}

TEST_F(AskBrokerTest, TheSessionsEndHandsBackEveryParkedRequest) {
  AskBroker b = make(&screen);
  b.park(pending(1, 100, Action::FileDelete, "/p/a/x", "r"), 11, {});
  b.park(pending(2, 100, Action::FileDelete, "/p/a/y", "r"), 11, {});
  b.park(pending(3, 101, Action::FileRename, "/p/b", "r"), 12, {});
  std::vector<uint64_t> gone;
  b.abandon([&](Pending& p) { gone.push_back(p.row.seq); });
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(screen.cancelled.size(), 2u);
  EXPECT_TRUE(resolved.empty()) << "nobody answered them";
  EXPECT_EQ(b.open_asks(), 0u);
}

}  // namespace
}  // namespace cb
