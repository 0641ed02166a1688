// CowMap (core/cow_map.h): std::map's order and lookups, and copies that share structure —
// a copy never sees a later write of the original, and the original never sees the copy's.
#include "core/cow_map.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/random.h"

namespace gf {
namespace {

std::string key(uint64_t i) { return "job-" + std::to_string(i); }

// The map holds exactly the reference's entries, in its order.
void expect_same_entries(const CowMap<int>& m, const std::map<std::string, int, std::less<>>& ref) {
  ASSERT_EQ(m.size(), ref.size());
  auto it = m.begin();
  for (const auto& [k, v] : ref) {
    ASSERT_NE(it, m.end());
    ASSERT_EQ(it->first, k);
    ASSERT_EQ(it->second, v);
    ++it;
  }
  EXPECT_EQ(it, m.end());
}

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
  expect_same_entries(m, ref);
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

// Enough entries for three levels, then random writes with a snapshot taken every few hundred:
// each snapshot must still read exactly the std::map copy taken with it, whatever the original
// did after (node splits, empty leaves and inner nodes dropped, the tree emptied).
TEST(CowMapTest, SnapshotsOfADeepTreeKeepWhatTheySawUnderSplitsAndErasures) {
  using Ref = std::map<std::string, int, std::less<>>;
  CowMap<int> m;
  Ref ref;
  for (int i = 0; i < 150000; ++i) {
    m.emplace(key(static_cast<uint64_t>(i)), i);
    ref.emplace(key(static_cast<uint64_t>(i)), i);
  }
  EXPECT_EQ(m.height(), 3);
  std::vector<std::pair<CowMap<int>, Ref>> snapshots;
  Random rng(11);
  for (int step = 0; step < 20000; ++step) {
    const std::string k = key(rng.uniform(200000));
    switch (rng.uniform(4)) {
      case 0:
        EXPECT_EQ(m.erase(k), ref.erase(k));
        break;
      case 1:
        if (int* v = m.mutable_find(k)) *v = -step;
        if (auto it = ref.find(k); it != ref.end()) it->second = -step;
        break;
      default:
        EXPECT_EQ(m.emplace(k, step), ref.emplace(k, step).second);
    }
    if (step % 2500 == 0) snapshots.emplace_back(m, ref);
  }
  // Erase almost everything: leaves and inner nodes empty out and the root collapses.
  for (int i = 0; i < 200000; ++i) {
    if (i % 1000 == 7) continue;
    m.erase(key(static_cast<uint64_t>(i)));
    ref.erase(key(static_cast<uint64_t>(i)));
  }
  snapshots.emplace_back(m, ref);
  // Then everything: the last leaf goes and the tree is empty again.
  for (int i = 0; i < 200000; ++i) m.erase(key(static_cast<uint64_t>(i)));
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.height(), 0);
  EXPECT_EQ(m.begin(), m.end());
  for (const auto& [snap, want] : snapshots) {
    expect_same_entries(snap, want);
    for (int probe = 0; probe < 1000; ++probe) {
      const std::string k = key(rng.uniform(200000));
      auto f = snap.find(k);
      auto w = want.find(k);
      ASSERT_EQ(f == snap.end(), w == want.end()) << k;
      if (f != snap.end()) {
        EXPECT_EQ(f->second, w->second);
      }
    }
  }
}

TEST(CowMapTest, TheRootCollapsesWhenOneChildIsLeft) {
  CowMap<int> m;
  for (int i = 0; i < 1000; ++i) m.emplace(key(static_cast<uint64_t>(i)), i);
  EXPECT_EQ(m.height(), 1);
  const CowMap<int> before = m;
  // Keep the ten smallest keys, which share the first leaf.
  std::vector<std::string> keys;
  for (const auto& [k, v] : m) keys.push_back(k);
  for (size_t i = 10; i < keys.size(); ++i) m.erase(keys[i]);
  EXPECT_EQ(m.height(), 0);
  EXPECT_EQ(m.size(), 10u);
  EXPECT_EQ(std::distance(m.begin(), m.end()), 10);
  EXPECT_EQ(before.size(), 1000u);
  EXPECT_EQ(std::distance(before.begin(), before.end()), 1000);
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
