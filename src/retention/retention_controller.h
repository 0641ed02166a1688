// Retention (docs/operations.md "What is kept where"): the control plane's memory holds what is
// alive, not its history. A finished job leaves the hot state `job_retention` after it stopped
// (AWS Batch answers for a job up to 7 days after it ends; Slurm's controller forgets one after
// MinJobAge), into the journal's history table; user events older than `event_retention` leave
// the event log. One retention.applied event records each step, so a replay or a follower drops
// exactly what the leader dropped.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/time.h"
#include "loop/controller.h"

namespace gf {

struct RetentionOptions {
  Duration job_retention = std::chrono::hours(24 * 7);
  Duration event_retention = std::chrono::hours(24 * 7);
  // Jobs one retention.applied event retires (a backlog takes several batches, each bounded).
  size_t max_jobs_per_event = 1000;
};

class RetentionController final : public Controller {
 public:
  explicit RetentionController(RetentionOptions options) : options_(options) {}
  std::string_view name() const override { return "retention"; }
  ControllerDecision decide(const FleetState& state, Time now) override;

 private:
  RetentionOptions options_;
};

}  // namespace gf
