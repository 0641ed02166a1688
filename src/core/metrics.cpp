#include "core/metrics.h"

#include <cstdio>

#include <fmt/format.h>

#include "core/result.h"

namespace gf {

namespace {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string series(const std::string& name, const std::string& labels) {
  return labels.empty() ? name : name + "{" + labels + "}";
}

std::vector<double> default_latency_buckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
}

}  // namespace

std::string prometheus_label(const std::string& key, const std::string& value) {
  std::string out = key + "=\"";
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

Histogram::Histogram(std::vector<double> upper_bounds_seconds)
    : bounds_(std::move(upper_bounds_seconds)),
      buckets_(new std::atomic<uint64_t>[bounds_.size()]) {
  for (double b : bounds_) bounds_nanos_.push_back(static_cast<int64_t>(b * 1e9));
  for (size_t i = 0; i < bounds_.size(); ++i) buckets_[i].store(0);
}

void Histogram::observe_nanos(int64_t nanos) {
  for (size_t i = 0; i < bounds_nanos_.size(); ++i) {
    if (nanos <= bounds_nanos_[i]) buckets_[i].fetch_add(1, std::memory_order_relaxed);
  }
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(nanos < 0 ? 0 : nanos), std::memory_order_relaxed);
}

std::string Histogram::render(const std::string& name, const std::string& labels) const {
  std::string out;
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < bounds_.size(); ++i) {
    out += fmt::format("{}_bucket{{{}{}{}}} {}\n", name, labels, sep,
                       prometheus_label("le", format_double(bounds_[i])),
                       buckets_[i].load(std::memory_order_relaxed));
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, count());
  out += series(name + "_sum", labels) + " " +
         format_double(static_cast<double>(sum_nanos_.load()) / 1e9) + "\n";
  out += fmt::format("{} {}\n", series(name + "_count", labels), count());
  return out;
}

Metrics::Metrics()
    : loop_batches(counter("gpufleet_loop_batches_total", "Control-loop batches processed.")),
      events_appended(
          counter("gpufleet_journal_events_appended_total", "Events appended to the journal.")),
      append_latency(histogram("gpufleet_journal_append_seconds",
                               "Latency of one journal append (one transaction per batch).")),
      controller_latency(histogram("gpufleet_controller_seconds",
                                   "Time the controllers spent deciding, per loop batch.")),
      snapshots(counter("gpufleet_journal_snapshots_total", "Snapshots the loop saved.")),
      snapshot_latency(histogram("gpufleet_journal_snapshot_seconds",
                                 "Time one snapshot took from the state's image to its save.")),
      journal_compacted_events(counter("gpufleet_journal_compacted_events_total",
                                       "Events compaction removed from the live journal.")) {}

Metrics::Family& Metrics::family(const std::string& name, const std::string& help,
                                 const std::string& type) {
  auto [it, inserted] = families_.try_emplace(name);
  if (inserted) {
    it->second.help = help;
    it->second.type = type;
  }
  return it->second;
}

Counter& Metrics::counter(const std::string& name, const std::string& help,
                          const std::string& labels) {
  std::lock_guard lock(mu_);
  auto& slot = family(name, help, "counter").counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Metrics::gauge(const std::string& name, const std::string& help, const std::string& labels) {
  std::lock_guard lock(mu_);
  auto& slot = family(name, help, "gauge").gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Metrics::histogram(const std::string& name, const std::string& help,
                              const std::string& labels) {
  std::lock_guard lock(mu_);
  auto& slot = family(name, help, "histogram").histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(default_latency_buckets());
  return *slot;
}

std::string Metrics::render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, fam] : families_) {
    out += "# HELP " + name + " " + fam.help + "\n";
    out += "# TYPE " + name + " " + fam.type + "\n";
    for (const auto& [labels, c] : fam.counters) {
      out += fmt::format("{} {}\n", series(name, labels), c->value());
    }
    for (const auto& [labels, g] : fam.gauges) {
      out += fmt::format("{} {}\n", series(name, labels), g->value());
    }
    for (const auto& [labels, h] : fam.histograms) out += h->render(name, labels);
  }
  // Process-wide, so not a family of this registry (core/result.h).
  out +=
      "# HELP gpufleet_internal_check_failures_total Internal checks (GF_CHECK_OK) that failed.\n";
  out += "# TYPE gpufleet_internal_check_failures_total counter\n";
  out += fmt::format("gpufleet_internal_check_failures_total {}\n", check_ok_failures());
  return out;
}

}  // namespace gf
