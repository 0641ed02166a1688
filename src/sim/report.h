// `gpufleet simulate --report FILE` (docs/scenarios.md "Report"): one self-contained HTML page with
// SVG charts drawn from metrics.json — utilization and queue depth over time, where the paid
// GPU-hours went (goodput), MTTR by phase, queueing delay per tenant — and the KPI table of every
// variant of a comparison. No script, no external resource: it opens offline.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json.h"

namespace gf {

struct ReportRun {
  std::string label;  // the variant: scenario name, or its --compare settings
  Json metrics;       // its metrics.json
};

// The page. `runs` has one entry, or several for a comparison (the first is the baseline).
// With `seeds` (a seed_table(), --seeds N), the KPI table is that table: every variant's mean and
// 95 % interval over the seeds and the paired differences; the charts are of each variant's first
// seed.
std::string render_report(const std::vector<ReportRun>& runs,
                          const std::vector<std::vector<std::string>>* seeds = nullptr);

// One row of the KPI table shared by the report and `--compare`.
struct KpiRow {
  std::string label;
  Json value;        // a number, or null when the run did not measure it
  std::string unit;  // percent (a ratio shown as %), gpu-h, s, count, usd
  bool higher_is_better = true;
};
std::vector<KpiRow> kpi_rows(const Json& metrics);
// A KPI's value as a number: a JSON number, or a decimal string (billing totals); nullopt else.
std::optional<double> kpi_number(const Json& value);
// A value as the tables show it ("93.1%", "1,234.5 GPU-h", "3m12s", "-").
std::string format_kpi(const Json& value, const std::string& unit);
// The change from `base` to `value` ("+2.3 pts", "-12.0%", "-").
std::string format_kpi_delta(const Json& base, const Json& value, const std::string& unit);

}  // namespace gf
