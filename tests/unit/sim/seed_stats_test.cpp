// --seeds N (docs/scenarios.md "What-if"): means with 95 % intervals, and paired differences.
#include "sim/seed_stats.h"

#include <gtest/gtest.h>

namespace gf {
namespace {

TEST(SeedStats, IntervalIsTheMeanPlusMinusStudentsTTimesTheStandardError) {
  const std::optional<Interval> iv = interval_of({1, 2, 3, 4, 5});
  ASSERT_TRUE(iv);
  EXPECT_DOUBLE_EQ(iv->mean, 3);
  // sd = sqrt(2.5); t(4) = 2.776; half width = 2.776 * sqrt(2.5) / sqrt(5)
  EXPECT_NEAR(iv->half_width, 2.776 * std::sqrt(2.5) / std::sqrt(5.0), 1e-9);
  EXPECT_EQ(iv->n, 5u);
  EXPECT_FALSE(interval_of({}).has_value());
  EXPECT_DOUBLE_EQ(interval_of({7})->half_width, 0);
}

TEST(SeedStats, TQuantilesFallToTheNormalsForManySeeds) {
  EXPECT_DOUBLE_EQ(t95(1), 12.706);
  EXPECT_DOUBLE_EQ(t95(4), 2.776);
  EXPECT_DOUBLE_EQ(t95(100), 1.96);
}

Json metrics_with_goodput(double g) {
  return Json{{"fleet", {{"goodput", g}, {"jobs", 10}}}, {"remediations", Json::object()}};
}

TEST(SeedStats, PairedDifferenceSubtractsTheSameSeedsRunsBeforeAveraging) {
  // Seed to seed the goodput swings by 10 points, but variant b is always 1 point above a: the
  // paired interval is exactly +1.0 with no spread.
  std::vector<SeededVariant> v = {{"a", {}}, {"b", {}}};
  for (double g : {0.70, 0.80, 0.90}) {
    v[0].metrics.push_back(metrics_with_goodput(g));
    v[1].metrics.push_back(metrics_with_goodput(g + 0.01));
  }
  const auto table = seed_table(v);
  ASSERT_GE(table.size(), 2u);
  EXPECT_EQ(table[0], (std::vector<std::string>{"KPI", "a", "b", "Δ b (paired)"}));
  EXPECT_EQ(table[1][0], "goodput (work kept / GPU-h paid)");
  EXPECT_EQ(table[1][1], "80.0% ± 24.8 pts");
  EXPECT_EQ(table[1][3], "+1.0 pts [1.0, 1.0]");
}

}  // namespace
}  // namespace gf
