// The controller of one real Slurm cluster (docs/slurm.md): what gpufleet reads from slurmctld
// and asks of it. An interface, so that the CLI tools and libslurm are two ways to the same
// contract (tests/integration/slurm_control_test.cpp runs the contract against a real
// slurmctld); SlurmCli is the one built today.
//
// Drivers only: a controller never calls this (DESIGN: no I/O in the core). Every call blocks for
// at most the timeout it was built with.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "orchestrator/slurm/slurm_state.h"

namespace gf::slurm {

// One batch allocation: `nodes` nodes of `partition` at once (a gang by construction), running
// `script` (a shell script body) on the first of them, as `sbatch -N`.
struct BatchJob {
  std::string name;
  int32_t nodes = 1;
  std::string partition;  // "" = the default partition
  std::string nodelist;   // exactly these nodes (sbatch -w, a hostlist); "" = Slurm chooses
  std::string script;
  std::string work_dir;  // "" = the caller's
  std::string output;    // its stdout and stderr; "" = Slurm's default (slurm-<id>.out)
  std::vector<std::pair<std::string, std::string>> env;  // exported to the job
};

class SlurmControl {
 public:
  virtual ~SlurmControl() = default;

  // Every node the controller knows and shows (FUTURE nodes are hidden), one record per node.
  virtual Result<std::vector<NodeState>> nodes() = 0;
  // Every job the controller still holds (finished ones for MinJobAge).
  virtual Result<std::vector<JobState>> jobs() = 0;

  // State=DRAIN with `reason`: running jobs go on, nothing new starts there.
  virtual Status drain(const std::string& node, const std::string& reason) = 0;
  // State=RESUME: a drained (or DOWN) node takes work again.
  virtual Status resume(const std::string& node) = 0;
  // State=DOWN with `reason`: its jobs are requeued or fail, as their requeue setting says.
  virtual Status down(const std::string& node, const std::string& reason) = 0;
  // The node leaves the cluster (its instance is gone): DOWN with `reason`, then FUTURE, which
  // hides it until a slurmd of that name registers again (docs/slurm.md "Nodes joining").
  virtual Status retire(const std::string& node, const std::string& reason) = 0;

  // Submits the allocation; its job id.
  virtual Result<int64_t> submit(const BatchJob& job) = 0;
  virtual Status cancel(int64_t job) = 0;
  // Back to PENDING (its nodes released), to run again.
  virtual Status requeue(int64_t job) = 0;

  // Re-reads slurm.conf (partitions changed; a node added needs a restart, docs/slurm.md).
  virtual Status reconfigure() = 0;
};

// Through Slurm's client tools (sinfo, squeue, scontrol, sbatch, scancel) with SLURM_CONF set to
// the cluster's slurm.conf. Reads use the tools' JSON output (slurm_state.h).
class SlurmCli final : public SlurmControl {
 public:
  explicit SlurmCli(std::string slurm_conf,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20));

  Result<std::vector<NodeState>> nodes() override;
  Result<std::vector<JobState>> jobs() override;
  Status drain(const std::string& node, const std::string& reason) override;
  Status resume(const std::string& node) override;
  Status down(const std::string& node, const std::string& reason) override;
  Status retire(const std::string& node, const std::string& reason) override;
  Result<int64_t> submit(const BatchJob& job) override;
  Status cancel(int64_t job) override;
  Status requeue(int64_t job) override;
  Status reconfigure() override;

 private:
  // Runs a client tool; its output, or an error naming the command and what it printed.
  Result<std::string> tool(std::vector<std::string> argv,
                           std::vector<std::pair<std::string, std::string>> env = {});
  Status update_node(const std::string& node, const std::string& state, const std::string& reason);

  std::string conf_;
  std::chrono::milliseconds timeout_;
};

// A node or partition name Slurm accepts and no shell or scontrol argument can be smuggled
// through: letters, digits, '-', '_', '.', at most 64 characters.
Status check_slurm_name(std::string_view what, std::string_view name);

}  // namespace gf::slurm
