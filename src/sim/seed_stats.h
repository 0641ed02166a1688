// `gpufleet simulate --seeds N` (docs/scenarios.md "What-if"): each variant run on N seeds, and
// per KPI the mean with its 95 % interval (Student's t over the seeds) and, for every variant
// after the first, the paired difference from the first (the same seed's runs subtracted, then
// the mean and interval of those differences), so a change is told from the spread of one run.
// The CLI and the HTML report print the same table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json.h"

namespace gf {

struct Interval {
  double mean = 0;
  double half_width = 0;  // 95 %: t(n-1) × sd / sqrt(n); 0 with one value
  size_t n = 0;
  double low() const { return mean - half_width; }
  double high() const { return mean + half_width; }
};

// Mean and 95 % interval of `values` (nullopt when empty).
std::optional<Interval> interval_of(const std::vector<double>& values);
// The two-sided 95 % Student's t quantile for `df` degrees of freedom (df >= 1).
double t95(size_t df);

// One variant: its label and the metrics.json of each seed's run, in seed order.
struct SeededVariant {
  std::string label;
  std::vector<Json> metrics;
};

// The table: a header ("KPI", each variant, "Δ <variant> (paired)" for each after the first)
// and a row per KPI of kpi_rows(). Cells: "83.2% ± 1.1 pts", "+2.4 pts [0.8, 4.0]", "-".
std::vector<std::vector<std::string>> seed_table(const std::vector<SeededVariant>& variants);

}  // namespace gf
