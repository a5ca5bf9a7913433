// The journal's text format: every byte of a path or an xattr survives a
// round trip, and a line torn by a crash or damaged on disk is skipped
// without taking its neighbours with it.
#include <gtest/gtest.h>

#include "keep/budget.h"
#include "keep/journal.h"

namespace cb::keep {
namespace {

Snapshot sample() {
  Snapshot s;
  s.seq = 7;
  s.ts_ns = 1700000000123456789;
  s.command = 3;
  s.proc = 42;
  s.event = 99;
  s.op = Op::RenameOver;
  s.path = "/home/u/dir with\ttab/new\nline/100%/caf\xc3\xa9";
  s.type = FileType::Regular;
  s.mode = 04751;
  s.uid = 1000;
  s.gid = 100;
  s.size = 12345;
  s.atime = {1600000000, 1};
  s.mtime = {1600000001, 999999999};
  s.dev = 2049;
  s.ino = 123456789;
  s.nlink = 1;
  s.xattrs = {{"user.a,b=c", std::string("\0\x01\xff=,%", 6)}, {"security.selinux", "unconfined_u:object_r"}};
  s.kept = Kept::Linked;
  s.object = "s:sess.7";
  s.reason = "not checked for writers (lease: Operation not permitted)";
  return s;
}

void expect_same(const Snapshot& a, const Snapshot& b) {
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.ts_ns, b.ts_ns);
  EXPECT_EQ(a.command, b.command);
  EXPECT_EQ(a.proc, b.proc);
  EXPECT_EQ(a.event, b.event);
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.path, b.path);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.uid, b.uid);
  EXPECT_EQ(a.gid, b.gid);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.atime, b.atime);
  EXPECT_EQ(a.mtime, b.mtime);
  EXPECT_EQ(a.dev, b.dev);
  EXPECT_EQ(a.ino, b.ino);
  EXPECT_EQ(a.nlink, b.nlink);
  EXPECT_EQ(a.xattrs, b.xattrs);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.kept, b.kept);
  EXPECT_EQ(a.object, b.object);
  EXPECT_EQ(a.reason, b.reason);
}

TEST(KeepJournal, EscapeRoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  std::string e = escape(all, ",=");
  EXPECT_EQ(e.find('\t'), std::string::npos);
  EXPECT_EQ(e.find('\n'), std::string::npos);
  EXPECT_EQ(e.find(','), std::string::npos);
  std::string back;
  ASSERT_TRUE(unescape(e, back));
  EXPECT_EQ(back, all);
  EXPECT_FALSE(unescape("%4", back));
  EXPECT_FALSE(unescape("%zz", back));
}

TEST(KeepJournal, SnapshotRoundTrip) {
  Snapshot s = sample();
  std::string text = encode_header("sess") + encode_snapshot(s);
  Parsed p = parse_journal(text);
  EXPECT_EQ(p.session, "sess");
  EXPECT_EQ(p.damaged, 0u);
  EXPECT_FALSE(p.torn_tail);
  ASSERT_EQ(p.snapshots.size(), 1u);
  expect_same(p.snapshots[0], s);
}

TEST(KeepJournal, SymlinkAndEmptyFieldsRoundTrip) {
  Snapshot s;
  s.seq = 1;
  s.op = Op::Unlink;
  s.path = "/l";
  s.type = FileType::Symlink;
  s.mode = 0777;
  s.target = "../a b/\x01";
  s.kept = Kept::Metadata;
  Parsed p = parse_journal(encode_snapshot(s));
  ASSERT_EQ(p.snapshots.size(), 1u);
  expect_same(p.snapshots[0], s);
  EXPECT_TRUE(p.snapshots[0].xattrs.empty());
}

TEST(KeepJournal, SettledRecordResolvesTheStagedObject) {
  Snapshot s = sample();
  std::string sha(64, 'a');
  Parsed p = parse_journal(encode_snapshot(s) + encode_settled("sess.7", sha));
  ASSERT_EQ(p.snapshots.size(), 1u);
  EXPECT_EQ(p.snapshots[0].object, "o:" + sha);
  EXPECT_EQ(p.snapshots[0].sha256, sha);
}

TEST(KeepJournal, LeftFingerprintRoundTrip) {
  Left l;
  l.path = "/p/q";
  l.fp.known = true;
  l.fp.type = FileType::Regular;
  l.fp.mode = 0600;
  l.fp.uid = 5;
  l.fp.gid = 6;
  l.fp.size = 10;
  l.fp.mtime = {3, 4};
  l.fp.dev = 7;
  l.fp.ino = 8;
  l.fp.sha256 = std::string(64, 'f');
  Parsed p = parse_journal(encode_left(l));
  ASSERT_EQ(p.left.size(), 1u);
  const Fingerprint& f = p.left[0].fp;
  EXPECT_EQ(p.left[0].path, "/p/q");
  EXPECT_TRUE(f.known);
  EXPECT_EQ(f.type, FileType::Regular);
  EXPECT_EQ(f.mode, 0600u);
  EXPECT_EQ(f.size, 10u);
  EXPECT_EQ(f.mtime, (Timespec{3, 4}));
  EXPECT_EQ(f.ino, 8u);
  EXPECT_EQ(f.sha256, std::string(64, 'f'));
}

TEST(KeepJournal, TornLastLineIsSkippedAndTheRestKept) {
  Snapshot a = sample(), b = sample();
  b.seq = 8;
  std::string full = encode_snapshot(a) + encode_snapshot(b);
  // Every cut inside the second record: the first survives, the second is
  // never half-read.
  size_t second = encode_snapshot(a).size();
  for (size_t cut = second + 1; cut < full.size(); ++cut) {
    Parsed p = parse_journal(full.substr(0, cut));
    ASSERT_EQ(p.snapshots.size(), 1u) << "cut at " << cut;
    EXPECT_EQ(p.snapshots[0].seq, 7u);
    EXPECT_TRUE(p.torn_tail);
  }
  // A reopened journal ends the torn line before appending: the next
  // record is whole, the fragment counts as damaged.
  Parsed p = parse_journal(full.substr(0, second + 20) + "\n" + encode_snapshot(b));
  ASSERT_EQ(p.snapshots.size(), 2u);
  EXPECT_EQ(p.damaged, 1u);
}

TEST(KeepJournal, DamagedByteFailsTheCrcOfItsLineOnly) {
  Snapshot a = sample(), b = sample(), c = sample();
  b.seq = 8;
  c.seq = 9;
  std::string text = encode_snapshot(a) + encode_snapshot(b) + encode_snapshot(c);
  size_t in_b = encode_snapshot(a).size() + 30;
  text[in_b] ^= 0x01;
  Parsed p = parse_journal(text);
  ASSERT_EQ(p.snapshots.size(), 2u);
  EXPECT_EQ(p.snapshots[0].seq, 7u);
  EXPECT_EQ(p.snapshots[1].seq, 9u);
  EXPECT_EQ(p.damaged, 1u);
}

TEST(KeepBudget, SessionTotalAndFreeSpace) {
  Limits l;
  l.session_bytes = 1000;
  l.total_bytes = 5000;
  l.min_free_bytes = 100;
  l.min_free_percent = 10;
  EXPECT_EQ(over_budget(1000, {0, 0}, l), "");
  EXPECT_NE(over_budget(1001, {0, 0}, l).find("session's keep budget"), std::string::npos);
  EXPECT_NE(over_budget(10, {995, 995}, l).find("session's keep budget"), std::string::npos);
  EXPECT_NE(over_budget(500, {0, 4600}, l).find("total budget"), std::string::npos);
  // 10 % of 10000 is 1000 to stay free: 8500 available leaves 7500 after 1000.
  EXPECT_EQ(over_budget(1000, {0, 0}, l, FreeSpace{8500, 10000}), "");
  EXPECT_NE(over_budget(1000, {0, 0}, l, FreeSpace{1900, 10000}).find("no space"), std::string::npos);
  EXPECT_NE(over_budget(1000, {0, 0}, l, FreeSpace{500, 10000}).find("no space"), std::string::npos);
}

TEST(KeepBudget, DefaultsAreTheDocumentedOnes) {
  Limits l;
  EXPECT_EQ(l.session_bytes, 2 * kGiB);
  EXPECT_EQ(l.total_bytes, 10 * kGiB);
  EXPECT_EQ(l.min_free_bytes, 1 * kGiB);
  EXPECT_EQ(l.min_free_percent, 5u);
}

}  // namespace
}  // namespace cb::keep
