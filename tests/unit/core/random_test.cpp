#include "core/random.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <set>
#include <vector>

namespace gf {
namespace {

std::vector<uint64_t> draw(uint64_t seed, int n) {
  Random r(seed);
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(r.next_u64());
  return out;
}

TEST(Random, SameSeedGivesSameSequence) {
  EXPECT_EQ(draw(42, 100), draw(42, 100));
  EXPECT_EQ(draw(0, 100), draw(0, 100));
  EXPECT_EQ(Random(42).seed(), 42u);
}

TEST(Random, DifferentSeedsGiveDifferentSequences) {
  EXPECT_NE(draw(1, 4), draw(2, 4));
  std::set<uint64_t> firsts;
  for (uint64_t seed = 0; seed < 1000; ++seed) firsts.insert(draw(seed, 1)[0]);
  EXPECT_EQ(firsts.size(), 1000u);
}

TEST(Random, SequenceIsStandardXoshiro256StarStarSeededBySplitMix64) {
  // Simulation runs replay by seed, so the output is part of the contract. Expected values come
  // from the reference algorithms (Blackman & Vigna), computed independently of this code.
  Random r(42);
  EXPECT_EQ(r.next_u64(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(r.next_u64(), 0x6104d9866d113a7eULL);
  EXPECT_EQ(r.next_u64(), 0xae17533239e499a1ULL);
}

TEST(Random, UniformStaysBelowBoundAndCoversIt) {
  Random r(7);
  std::set<uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    uint64_t x = r.uniform(10);
    ASSERT_LT(x, 10u);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(r.uniform(1), 0u);
  for (int i = 0; i < 1000; ++i) ASSERT_LT(r.uniform(uint64_t{1} << 63 | 1), uint64_t{1} << 63 | 1);
}

TEST(Random, UniformRangeIsInclusiveOfBothEnds) {
  Random r(11);
  std::set<int64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    int64_t x = r.uniform_range(-3, 3);
    ASSERT_GE(x, -3);
    ASSERT_LE(x, 3);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(r.uniform_range(5, 5), 5);
  EXPECT_EQ(r.uniform_range(5, 4), 5) << "an empty range gives lo";
}

TEST(Random, UniformRangeHandlesExtremeBoundsWithoutOverflow) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Random r(3);
  bool saw_negative = false, saw_positive = false;
  for (int i = 0; i < 1000; ++i) {
    int64_t full = r.uniform_range(kMin, kMax);
    saw_negative |= full < 0;
    saw_positive |= full > 0;
    int64_t top = r.uniform_range(-10, kMax);
    ASSERT_GE(top, -10);
    int64_t bottom = r.uniform_range(kMin, 10);
    ASSERT_LE(bottom, 10);
  }
  EXPECT_TRUE(saw_negative && saw_positive) << "the full range is not stuck at lo";
}

TEST(Random, UniformUnitIsInHalfOpenUnitInterval) {
  Random r(5);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    double x = r.uniform_unit();
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

}  // namespace
}  // namespace gf
