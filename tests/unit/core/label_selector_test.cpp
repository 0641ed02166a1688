#include "core/label_selector.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

bool match(std::string_view sel, const std::map<std::string, std::string>& labels) {
  auto s = LabelSelector::parse(sel);
  EXPECT_TRUE(s.ok()) << sel << ": " << s.status().message();
  return s.ok() && s->matches(labels);
}

TEST(LabelSelector, EqualityExistenceAndSetRequirementsAllMustHold) {
  const std::map<std::string, std::string> l = {{"app", "train"}, {"tier", "gpu"}};
  EXPECT_TRUE(match("", l));
  EXPECT_TRUE(match("app=train", l));
  EXPECT_TRUE(match("app==train", l));
  EXPECT_FALSE(match("app=serve", l));
  EXPECT_TRUE(match("app!=serve", l));
  EXPECT_TRUE(match("missing!=x", l));  // != holds when the key is absent
  EXPECT_TRUE(match("tier", l));
  EXPECT_FALSE(match("!tier", l));
  EXPECT_TRUE(match("!missing", l));
  EXPECT_TRUE(match("app in (serve, train)", l));
  EXPECT_FALSE(match("app notin (serve,train)", l));
  EXPECT_TRUE(match("missing notin (a)", l));
  EXPECT_TRUE(match("app=train, tier in (gpu,cpu), !missing", l));
  EXPECT_FALSE(match("app=train,tier=cpu", l));
}

TEST(LabelSelector, JsonLabelsAreReadAsStrings) {
  auto s = LabelSelector::parse("gpufleet.io/remediate=reboot");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->matches(Json{{"gpufleet.io/remediate", "reboot"}}));
  EXPECT_FALSE(s->matches(Json::array()));
  EXPECT_FALSE(s->matches(Json{{"gpufleet.io/remediate", 1}}));
}

TEST(LabelSelector, MalformedRequirementsAreNamed) {
  for (const char* bad :
       {"=x", "a=b c", "app in (a,)", "app within (a)", ",", "a,,b", "app in (a", "!"}) {
    auto s = LabelSelector::parse(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().message().rfind("-l: \"", 0), 0u) << s.status().message();
  }
  EXPECT_FALSE(LabelSelector::parse(std::string(5000, 'a')).ok());
}

}  // namespace
}  // namespace gf
