// The scheduling controller: runs the scheduler's passes inside the control loop and records
// what they decide as job events (admitted, preempted, interrupted), moves admitted gangs to
// RUNNING, and ends simulated jobs whose duration is over. Level-triggered: a pass runs when the
// scheduler's inputs changed (jobs, quota, nodes) or a backoff/hold ends.
#pragma once

#include <optional>

#include "loop/controller.h"
#include "schedule/scheduling_cache.h"

namespace gf {

class SchedulingController : public Controller {
 public:
  // `cache` is the scheduler's working memory, which the loop also keeps in step (an observer);
  // the controller gives it `options` (they survive the cache's restore()).
  // `simulated_runs`: a job ends when its duration (gpufleet.io/duration) has run, as on the
  // simulated cloud; false when pods are real processes, whose exits end their jobs
  // (docs/local-cloud.md).
  explicit SchedulingController(SchedulingCache& cache, sched::SchedulerOptions options = {},
                                bool simulated_runs = true)
      : cache_(cache), simulated_runs_(simulated_runs) {
    cache_.set_options(options);
  }
  std::string_view name() const override { return "scheduler"; }
  ControllerDecision decide(const FleetState& state, Time now) override;

  // Passes run so far (metrics, tests).
  int64_t passes() const { return passes_; }

 private:
  SchedulingCache& cache_;
  bool simulated_runs_ = true;
  uint64_t seen_generation_ = 0;
  std::optional<Time> wake_;
  int64_t passes_ = 0;
};

}  // namespace gf
