#include "core/bit_words.h"

#include <gtest/gtest.h>

#include <vector>

namespace gf {
namespace {

std::vector<size_t> all(const BitWords& b) {
  std::vector<size_t> out;
  b.each([&](size_t i) {
    out.push_back(i);
    return true;
  });
  return out;
}

TEST(BitWords, EachVisitsSetBitsInAscendingOrderAcrossWords) {
  BitWords b(10);
  for (size_t i : {200u, 3u, 64u, 63u, 0u, 130u}) b.set(i);
  EXPECT_EQ(all(b), (std::vector<size_t>{0, 3, 63, 64, 130, 200}));
}

TEST(BitWords, ClearAndAssignRemoveBitsAndClearBeyondTheWordsIsANoOp) {
  BitWords b;
  b.set(5);
  b.set(70);
  b.clear(5);
  b.clear(10'000);
  b.assign(71, true);
  b.assign(70, false);
  EXPECT_EQ(all(b), (std::vector<size_t>{71}));
}

TEST(BitWords, EachStopsWhenTheCallbackSaysSoAndReportsIt) {
  BitWords b;
  for (size_t i : {1u, 2u, 90u}) b.set(i);
  std::vector<size_t> seen;
  const bool finished = b.each([&](size_t i) {
    seen.push_back(i);
    return i < 2;
  });
  EXPECT_FALSE(finished);
  EXPECT_EQ(seen, (std::vector<size_t>{1, 2}));
  EXPECT_TRUE(BitWords(128).each([](size_t) { return false; }));  // nothing set: never called
}

}  // namespace
}  // namespace gf
