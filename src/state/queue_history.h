// Queue depth over time (GET /v1/history/queues, the console's Quotas page). The scheduler cache
// adds a sample of every quota node's pending and admitted counts when it publishes, at most once
// per interval of model time, and keeps the newest `keep`. Working memory, not state: it starts
// again when the server starts (docs/console.md). One log is shared by every published view;
// readers copy what they ask for under its lock, so adding a sample never copies the history.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/time.h"

namespace gf {

struct QueueSample {
  Time at{};
  std::shared_ptr<const std::vector<std::string>> nodes;  // quota node names (shared while equal)
  std::vector<int64_t> pending;                           // per node, in `nodes` order
  std::vector<int64_t> admitted;
};

class QueueHistoryLog {
 public:
  QueueHistoryLog(Duration interval, size_t keep) : interval_(interval), keep_(keep) {}

  Duration interval() const { return interval_; }
  // Whether a sample at `at` is due: none yet, or the newest is `interval` old.
  bool due(Time at) const {
    std::lock_guard lock(mu_);
    return samples_.empty() || at - samples_.back().at >= interval_;
  }
  void add(QueueSample s) {
    std::lock_guard lock(mu_);
    samples_.push_back(std::move(s));
    if (samples_.size() > keep_) samples_.pop_front();
  }
  // The samples at or after `since`, oldest first.
  std::vector<QueueSample> since(Time since) const {
    std::lock_guard lock(mu_);
    std::vector<QueueSample> out;
    for (const QueueSample& s : samples_)
      if (s.at >= since) out.push_back(s);
    return out;
  }

 private:
  const Duration interval_;
  const size_t keep_;
  mutable std::mutex mu_;
  std::deque<QueueSample> samples_;
};

}  // namespace gf
