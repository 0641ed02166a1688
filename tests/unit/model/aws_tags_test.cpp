// AWS tags as AWS bounds them (docs/aws-compatibility.md "Tags"): one test per rule.
#include "model/aws_tags.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

Status read(const Json& tags) {
  const Json body = {{"tags", tags}};
  ObjectReader r(body, "");
  read_aws_tags(r, "tags");
  return r.status();
}

Json many(size_t n) {
  Json t = Json::object();
  for (size_t i = 0; i < n; ++i) t["k" + std::to_string(i)] = "v";
  return t;
}

TEST(AwsTags, FiftyTagsAreAcceptedFiftyOneAreRefusedNamingTheField) {
  EXPECT_TRUE(read(many(50)).ok());
  const Status st = read(many(51));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kValidation);
  EXPECT_NE(st.message().find("tags"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("at most 50 tags, got 51"), std::string::npos) << st.message();
  EXPECT_FALSE(read(many(10000)).ok());
}

TEST(AwsTags, AKeyIsOneTo128CharactersAndAValueAtMost256) {
  EXPECT_TRUE(read({{std::string(128, 'k'), std::string(256, 'v')}}).ok());
  EXPECT_FALSE(read({{std::string(129, 'k'), "v"}}).ok());
  EXPECT_FALSE(read({{"", "v"}}).ok());
  EXPECT_FALSE(read({{"k", std::string(257, 'v')}}).ok());
  // Characters, not bytes: 128 two-byte characters are one key of 128.
  std::string wide;
  for (int i = 0; i < 128; ++i) wide += "é";
  EXPECT_TRUE(read({{wide, "v"}}).ok());
}

TEST(AwsTags, ValuesAreStringsOnly) {
  const Status st = read({{"team", 5}});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("tag \"team\" must be a string"), std::string::npos) << st.message();
  EXPECT_FALSE(read(Json::array()).ok());
}

}  // namespace
}  // namespace gf
