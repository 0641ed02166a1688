// A pod of a gang placed on a real Slurm cluster (docs/slurm.md "Gangs as allocations"): the gang
// is one `sbatch -N <nodes> -w <its nodes> -p <partition>` allocation, submitted once by the
// agent of the node of the gang's first pod; every pod's agent writes the script its pod runs on
// its node (every container's command and environment) and mirrors the allocation's state into
// its pod's status by slurm_pod_phase (docs/slurm.md "States": Running only once the allocation
// RUNS and the pod's command started on its node; a held launch failure is Failed, and its
// allocation cancelled). Deleting or preempting the job cancels the allocation (scancel).
//
// In the cluster's Slurm directory: jobs/<allocation name>/
//   gang.sh            what the allocation runs on each node (srun, one task per node)
//   <node>/<pod>.sh    a pod's containers; <node>/expected: how many pods run on that node
//   <node>/<pod>.started    created by the pod's script when it starts
//   jobid              the Slurm job id, once submitted (the submitter writes it)
#pragma once

#include <optional>
#include <string>

#include "core/json.h"
#include "core/result.h"
#include "core/time.h"
#include "orchestrator/slurm/slurm_control.h"

namespace gf::agent {

// The "Slurm" object of a pod spec the server sends for a Slurm cluster.
struct SlurmPodSpec {
  std::string allocation;  // the Slurm job name: gf-<job id>-<placement>
  std::string nodes;       // the gang's nodes as a hostlist
  int64_t node_count = 0;
  std::string partition;
  std::string node_name;  // this pod's node
  int64_t pods_on_node = 1;
  bool submitter = false;
  static Result<std::optional<SlurmPodSpec>> from_pod(const Json& pod);
};

class SlurmPod {
 public:
  // `pod`: the pod spec; `log`: the file its output goes to (the pod's container log).
  SlurmPod(SlurmPodSpec spec, std::string slurm_dir, const Json& pod, std::string log);

  // Writes the pod's script, submits the allocation (submitter), and reads its state (at most
  // every 2 s). Never blocks longer than one client tool.
  void step(Time now);
  // scancel the allocation (every pod's agent does: the submitter's node may be gone).
  void cancel();

  // Phase, ExitCode, Message: what the pod's status says.
  std::string phase() const { return phase_; }
  int exit_code() const { return exit_code_; }
  const std::string& message() const { return message_; }

 private:
  Status write_script();
  Status submit();
  std::optional<int64_t> job_id() const;
  // The file the pod's script creates when it starts on its node (its step started).
  std::string started_marker() const;

  SlurmPodSpec spec_;
  std::string dir_;  // jobs/<allocation>
  std::string conf_;
  Json pod_;
  std::string log_;
  slurm::SlurmCli cli_;
  bool written_ = false;
  std::optional<Time> next_poll_;
  std::string phase_ = "Pending";
  int exit_code_ = 0;
  std::string message_;
};

}  // namespace gf::agent
