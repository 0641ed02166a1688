// Fleet KPIs of a simulation (docs/scenarios.md "Fleet KPIs"): goodput and where the lost
// GPU-hours went, effective training time of the large jobs, utilization and queue depth over
// time, queueing delay per tenant, preemptions, MTTR split by phase and by who approved, mean time
// between incidents and the lemon hosts found, cost per tenant. Computed from the final state and
// the jobs that left it earlier (retention), as each left (the jobs' runs carry the lost-work
// model: docs/scenarios.md "Lost work"), and from the offered GPUs the journal replay integrates;
// nothing here reads a clock.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/json.h"
#include "core/time.h"
#include "sim/failure_model.h"
#include "state/fleet_state.h"

namespace gf {

// GPUs the job's pods hold: whole-node pod sets count their instance type's GPUs, others their
// nvidia.com/gpu requests (as quantities).
int64_t job_gpus(const Job& job);

struct JobTotals;

class FleetKpis {
 public:
  // Time series over [start, end) in `buckets` equal buckets (at least one minute each).
  FleetKpis(Time start, Time end, size_t buckets = 240);
  ~FleetKpis();

  // A job that left the hot state (retention, docs/operations.md): its part of every figure is
  // kept here, as compute() would have counted it from the final state.
  void add_retired(const Job& job);

  // Offered GPUs (Running instances' GPUs) held constant over [from, to).
  void add_offered(Time from, Time to, double gpus);

  // The `fleet` object of metrics.json. `paid_gpu_hours`: GPUs of Running instances integrated
  // (what the fleet paid for); `failures` may be null (no failure model).
  Json compute(const FleetView& view, double paid_gpu_hours, const FailureInjector* failures) const;

  // GPU-hours of the offered series (equals the replay's total).
  double offered_gpu_hours() const;

 private:
  size_t bucket_of(Time t) const;
  void spread(std::vector<double>& series, Time from, Time to, double weight) const;

  Time start_, end_;
  Duration width_{};
  size_t buckets_ = 0;
  std::vector<double> offered_us_;  // GPU·µs per bucket
  std::unique_ptr<JobTotals> retired_;
  JobTotals& retired_totals();
};

}  // namespace gf
