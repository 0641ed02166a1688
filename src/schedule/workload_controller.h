// The workload controller (docs/dispatch.md): watches the PyTorchJobs the fleet dispatched and
// records what time decides for them — failover when a job's pods could not run on its member
// cluster for tolerationSeconds, removal of copies left by a Gracefully failover once the new
// placement runs (or gracePeriodSeconds pass), activeDeadlineSeconds, and deletion after
// ttlSecondsAfterFinished. Placement itself is the scheduling controller's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loop/controller.h"
#include "schedule/scheduling_cache.h"

namespace gf {

// Looks only at workloads whose deadline (FleetState::workload_deadlines) has come: no scan of
// every job per batch.
class WorkloadController : public Controller {
 public:
  // Reads the scheduler cache: a job fails over only while the scheduler holds it.
  explicit WorkloadController(SchedulingCache& cache) : cache_(cache) {}
  std::string_view name() const override { return "workloads"; }
  ControllerDecision decide(const FleetState& state, Time now) override;

 private:
  SchedulingCache& cache_;
};

// Whether a workload may restart after an interrupt failed the pods of `failed_roles`
// (docs/dispatch.md): nullopt when it may; otherwise why not (a failed pod's restartPolicy is
// Never, or runPolicy.backoffLimit restarts are used up). Node loss counts as a retryable failure
// for ExitCode (Kubeflow treats the SIGKILL exit code 137 as retryable).
std::optional<std::string> restart_refusal(const Job& job,
                                           const std::vector<std::string>& failed_roles);

}  // namespace gf
