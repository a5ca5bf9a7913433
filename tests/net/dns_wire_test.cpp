// The DNS parser and builder on hand-made messages: every bound, every
// hostile shape (pointer loops, pointers forward and into the header, names
// over 255 bytes, counts larger than the message, every truncation of a
// valid message), and round trips through the builder.
#include "net/dns_wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cb::net {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes header(uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar) {
  return {static_cast<uint8_t>(id >> 8),
          static_cast<uint8_t>(id),
          static_cast<uint8_t>(flags >> 8),
          static_cast<uint8_t>(flags),
          0,
          static_cast<uint8_t>(qd),
          0,
          static_cast<uint8_t>(an),
          0,
          static_cast<uint8_t>(ns),
          0,
          static_cast<uint8_t>(ar)};
}

void append(Bytes& b, std::initializer_list<int> v) {
  for (int x : v) b.push_back(static_cast<uint8_t>(x));
}

void name(Bytes& b, std::initializer_list<std::string> labels) {
  for (const auto& l : labels) {
    b.push_back(static_cast<uint8_t>(l.size()));
    b.insert(b.end(), l.begin(), l.end());
  }
  b.push_back(0);
}

// "web.cbtest A?" then "web.cbtest A 127.1.0.10" with the owner compressed.
Bytes simple_response() {
  Bytes b = header(0x1234, 0x8180, 1, 1, 0, 0);
  name(b, {"web", "cbtest"});
  append(b, {0, 1, 0, 1});
  append(b, {0xc0, 12, 0, 1, 0, 1, 0, 0, 0x0e, 0x10, 0, 4, 127, 1, 0, 10});
  return b;
}

std::string parse_error(const Bytes& b) {
  auto r = parse_dns(b);
  EXPECT_FALSE(r) << "parsed";
  return r ? "" : r.error().message;
}

TEST(DnsParse, ASimpleResponse) {
  auto r = parse_dns(simple_response());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->header.id, 0x1234);
  EXPECT_TRUE(r->header.qr());
  EXPECT_TRUE(r->header.rd());
  EXPECT_TRUE(r->header.ra());
  EXPECT_FALSE(r->header.tc());
  EXPECT_EQ(r->header.rcode(), 0);
  ASSERT_EQ(r->questions.size(), 1u);
  EXPECT_EQ(r->questions[0].name.text(), "web.cbtest.");
  EXPECT_EQ(r->questions[0].name.key(), "web.cbtest");
  ASSERT_EQ(r->answers.size(), 1u);
  EXPECT_EQ(r->answers[0].name.key(), "web.cbtest");
  EXPECT_EQ(r->answers[0].ttl, 3600u);
  EXPECT_EQ(r->answers[0].addr.text(), "127.1.0.10");
  EXPECT_EQ(r->udp_limit(), 512u);
  EXPECT_EQ(r->additional_offset, simple_response().size());
}

TEST(DnsParse, EveryTruncationFailsCleanly) {
  Bytes b = simple_response();
  for (size_t n = 0; n < b.size(); ++n) {
    Bytes cut(b.begin(), b.begin() + static_cast<ptrdiff_t>(n));
    auto r = parse_dns(cut);
    EXPECT_FALSE(r) << "a prefix of " << n << " bytes parsed";
  }
  EXPECT_EQ(parse_error(Bytes(b.begin(), b.begin() + 5)), "byte 4: the message ends inside the header");
  EXPECT_EQ(parse_error(Bytes(b.begin(), b.end() - 1)), "byte 40: the message ends inside the answer section");
}

TEST(DnsParse, CountsLargerThanTheMessage) {
  Bytes b = simple_response();
  b[7] = 2;  // two answers, one present
  EXPECT_EQ(parse_error(b), "byte 44: the message ends inside a record's name");
  b = simple_response();
  b[11] = 1;
  EXPECT_EQ(parse_error(b), "byte 44: the message ends inside a record's name");
}

TEST(DnsParse, TrailingBytesAreAnError) {
  Bytes b = simple_response();
  b.push_back(0);
  EXPECT_EQ(parse_error(b), "byte 44: 1 bytes after the last record");
}

TEST(DnsParse, CompressionPointersMustPointBackwards) {
  // A pointer to itself.
  Bytes self = header(1, 0x0100, 1, 0, 0, 0);
  append(self, {0xc0, 12, 0, 1, 0, 1});
  EXPECT_EQ(parse_error(self),
            "byte 12: a compression pointer in a question's name that does not point backwards (it could loop)");
  // Forward.
  Bytes fwd = header(1, 0x0100, 1, 0, 0, 0);
  append(fwd, {0xc0, 18, 0, 1, 0, 1, 3, 'a', 'b', 'c', 0});
  EXPECT_EQ(parse_error(fwd),
            "byte 12: a compression pointer in a question's name that does not point backwards (it could loop)");
  // Two names pointing at each other: label "a" then a pointer back to
  // the start, which reaches the pointer again.
  Bytes loop = header(1, 0x8100, 1, 1, 0, 0);
  append(loop, {1, 'a', 0, 0, 1, 0, 1});  // question "a." at 12
  append(loop, {1, 'b', 0xc0, 19});       // an owner "b" + pointer to itself at 19
  append(loop, {0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 1, 2, 3, 4});
  EXPECT_EQ(parse_error(loop),
            "byte 21: a compression pointer in a record's name that does not point backwards (it could loop)");
  // A pointer into the header.
  Bytes hdr = header(1, 0x0100, 1, 0, 0, 0);
  append(hdr, {0xc0, 2, 0, 1, 0, 1});
  EXPECT_EQ(parse_error(hdr), "byte 12: a compression pointer into the header in a question's name");
  // A pointer whose second byte is missing.
  Bytes half = header(1, 0x0100, 1, 0, 0, 0);
  append(half, {0xc0});
  EXPECT_EQ(parse_error(half), "byte 12: the message ends inside a question's name");
}

TEST(DnsParse, AChainOfBackwardPointersEnds) {
  // Names built from each other: c.b.a, each pointing at the one before.
  Bytes b = header(1, 0x8100, 1, 2, 0, 0);
  append(b, {1, 'a', 0, 0, 1, 0, 1});                                             // "a." at 12
  append(b, {1, 'b', 0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 1, 0, 4, 1, 'c', 0xc0, 12});  // b.a CNAME c.a
  append(b, {0xc0, 19, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 9, 9, 9, 9});                // b.a A 9.9.9.9
  auto r = parse_dns(b);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->answers[0].name.key(), "b.a");
  EXPECT_EQ(r->answers[0].target.key(), "c.a");
  EXPECT_EQ(r->answers[1].name.key(), "b.a");
}

TEST(DnsParse, NamesLongerThan255BytesAndBadLabelTypes) {
  Bytes b = header(1, 0x0100, 1, 0, 0, 0);
  for (int i = 0; i < 5; ++i) {
    b.push_back(63);
    b.insert(b.end(), 63, 'x');
  }
  b.push_back(0);
  append(b, {0, 1, 0, 1});
  EXPECT_EQ(parse_error(b), "byte 204: a question's name is longer than 255 bytes");
  Bytes ext = header(1, 0x0100, 1, 0, 0, 0);
  append(ext, {0x41, 0, 0, 1, 0, 1});
  EXPECT_EQ(parse_error(ext), "byte 12: label type 0x40 is not supported");
  Bytes ext2 = header(1, 0x0100, 1, 0, 0, 0);
  append(ext2, {0x80, 0, 0, 1, 0, 1});
  EXPECT_EQ(parse_error(ext2), "byte 12: label type 0x80 is not supported");
}

TEST(DnsParse, RecordShapes) {
  Bytes a5 = header(1, 0x8100, 1, 1, 0, 0);
  name(a5, {"x"});
  append(a5, {0, 1, 0, 1, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 5, 1, 2, 3, 4, 5});
  EXPECT_EQ(parse_error(a5), "byte 31: an A record of 5 bytes");
  Bytes cname = header(1, 0x8100, 1, 1, 0, 0);
  name(cname, {"x"});
  append(cname, {0, 5, 0, 1, 0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 1, 0, 4, 1, 'y', 0, 7});
  EXPECT_EQ(parse_error(cname), "byte 34: bytes after the CNAME target inside its record");
  // A CNAME whose target runs past its rdata.
  Bytes over = header(1, 0x8100, 1, 1, 0, 0);
  name(over, {"x"});
  append(over, {0, 5, 0, 1, 0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 1, 0, 2, 3, 'a', 'b', 'c', 0});
  EXPECT_FALSE(parse_dns(over));
  // An OPT record outside the additional section, and two of them.
  Bytes opt = header(1, 0x8100, 0, 1, 0, 0);
  append(opt, {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(parse_error(opt), "byte 12: an OPT record outside the additional section");
  Bytes two = header(1, 0x0100, 0, 0, 0, 2);
  append(two, {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0});
  EXPECT_EQ(parse_error(two), "byte 23: a second OPT record");
  Bytes one = header(1, 0x0100, 0, 0, 0, 1);
  append(one, {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0});
  auto r = parse_dns(one);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->udp_limit(), 4096u);
  EXPECT_EQ(r->opt_bytes.size(), 11u);
  Bytes small = one;
  small[15] = 0x01;  // class 256 < 512: still 512
  small[14] = 0x01;
  small[15] = 0x00;
  ASSERT_TRUE(parse_dns(small));
  EXPECT_EQ(parse_dns(small)->udp_limit(), 512u);
}

TEST(DnsParse, SvcbHintsAreAddresses) {
  Bytes b = header(1, 0x8180, 1, 1, 0, 0);
  name(b, {"svc", "test"});
  append(b, {0, 65, 0, 1});
  Bytes rdata = {0, 1, 0};                              // priority 1, target "."
  append(rdata, {0, 1, 0, 3, 2, 'h', '2'});             // alpn
  append(rdata, {0, 4, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8});  // ipv4hint
  Bytes v6(16, 0);
  v6[15] = 1;
  append(rdata, {0, 6, 0, 16});
  rdata.insert(rdata.end(), v6.begin(), v6.end());
  append(b, {0xc0, 12, 0, 65, 0, 1, 0, 0, 1, 0, 0, static_cast<int>(rdata.size())});
  b.insert(b.end(), rdata.begin(), rdata.end());
  auto r = parse_dns(b);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->answers[0].hints.size(), 3u);
  EXPECT_EQ(r->answers[0].hints[0].text(), "1.2.3.4");
  EXPECT_EQ(r->answers[0].hints[1].text(), "5.6.7.8");
  EXPECT_EQ(r->answers[0].hints[2].text(), "::1");
  // Keys out of order, a hint of a bad length, a compressed target.
  Bytes bad = header(1, 0x8180, 1, 1, 0, 0);
  name(bad, {"s"});
  append(bad, {0, 65, 0, 1, 0xc0, 12, 0, 65, 0, 1, 0, 0, 1, 0, 0, 18});
  append(bad, {0, 1, 0, 0, 4, 0, 4, 1, 2, 3, 4, 0, 1, 0, 3, 2, 'h', '2'});  // ipv4hint, then alpn
  EXPECT_EQ(parse_error(bad), "byte 42: SVCB parameters out of order or repeated");
  Bytes odd = header(1, 0x8180, 1, 1, 0, 0);
  name(odd, {"s"});
  append(odd, {0, 65, 0, 1, 0xc0, 12, 0, 65, 0, 1, 0, 0, 1, 0, 0, 10, 0, 1, 0, 0, 4, 0, 3, 1, 2, 3});
  EXPECT_EQ(parse_error(odd), "byte 34: an SVCB address hint of a bad length");
  Bytes comp = header(1, 0x8180, 1, 1, 0, 0);
  name(comp, {"s"});
  append(comp, {0, 65, 0, 1, 0xc0, 12, 0, 65, 0, 1, 0, 0, 1, 0, 0, 4, 0, 1, 0xc0, 12});
  EXPECT_EQ(parse_error(comp), "byte 33: a compression pointer in an SVCB target, where none may be");
}

TEST(DnsName, TextEscapesAndKeys) {
  DnsName n;
  n.labels = {"WeB", "a.b", "x\\y", std::string("\x01 z", 3), "CbTest"};
  EXPECT_EQ(n.text(), "WeB.a\\.b.x\\\\y.\\001\\032z.CbTest.");
  EXPECT_EQ(n.key(), "web.a\\.b.x\\\\y.\\001\\032z.cbtest");
  auto back = DnsName::from_text(n.text());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->labels, n.labels);
  EXPECT_TRUE(n.equals_ignoring_case(*DnsName::from_text("web.A\\.B.x\\\\y.\\001\\032Z.cbtest")));
  EXPECT_EQ(DnsName{}.text(), ".");
  EXPECT_EQ(DnsName{}.key(), "");
  EXPECT_TRUE(DnsName::from_text("."));
  EXPECT_TRUE(DnsName::from_text(".")->labels.empty());
  EXPECT_FALSE(DnsName::from_text("a..b"));
  EXPECT_FALSE(DnsName::from_text(std::string(64, 'a')));
  EXPECT_FALSE(DnsName::from_text("a\\256b"));
  EXPECT_EQ(DnsName::from_text("a.b")->labels.size(), 2u);
}

TEST(DnsBuild, RoundTripsWithCompression) {
  DnsMessage m;
  m.header.id = 77;
  m.header.set_qr(true);
  m.header.set_rd(true);
  m.header.set_ra(true);
  m.questions.push_back({*DnsName::from_text("alias.cbtest"), dns_type::A, kClassIn});
  DnsRecord c;
  c.name = *DnsName::from_text("alias.cbtest");
  c.type = dns_type::CNAME;
  c.ttl = 60;
  c.target = *DnsName::from_text("web.cbtest");
  m.answers.push_back(c);
  DnsRecord a;
  a.name = *DnsName::from_text("web.cbtest");
  a.type = dns_type::A;
  a.ttl = 60;
  a.addr = *IpAddr::parse("127.1.0.10");
  m.answers.push_back(a);
  DnsRecord aaaa = a;
  aaaa.type = dns_type::AAAA;
  aaaa.addr = *IpAddr::parse("fd00::10");
  m.answers.push_back(aaaa);
  Bytes wire = build_dns(m);
  // "cbtest" is written once: every later name ends in a pointer.
  std::string s(wire.begin(), wire.end());
  EXPECT_EQ(s.find("cbtest"), s.rfind("cbtest"));
  auto r = parse_dns(wire);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->header.id, 77);
  ASSERT_EQ(r->answers.size(), 3u);
  EXPECT_EQ(r->answers[0].target.key(), "web.cbtest");
  EXPECT_EQ(r->answers[1].addr.text(), "127.1.0.10");
  EXPECT_EQ(r->answers[2].addr.text(), "fd00::10");
  EXPECT_EQ(build_dns(*r), wire);
}

TEST(DnsBuild, RepliesCarryTheQuestionAndTheFlags) {
  DnsMessage q;
  q.header.id = 9;
  q.header.set_rd(true);
  q.questions.push_back({*DnsName::from_text("evil.test"), dns_type::AAAA, kClassIn});
  auto r = parse_dns(build_reply(q, Rcode::Refused));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->header.id, 9);
  EXPECT_TRUE(r->header.qr());
  EXPECT_TRUE(r->header.rd());
  EXPECT_TRUE(r->header.ra());
  EXPECT_FALSE(r->header.tc());
  EXPECT_EQ(r->header.rcode(), static_cast<int>(Rcode::Refused));
  EXPECT_EQ(r->questions[0].name.key(), "evil.test");
  EXPECT_EQ(r->questions[0].type, dns_type::AAAA);
  auto t = parse_dns(build_reply(q, Rcode::NoError, true));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->header.tc());
  EXPECT_TRUE(t->answers.empty());

  Bytes garbage = {0xab, 0xcd, 0x01, 0x00, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 1, 2, 3};
  Bytes fe = build_formerr(garbage);
  ASSERT_EQ(fe.size(), 12u);
  auto f = parse_dns(fe);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.id, 0xabcd);
  EXPECT_EQ(f->header.rcode(), static_cast<int>(Rcode::FormErr));
  EXPECT_TRUE(build_formerr(Bytes{1, 2, 3}).empty());
  Bytes response = garbage;
  response[2] |= 0x80;
  EXPECT_TRUE(build_formerr(response).empty()) << "a response is never answered";
}

TEST(TcpFramer, SplitsAndJoinsAStream) {
  Bytes m1 = simple_response();
  Bytes m2 = {1, 2, 3};
  Bytes stream = tcp_frame(m1);
  Bytes f2 = tcp_frame(m2);
  stream.insert(stream.end(), f2.begin(), f2.end());
  TcpFramer f;
  // One byte at a time: nothing before a message is whole.
  std::vector<Bytes> got;
  for (uint8_t b : stream) {
    f.append(std::span<const uint8_t>(&b, 1));
    while (auto m = f.next()) got.push_back(*m);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], m1);
  EXPECT_EQ(got[1], m2);
  EXPECT_EQ(f.buffered(), 0u);
  // All at once.
  TcpFramer g;
  g.append(stream);
  EXPECT_EQ(*g.next(), m1);
  EXPECT_EQ(*g.next(), m2);
  EXPECT_FALSE(g.next());
  // A zero-length message is a message.
  TcpFramer z;
  Bytes empty = {0, 0};
  z.append(empty);
  auto e = z.next();
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->empty());
}

}  // namespace
}  // namespace cb::net
