#include "db/bytes.h"

#include <gtest/gtest.h>

#include <random>

namespace cb::db {
namespace {

TEST(Utf8, ValidAndInvalidSequences) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain /path"));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_FALSE(is_valid_utf8("\xff"));
  EXPECT_FALSE(is_valid_utf8("\x80"));              // a lone continuation byte
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));      // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // truncated
}

TEST(Utf8, ReplacementFollowsMaximalSubparts) {
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(to_valid_utf8("a\xffz"), "a" + fffd + "z");
  // A truncated 3-byte sequence is one replacement, not two.
  EXPECT_EQ(to_valid_utf8("a\xe2\x82z"), "a" + fffd + "z");
  // Each byte of an overlong form is its own subpart.
  EXPECT_EQ(to_valid_utf8("\xc0\xaf"), fffd + fffd);
  EXPECT_EQ(to_valid_utf8("ok \xc3\xa9"), "ok \xc3\xa9");
}

TEST(Base64, RoundTripsEveryLengthAndByte) {
  std::mt19937 rng(42);
  for (size_t n = 0; n < 70; ++n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(rng());
    std::string enc = base64_encode(s);
    EXPECT_EQ(enc.size() % 4, 0u);
    auto dec = base64_decode(enc);
    ASSERT_TRUE(dec) << enc;
    EXPECT_EQ(*dec, s);
  }
  EXPECT_EQ(base64_encode("\xff\n"), "/wo=");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_FALSE(base64_decode("abc"));
  EXPECT_FALSE(base64_decode("ab=c"));
  EXPECT_FALSE(base64_decode("a*bc"));
}

TEST(NulJoined, KeepsEmptyElementsApart) {
  EXPECT_EQ(split_nul(join_nul({})), std::vector<std::string>{});
  EXPECT_EQ(split_nul(join_nul({""})), std::vector<std::string>{""});
  std::vector<std::string> argv = {"rm", "", "a\nb", "\xff"};
  EXPECT_EQ(split_nul(join_nul(argv)), argv);
  EXPECT_EQ(join_nul({"a", "b"}), std::string("a\0b\0", 4));
}

}  // namespace
}  // namespace cb::db
