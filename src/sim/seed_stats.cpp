#include "sim/seed_stats.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

#include "sim/report.h"

namespace gf {

double t95(size_t df) {
  // Two-sided 95 % quantiles of Student's t, df 1..30; beyond, the normal's 1.96 is within 2 %.
  static constexpr std::array<double, 30> kT{
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return 0;
  return df <= kT.size() ? kT[df - 1] : 1.96;
}

std::optional<Interval> interval_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  Interval iv;
  iv.n = values.size();
  for (double v : values) iv.mean += v;
  iv.mean /= static_cast<double>(iv.n);
  if (iv.n > 1) {
    double ss = 0;
    for (double v : values) ss += (v - iv.mean) * (v - iv.mean);
    const double sd = std::sqrt(ss / static_cast<double>(iv.n - 1));
    iv.half_width = t95(iv.n - 1) * sd / std::sqrt(static_cast<double>(iv.n));
  }
  return iv;
}

namespace {

// A spread or a difference in the KPI's unit: percent as points, seconds as a duration.
std::string amount(double v, const std::string& unit) {
  if (unit == "percent") return fmt::format("{:.1f} pts", v * 100);
  if (unit == "s") {
    const std::string d = format_kpi(Json(std::fabs(v)), "s");
    return v < 0 ? "-" + d : d;
  }
  if (unit == "gpu-h") return fmt::format("{:.1f} GPU-h", v);
  if (unit == "usd") return fmt::format("{:.2f}", v);
  return fmt::format("{:.1f}", v);
}

std::string plain(double v, const std::string& unit) {
  if (unit == "percent") return fmt::format("{:.1f}", v * 100);
  if (unit == "s") return (v < 0 ? "-" : "") + format_kpi(Json(std::fabs(v)), "s");
  return fmt::format("{:.1f}", v);
}

std::string mean_cell(const std::vector<double>& xs, const std::string& unit) {
  const std::optional<Interval> iv = interval_of(xs);
  if (!iv) return "-";
  const std::string m =
      unit == "count" ? fmt::format("{:.1f}", iv->mean) : format_kpi(Json(iv->mean), unit);
  if (iv->n < 2) return m;
  return m + " ± " + amount(iv->half_width, unit);
}

std::string diff_cell(const std::vector<double>& ds, const std::string& unit) {
  const std::optional<Interval> iv = interval_of(ds);
  if (!iv) return "-";
  std::string m = amount(iv->mean, unit);
  if (iv->mean >= 0) m = "+" + m;
  if (iv->n < 2) return m;
  return fmt::format("{} [{}, {}]", m, plain(iv->low(), unit), plain(iv->high(), unit));
}

}  // namespace

std::vector<std::vector<std::string>> seed_table(const std::vector<SeededVariant>& variants) {
  std::vector<std::vector<std::string>> out;
  if (variants.empty() || variants.front().metrics.empty()) return out;
  std::vector<std::string> header = {"KPI"};
  for (const auto& v : variants) header.push_back(v.label);
  for (size_t i = 1; i < variants.size(); ++i)
    header.push_back("Δ " + variants[i].label + " (paired)");
  out.push_back(std::move(header));
  // rows[variant][seed] = the KPI rows of that run.
  std::vector<std::vector<std::vector<KpiRow>>> rows;
  for (const auto& v : variants) {
    rows.emplace_back();
    for (const Json& m : v.metrics) rows.back().push_back(kpi_rows(m));
  }
  const std::vector<KpiRow>& base = rows.front().front();
  for (size_t k = 0; k < base.size(); ++k) {
    std::vector<std::string> row = {base[k].label};
    std::vector<std::vector<std::optional<double>>> vals(variants.size());
    for (size_t v = 0; v < variants.size(); ++v) {
      std::vector<double> xs;
      for (const auto& run : rows[v]) {
        vals[v].push_back(kpi_number(run[k].value));
        if (vals[v].back()) xs.push_back(*vals[v].back());
      }
      row.push_back(mean_cell(xs, base[k].unit));
    }
    for (size_t v = 1; v < variants.size(); ++v) {
      std::vector<double> ds;  // paired by seed: the same seed's runs
      for (size_t s = 0; s < vals[v].size() && s < vals[0].size(); ++s) {
        if (vals[v][s] && vals[0][s]) ds.push_back(*vals[v][s] - *vals[0][s]);
      }
      row.push_back(diff_cell(ds, base[k].unit));
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace gf
