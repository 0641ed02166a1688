// CowMap (core/cow_map.h): std::map's order and lookups, and copies that share structure —
// a copy never sees a later write of the original, and the original never sees the copy's.
#include "core/cow_map.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "core/random.h"

namespace gf {
namespace {

std::string key(uint64_t i) { return "job-" + std::to_string(i); }

TEST(CowMapTest, BehavesAsAStdMapUnderRandomInsertsAndErases) {
  CowMap<int> m;
  std::map<std::string, int, std::less<>> ref;
  Random rng(5);
  for (int step = 0; step < 20000; ++step) {
    const std::string k = key(rng.uniform(3000));
    if (rng.uniform(3) == 0) {
      EXPECT_EQ(m.erase(k), ref.erase(k));
    } else {
      EXPECT_EQ(m.emplace(k, step), ref.emplace(k, step).second);
    }
  }
  ASSERT_EQ(m.size(), ref.size());
  auto it = m.begin();
  for (const auto& [k, v] : ref) {
    ASSERT_NE(it, m.end());
    EXPECT_EQ(it->first, k);
    EXPECT_EQ(it->second, v);
    ++it;
  }
  EXPECT_EQ(it, m.end());
  for (uint64_t i = 0; i < 3000; ++i) {
    EXPECT_EQ(m.contains(key(i)), ref.contains(key(i)));
    auto f = m.find(key(i));
    if (f != m.end()) {
      EXPECT_EQ(f->second, ref.at(key(i)));
    }
  }
}

TEST(CowMapTest, ACopyKeepsWhatItSawWhileTheOriginalChanges) {
  CowMap<std::shared_ptr<const int>> m;
  for (int i = 0; i < 1000; ++i) m.emplace(key(i), std::make_shared<const int>(i));
  const CowMap<std::shared_ptr<const int>> snapshot = m;
  // Writes to the original: a value replaced, an entry erased, one added.
  *m.mutable_find(key(10)) = std::make_shared<const int>(-10);
  m.erase(key(20));
  m.emplace(key(5000), std::make_shared<const int>(5000));
  EXPECT_EQ(*snapshot.find(key(10))->second, 10);
  EXPECT_TRUE(snapshot.contains(key(20)));
  EXPECT_FALSE(snapshot.contains(key(5000)));
  EXPECT_EQ(snapshot.size(), 1000u);
  EXPECT_EQ(*m.find(key(10))->second, -10);
  EXPECT_FALSE(m.contains(key(20)));
  EXPECT_EQ(m.size(), 1000u);
  EXPECT_EQ(m.mutable_find("absent"), nullptr);
}

TEST(CowMapTest, EmptyMapIteratesNothing) {
  CowMap<int> m;
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.begin(), m.end());
  EXPECT_EQ(m.find("x"), m.end());
  EXPECT_EQ(m.erase("x"), 0u);
  m.emplace("a", 1);
  m.erase("a");
  EXPECT_EQ(m.begin(), m.end());
  EXPECT_TRUE(m.empty());
}

}  // namespace
}  // namespace gf
