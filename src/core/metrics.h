// A small Prometheus-text metrics registry. Counters and histograms are lock-free to update;
// labelled families take a mutex only to find or create a series.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gf {

class Counter {
 public:
  void inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Cumulative buckets in seconds, observed in nanoseconds to stay in integers.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds_seconds);
  void observe_nanos(int64_t nanos);
  std::string render(const std::string& name, const std::string& labels) const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> bounds_nanos_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_nanos_{0};
};

class Metrics {
  struct Family;

 public:
  Metrics();

  Counter& counter(const std::string& name, const std::string& help,
                   const std::string& labels = "");
  Gauge& gauge(const std::string& name, const std::string& help, const std::string& labels = "");
  Histogram& histogram(const std::string& name, const std::string& help,
                       const std::string& labels = "");

  // Prometheus text exposition format 0.0.4.
  std::string render() const;

  // Well-known series, created once (after mu_ and families_, which they need).
 private:
  struct Family {
    std::string help;
    std::string type;
    std::map<std::string, std::unique_ptr<Counter>> counters;
    std::map<std::string, std::unique_ptr<Gauge>> gauges;
    std::map<std::string, std::unique_ptr<Histogram>> histograms;
  };
  Family& family(const std::string& name, const std::string& help, const std::string& type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;

 public:
  Counter& loop_batches;
  Counter& events_appended;
  Histogram& append_latency;
  Histogram& controller_latency;
  Counter& snapshots;
  Histogram& snapshot_latency;
  Counter& journal_compacted_events;
};

// Escapes a label value per the exposition format.
std::string prometheus_label(const std::string& key, const std::string& value);

}  // namespace gf
