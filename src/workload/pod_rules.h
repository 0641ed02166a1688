// What real pods decide for their job (docs/local-cloud.md "Pods and jobs"), as Kubeflow's
// training operator decides it for a PyTorchJob and AWS Batch for a service job. Pure: the job
// with its pods' states in, the verdict out.
#pragma once

#include <optional>
#include <string>

#include "model/job.h"

namespace gf::workload {

struct PodVerdict {
  JobStatus status = JobStatus::kFailed;  // kSucceeded or kFailed
  std::string reason;
};

// nullopt while the job goes on. Otherwise its end:
//  - a pod Failed (its node will not restart it: restartPolicy Never, or ExitCode with a
//    permanent exit code, 1-127) fails the job;
//  - restarts on the nodes, summed over its pods, above runPolicy.backoffLimit fail it;
//  - a PyTorchJob with a Master succeeds when the master pod succeeded (Kubeflow's default
//    success policy; its workers are then stopped), one without when every worker succeeded; a
//    service job when its pod succeeded.
// Pods of the job that no agent reported yet count as Pending.
std::optional<PodVerdict> pod_verdict(const Job& job);

// A pod of a gang on a real Slurm cluster failed (its allocation ended badly, or Slurm could not
// launch it, docs/slurm.md "States"): no node restarts it, so its role's restartPolicy decides
// for the whole gang. The message of the restart (a new placement, a new allocation) when
// Always or OnFailure, or ExitCode with a retryable code (128 and up), within
// runPolicy.backoffLimit; nullopt when the job fails instead (Never, a permanent exit code, the
// limit reached, or not a PyTorchJob). A gang on simulated nodes (no agent restarts their pods:
// a scenario's fault that ends the run, docs/scenarios.md "Failures") follows the same rule;
// `where` names the place in the message ("in Slurm").
std::optional<std::string> slurm_gang_restart(const Job& job, const std::string& pod,
                                              const PodState& state,
                                              std::string_view where = "in Slurm");

// The pod names of the job's current placement, in pod-set order ("<job>-<role>-<index>").
std::vector<std::string> pod_names(const Job& job);

// Whether a container exit code is retryable under restartPolicy ExitCode (Kubeflow: 128 and up,
// a signal such as SIGKILL from the node or the OOM killer, is retryable; 1-127 is permanent).
inline bool retryable_exit_code(int32_t code) { return code >= 128; }

}  // namespace gf::workload
