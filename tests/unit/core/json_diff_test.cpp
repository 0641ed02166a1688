// json_diff.h: a record written as what differs from a base reads back as the record.
#include "core/json_diff.h"

#include <gtest/gtest.h>

#include "core/random.h"

namespace gf {
namespace {

const Json kBase = {{"a", 1},
                    {"b", "x"},
                    {"c", nullptr},
                    {"d", {{"e", false}, {"f", Json::array()}, {"g", {{"h", 0}}}}},
                    {"i", Json::array({1, 2})}};

TEST(JsonDiff, Minus_DropsEqualMembersAndKeepsTheOthersWhole) {
  Json v = kBase;
  v["b"] = "y";
  v["d"]["g"]["h"] = 5;
  v["i"] = Json::array({1, 2, 3});
  const Json d = json_minus(kBase, v);
  EXPECT_EQ(d, (Json{{"b", "y"}, {"d", {{"g", {{"h", 5}}}}}, {"i", Json::array({1, 2, 3})}}))
      << d.dump();
  EXPECT_EQ(json_minus(kBase, kBase), Json::object());
}

TEST(JsonDiff, Overlay_NullReplacesInsteadOfDeleting) {
  Json v = kBase;
  v["a"] = nullptr;
  v["d"] = nullptr;
  const Json d = json_minus(kBase, v);
  EXPECT_EQ(d, (Json{{"a", nullptr}, {"d", nullptr}}));
  EXPECT_EQ(json_overlay(kBase, d), v);
}

TEST(JsonDiff, Overlay_ObjectInPlaceOfAScalarAndNewMembers) {
  Json v = kBase;
  v["c"] = {{"k", 1}};
  v["new"] = {{"n", Json::array()}};
  EXPECT_EQ(json_overlay(kBase, json_minus(kBase, v)), v);
  EXPECT_EQ(json_overlay(kBase, Json::object()), kBase);
  EXPECT_EQ(json_overlay(kBase, Json::array()), Json::array()) << "a non-object replaces";
}

// Any value with every member of the base (a canonical encoding of the same type) comes back.
TEST(JsonDiff, OverlayOfMinusGivesTheValueBack_RandomValues) {
  Random rng(42);
  auto leaf = [&](int k) -> Json {
    switch (k % 5) {
      case 0:
        return nullptr;
      case 1:
        return static_cast<int64_t>(rng.uniform_range(0, 3));
      case 2:
        return rng.uniform_range(0, 1) == 1;
      case 3:
        return std::string(static_cast<size_t>(rng.uniform_range(0, 2)), 'x');
      default:
        return Json::array({rng.uniform_range(0, 2)});
    }
  };
  std::function<Json(const Json&)> mutate = [&](const Json& base) -> Json {
    if (base.is_object() && rng.uniform_range(0, 4) != 0) {
      Json out = Json::object();
      for (auto it = base.begin(); it != base.end(); ++it) out[it.key()] = mutate(it.value());
      if (rng.uniform_range(0, 3) == 0)
        out["extra"] = leaf(static_cast<int>(rng.uniform_range(0, 4)));
      return out;
    }
    return rng.uniform_range(0, 2) == 0 ? leaf(static_cast<int>(rng.uniform_range(0, 4))) : base;
  };
  for (int i = 0; i < 500; ++i) {
    const Json v = mutate(kBase);
    const Json d = json_minus(kBase, v);
    ASSERT_EQ(json_overlay(kBase, d), v) << "value " << v.dump() << " diff " << d.dump();
    ASSERT_LE(d.dump().size(), v.dump().size() + 2) << v.dump();
  }
}

}  // namespace
}  // namespace gf
