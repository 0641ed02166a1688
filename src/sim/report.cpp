#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/time.h"

namespace gf {

namespace {

// Series colours, readable on white and in grey print.
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#17becf", "#7f7f7f"};

std::string esc(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double num(const Json& j, double dflt = 0) { return j.is_number() ? j.get<double>() : dflt; }

const Json& at_path(const Json& j, std::initializer_list<const char*> keys) {
  static const Json kNull;
  const Json* cur = &j;
  for (const char* k : keys) {
    if (!cur->is_object() || !cur->contains(k)) return kNull;
    cur = &(*cur)[k];
  }
  return *cur;
}

// A "nice" axis maximum: 1, 2 or 5 times a power of ten at or above `v`.
double nice_max(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

std::string short_num(double v) {
  if (std::fabs(v) >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  if (std::fabs(v) >= 1e4) return fmt::format("{:.0f}k", v / 1e3);
  if (std::fabs(v) >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  if (v == std::floor(v)) return fmt::format("{:.0f}", v);
  return fmt::format("{:.2f}", v);
}

struct Line {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x seconds, y)
};

constexpr int kW = 720, kH = 240, kL = 56, kR = 16, kT = 16, kB = 36;

// A line chart over time (x in seconds, shown in days or hours).
std::string line_chart(const std::string& title, const std::vector<Line>& lines,
                       const std::string& y_label, std::optional<double> y_max = std::nullopt) {
  double xmax = 1, ymax = 0;
  for (const auto& l : lines) {
    for (const auto& [x, y] : l.points) {
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  }
  ymax = y_max ? *y_max : nice_max(ymax);
  const bool in_days = xmax >= 3 * 86400;
  const double unit = in_days ? 86400 : 3600;
  const double pw = kW - kL - kR, ph = kH - kT - kB;
  auto X = [&](double x) { return kL + x / xmax * pw; };
  auto Y = [&](double y) { return kT + ph - std::min(y, ymax) / ymax * ph; };
  std::string svg = fmt::format(
      "<figure><figcaption>{}</figcaption><svg viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\">",
      esc(title), kW, kH, esc(title));
  for (int i = 0; i <= 4; ++i) {
    const double v = ymax * i / 4;
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" class=\"grid\"/><text x=\"{}\" "
        "y=\"{:.1f}\" class=\"yl\">{}</text>",
        kL, kW - kR, Y(v), Y(v), kL - 4, Y(v) + 4, short_num(v));
  }
  // Ticks at a round step of days or hours: about six of them.
  const double span = xmax / unit;
  double step = nice_max(span / 6);
  if (step > span / 3) step = nice_max(span / 12);
  for (double v = 0; v <= span + 1e-9; v += step) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"xl\">{}{}</text>", X(v * unit),
                       kH - kB + 16, short_num(std::round(v * 100) / 100), in_days ? "d" : "h");
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"al\">{}</text>", kL, kT - 4, esc(y_label));
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string pts;
    for (const auto& [x, y] : lines[i].points) pts += fmt::format("{:.1f},{:.1f} ", X(x), Y(y));
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.6\" points=\"{}\"/>",
                       kColors[i % 8], pts);
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "class=\"lg\">{}</text>",
        kW - kR - 170, kT + 4 + 14 * static_cast<int>(i), kColors[i % 8], kW - kR - 155,
        kT + 13 + 14 * static_cast<int>(i), esc(lines[i].name));
  }
  svg +=
      fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" class=\"axis\"/></svg></figure>",
                  kL, kW - kR, kT + ph, kT + ph);
  return svg;
}

struct Bar {
  std::string label;
  std::vector<double> values;  // one per series (stacked when `stacked`)
};

// Horizontal bars: grouped (one bar per series) or stacked.
std::string bar_chart(const std::string& title, const std::vector<std::string>& series,
                      const std::vector<Bar>& bars, bool stacked, const std::string& unit) {
  double vmax = 0;
  for (const auto& b : bars) {
    double sum = 0;
    for (double v : b.values) {
      vmax = std::max(vmax, v);
      sum += v;
    }
    if (stacked) vmax = std::max(vmax, sum);
  }
  vmax = nice_max(vmax);
  const int row = stacked ? 26 : 12 * static_cast<int>(std::max<size_t>(1, series.size())) + 10;
  const int left = 170, right = 70;
  const int h =
      kT + row * static_cast<int>(bars.size()) + 40 + 14 * static_cast<int>(series.size());
  const double pw = kW - left - right;
  std::string svg = fmt::format(
      "<figure><figcaption>{}</figcaption><svg viewBox=\"0 0 {} {}\" role=\"img\" "
      "aria-label=\"{}\">",
      esc(title), kW, h, esc(title));
  for (size_t bi = 0; bi < bars.size(); ++bi) {
    const int y0 = kT + row * static_cast<int>(bi);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"yl\">{}</text>", left - 6, y0 + row / 2 + 2,
                       esc(bars[bi].label));
    double x = left;
    for (size_t si = 0; si < bars[bi].values.size(); ++si) {
      const double v = bars[bi].values[si];
      const double w = v / vmax * pw;
      const int y = stacked ? y0 + 3 : y0 + 3 + 12 * static_cast<int>(si);
      const int bh = stacked ? row - 6 : 10;
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: "
          "{}</title></rect>",
          stacked ? x : left, y, std::max(0.0, w), bh, kColors[si % 8],
          esc(si < series.size() ? series[si] : ""), short_num(v));
      if (!stacked) {
        svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"lg\">{}</text>", left + w + 4,
                           y + 9, short_num(v));
      }
      if (stacked) x += w;
    }
    if (stacked) {
      double sum = 0;
      for (double v : bars[bi].values) sum += v;
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"lg\">{} {}</text>", x + 4,
                         y0 + row / 2 + 3, short_num(sum), esc(unit));
    }
  }
  const int ly = kT + row * static_cast<int>(bars.size()) + 16;
  for (size_t si = 0; si < series.size(); ++si) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" "
        "class=\"lg\">{}</text>",
        left, ly + 14 * static_cast<int>(si), kColors[si % 8], left + 15,
        ly + 9 + 14 * static_cast<int>(si), esc(series[si]));
  }
  svg += "</svg></figure>";
  return svg;
}

std::string charts_for(const ReportRun& run) {
  const Json& fleet = at_path(run.metrics, {"fleet"});
  std::string html;
  // Utilization and queue depth over time.
  Line offered{"offered GPUs", {}}, busy{"busy GPUs", {}}, queue{"jobs waiting", {}};
  for (const Json& p : at_path(fleet, {"series"})) {
    const double t = num(p["t"]);
    offered.points.emplace_back(t, num(p["offeredGpus"]));
    busy.points.emplace_back(t, num(p["busyGpus"]));
    queue.points.emplace_back(t, num(p["queueDepth"]));
  }
  html += line_chart("GPUs offered and busy over time", {offered, busy}, "GPUs");
  html += line_chart("Queue depth over time (jobs waiting, bucket mean)", {queue}, "jobs");
  // Where the paid GPU-hours went.
  const Json& gh = at_path(fleet, {"gpuHours"});
  const double paid = num(gh["paid"]);
  const double used = num(gh["kept"]) + num(gh["lostToFailures"]) + num(gh["lostToPreemption"]) +
                      num(gh["lostOther"]) + num(gh["inProgress"]);
  html +=
      bar_chart(fmt::format("Where the paid GPU-hours went (goodput {})",
                            format_kpi(fleet["goodput"], "percent")),
                {"work kept", "lost to failures", "lost to preemption", "lost otherwise",
                 "in progress at end", "idle"},
                {Bar{"GPU-hours",
                     {num(gh["kept"]), num(gh["lostToFailures"]), num(gh["lostToPreemption"]),
                      num(gh["lostOther"]), num(gh["inProgress"]), std::max(0.0, paid - used)}}},
                true, "GPU-h");
  // MTTR by phase, automatic vs manual.
  std::vector<Bar> phases;
  for (const char* ph :
       {"detection", "approval", "gates", "waitingForIdle", "repair", "rejoin", "total"}) {
    phases.push_back(Bar{ph,
                         {num(at_path(fleet, {"mttr", "automatic", ph, "meanSeconds"})) / 60,
                          num(at_path(fleet, {"mttr", "manual", ph, "meanSeconds"})) / 60}});
  }
  html += bar_chart("Repair time by phase, mean minutes (succeeded remediations)",
                    {"automatic approval", "approved by a person"}, phases, false, "min");
  // Queueing delay per tenant.
  std::vector<Bar> tenants;
  for (const auto& [name, t] : at_path(fleet, {"tenants"}).items()) {
    tenants.push_back(Bar{name,
                          {num(at_path(t, {"queueingDelay", "p50Seconds"})) / 60,
                           num(at_path(t, {"queueingDelay", "p95Seconds"})) / 60,
                           num(at_path(t, {"queueingDelay", "p99Seconds"})) / 60}});
  }
  if (!tenants.empty()) {
    html += bar_chart("Queueing delay per tenant, minutes", {"p50", "p95", "p99"}, tenants, false,
                      "min");
  }
  return html;
}

}  // namespace

std::vector<KpiRow> kpi_rows(const Json& m) {
  const Json& f = at_path(m, {"fleet"});
  return {
      {"goodput (work kept / GPU-h paid)", at_path(f, {"goodput"}), "percent", true},
      {"GPU utilization (busy / paid)", at_path(f, {"utilization"}), "percent", true},
      {"GPU-hours paid", at_path(f, {"gpuHours", "paid"}), "gpu-h", false},
      {"GPU-hours of work kept", at_path(f, {"gpuHours", "kept"}), "gpu-h", true},
      {"GPU-hours lost to failures", at_path(f, {"gpuHours", "lostToFailures"}), "gpu-h", false},
      {"GPU-hours lost to preemption", at_path(f, {"gpuHours", "lostToPreemption"}), "gpu-h",
       false},
      {"jobs", at_path(f, {"jobs"}), "count", true},
      {"queueing delay p50", at_path(f, {"queueingDelay", "p50Seconds"}), "s", false},
      {"queueing delay p95", at_path(f, {"queueingDelay", "p95Seconds"}), "s", false},
      {"queueing delay p99", at_path(f, {"queueingDelay", "p99Seconds"}), "s", false},
      {"queueing delay p95, 32-64 GPUs",
       at_path(f, {"placement", "queueingDelayBySize", "32-64 GPUs", "p95Seconds"}), "s", false},
      {"gang runs inside one layer-3 block", at_path(f, {"placement", "oneDomainShare", "layer-3"}),
       "percent", true},
      {"preemptions", at_path(f, {"preemptions", "total"}), "count", false},
      {"large-job effective training time",
       at_path(f, {"largeJobs", "meanEffectiveTrainingTimeRatio"}), "percent", true},
      {"faults injected", at_path(f, {"failures", "injected"}), "count", false},
      {"incident MTTR p50", at_path(f, {"mttr", "incidents", "p50Seconds"}), "s", false},
      {"incident MTTR p95", at_path(f, {"mttr", "incidents", "p95Seconds"}), "s", false},
      {"MTTR p50, automatic", at_path(f, {"mttr", "automatic", "total", "p50Seconds"}), "s", false},
      {"MTTR p50, approved by a person", at_path(f, {"mttr", "manual", "total", "p50Seconds"}), "s",
       false},
      {"node-days between incidents",
       at_path(f, {"failures", "meanTimeBetweenIncidentsPerNodeDays"}), "days", true},
      {"remediations failed", at_path(m, {"remediations", "failed"}), "count", false},
      {"suspect hosts found", at_path(f, {"failures", "lemonHostsFoundThatAreLemons"}), "count",
       true},
      {"incidents open at the end", at_path(f, {"mttr", "openAtEnd"}), "count", false},
      {"remediations succeeded", at_path(m, {"remediations", "succeeded"}), "count", true},
      {"remediations auto-approved", at_path(m, {"remediations", "autoApproved"}), "count", true},
      {"cost (USD)", at_path(m, {"billing", "byCluster", "Total"}), "usd", false},
  };
}

std::optional<double> kpi_number(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {  // billing totals are decimal strings
    try {
      return std::stod(value.get<std::string>());
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string format_kpi(const Json& value, const std::string& unit) {
  const std::optional<double> number = kpi_number(value);
  if (!number) return "-";
  const double v = *number;
  if (unit == "percent") return fmt::format("{:.1f}%", v * 100);
  if (unit == "gpu-h") return fmt::format("{:.1f} GPU-h", v);
  if (unit == "s") return format_duration(seconds(static_cast<int64_t>(std::llround(v))));
  if (unit == "usd") return fmt::format("{:.2f}", v);
  if (unit == "days") return fmt::format("{:.1f} d", v);
  return fmt::format("{:.0f}", v);
}

std::string format_kpi_delta(const Json& base, const Json& value, const std::string& unit) {
  const auto a = kpi_number(base), b = kpi_number(value);
  if (!a || !b) return "-";
  // A change that rounds to nothing shows as 0, without a sign.
  if (unit == "percent") {
    const double pts = (*b - *a) * 100;
    return std::fabs(pts) < 0.05 ? "0 pts" : fmt::format("{:+.1f} pts", pts);
  }
  if (*a == 0) return *b == 0 ? "0" : "new";
  const double pct = (*b - *a) / std::fabs(*a) * 100;
  return std::fabs(pct) < 0.05 ? "0%" : fmt::format("{:+.1f}%", pct);
}

namespace {
std::string seed_table_html(const std::vector<std::vector<std::string>>& t);
std::string kpi_table_html(const std::vector<ReportRun>& runs);
}  // namespace

std::string render_report(const std::vector<ReportRun>& runs,
                          const std::vector<std::vector<std::string>>* seeds) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>gpufleet simulation report</title><style>"
      "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#222;"
      "padding:0 12px}h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid "
      "#ddd}table{border-collapse:collapse;margin:12px 0}td,th{padding:4px 10px;border-bottom:1px "
      "solid #eee;text-align:right}td:first-child,th:first-child{text-align:left}"
      "figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:4px}svg{width:100%;"
      "height:auto;background:#fcfcfc;border:1px solid #eee}.grid{stroke:#e4e4e4}.axis{stroke:#999}"
      ".yl{font-size:11px;text-anchor:end;fill:#555}.xl{font-size:11px;text-anchor:middle;"
      "fill:#555}.al{font-size:11px;fill:#555}.lg{font-size:11px;fill:#333}.better{color:#1a7f37}"
      ".worse{color:#c62828}@media(prefers-color-scheme:dark){body{background:#16181c;color:#ddd}"
      "svg{background:#1d2026;border-color:#333}.lg,.yl,.xl,.al{fill:#bbb}td,th{border-color:#333}"
      "}</style></head><body>\n";
  html += "<h1>gpufleet simulation report</h1>\n";
  const Json& first = runs.front().metrics;
  html += fmt::format("<p>Scenario <b>{}</b>, seed {}, simulated to {} ({}).</p>\n",
                      esc(first.value("scenario", "")), first.value("seed", 0),
                      esc(first.value("until", "")), esc(first.value("EventTime", "")));
  if (seeds != nullptr && !seeds->empty()) {
    html += seed_table_html(*seeds);
  } else {
    html += kpi_table_html(runs);
  }
  for (const auto& r : runs) {
    if (runs.size() > 1)
      html += "<h2>" + esc(r.label) + "</h2>\n";
    else
      html += "<h2>Charts</h2>\n";
    html += charts_for(r) + "\n";
  }
  html +=
      "<p><small>Written by gpufleet simulate; the numbers are those of metrics.json "
      "(docs/scenarios.md explains each).</small></p>\n</body></html>\n";
  return html;
}

namespace {

std::string seed_table_html(const std::vector<std::vector<std::string>>& t) {
  std::string html =
      "<h2>Fleet KPIs</h2><p>Mean and 95 % interval over the seeds; &Delta;: the paired "
      "difference from the first variant (same seed), mean [95 % interval].</p><table>";
  for (size_t r = 0; r < t.size(); ++r) {
    html += "<tr>";
    for (const std::string& cell : t[r])
      html += (r == 0 ? "<th>" : "<td>") + esc(cell) + (r == 0 ? "</th>" : "</td>");
    html += "</tr>\n";
  }
  return html + "</table>\n";
}

std::string kpi_table_html(const std::vector<ReportRun>& runs) {
  const Json& first = runs.front().metrics;
  std::string html;
  // The KPI table: one column per run, and the change from the first.
  html += "<h2>Fleet KPIs</h2><table><tr><th>KPI</th>";
  for (const auto& r : runs) html += "<th>" + esc(r.label) + "</th>";
  if (runs.size() > 1) {
    for (size_t i = 1; i < runs.size(); ++i) html += "<th>&Delta; " + esc(runs[i].label) + "</th>";
  }
  html += "</tr>\n";
  const std::vector<KpiRow> base = kpi_rows(first);
  std::vector<std::vector<KpiRow>> all;
  for (const auto& r : runs) all.push_back(kpi_rows(r.metrics));
  for (size_t k = 0; k < base.size(); ++k) {
    html += "<tr><td>" + esc(base[k].label) + "</td>";
    for (const auto& rows : all)
      html += "<td>" + esc(format_kpi(rows[k].value, rows[k].unit)) + "</td>";
    for (size_t i = 1; i < all.size(); ++i) {
      const std::string d = format_kpi_delta(base[k].value, all[i][k].value, base[k].unit);
      const bool up = !d.empty() && d[0] == '+';
      const bool down = !d.empty() && d[0] == '-' && d != "-";
      const char* cls = (up || down) ? ((up == base[k].higher_is_better) ? "better" : "worse") : "";
      html += fmt::format("<td class=\"{}\">{}</td>", cls, esc(d));
    }
    html += "</tr>\n";
  }
  html += "</table>\n";
  return html;
}

}  // namespace

}  // namespace gf
