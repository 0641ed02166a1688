// The simulated cloud (docs/architecture.md): instance types with capacity over time, launch
// latency, lifecycle duration and injected launch outcomes, deterministic for a scenario. It runs
// launch/terminate intents and reports outcomes at the simulated times they happen through a
// callback that queues them as loop requests (so it works on a virtual clock and in `serve`).
// Called only on the loop thread (intents and report callbacks both run there).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cloud/cloud_driver.h"
#include "core/clock.h"
#include "core/json.h"
#include "loop/controller.h"
#include "model/cloud_ops.h"
#include "model/cluster.h"
#include "model/topology.h"

namespace gf {

struct SimCloudConfig {
  Duration launch_latency = minutes(4);      // launch request -> instance up, lifecycle starts
  Duration lifecycle_duration = minutes(6);  // lifecycle script run time
  Duration failure_latency = seconds(30);    // launch request -> capacity error
  Duration terminate_latency = minutes(1);   // terminate request -> instance gone
  // Remediation actions (docs/remediation.md) and burn-in of freed hosts (docs/remediation.md).
  Duration reboot_duration = minutes(5);
  Duration reprovision_duration = minutes(15);
  Duration migrate_duration = minutes(20);
  Duration delete_duration = minutes(2);
  Duration burn_in_duration = minutes(30);
  Duration software_update_duration = minutes(10);  // one node's update (UpdateClusterSoftware)
  struct BurnIn {
    std::string outcome = "pass";  // pass | fail | interrupted
    std::string check = "nccl";    // the check that fails (gpu, nccl, infiniband, storage)
  };
  std::vector<BurnIn> burn_ins;  // outcomes of successive burn-ins; afterwards every one passes
  // Instances of a type the cloud can give at once (in use + free). Unlisted types: unlimited.
  std::map<std::string, int64_t> capacity;
  struct Change {
    Duration at;  // since the simulation epoch
    std::map<std::string, int64_t> capacity;
  };
  std::vector<Change> changes;  // sorted by `at`
  struct Fault {
    std::string group;
    int64_t attempt = 0;  // the group's 1-based launch attempt
    LaunchOutcome outcome = LaunchOutcome::kOk;
  };
  std::vector<Fault> faults;
  Time epoch = kSimEpoch;  // `changes[i].at` counts from here
  // Network topology labels of accelerated instances (docs/scheduling.md "Topology"); off when
  // nodes_per_block is 0.
  TopologyLayout topology;

  // The `cloud:` block of a scenario (docs/scenarios.md). Errors name the field path.
  static Result<SimCloudConfig> from_json(const Json& j, const std::string& path = "cloud");
};

class SimCloud final : public CloudDriver {
 public:
  SimCloud(SimCloudConfig config, const Clock& clock, ReportFn report);

  // CloudDriver.
  void execute(const Intent& intent) override;
  // Instances the state shows as up hold capacity again.
  void rebuild(const std::map<std::string, ClusterPtr, std::less<>>& clusters) override;
  // nullopt when a spare instance of `type` is free now (reprovision and migrate need one).
  std::optional<std::string> spare(const std::string& type) const override;
  // Capacity `changes` count from here.
  void started(Time now) override { config_.epoch = now; }

  int64_t capacity_at(const std::string& type, Time t) const;  // -1 = unlimited
  int64_t in_use(const std::string& type) const;

 private:
  void launch(const LaunchOp& op);
  void terminate(const TerminateOp& op);
  void remediate(const Intent& intent);
  void burn_in(const Intent& intent);
  void update_software(const UpdateSoftwareOp& op);
  std::optional<LaunchOutcome> injected(const LaunchOp& op) const;
  void settle(Time now);  // applies releases that are due

  SimCloudConfig config_;
  const Clock& clock_;
  ReportFn report_;
  std::map<std::string, int64_t> in_use_;
  std::map<std::string, std::string> holding_;        // instance id -> type, for capacity held
  std::multimap<Time, std::string> pending_release_;  // termination time -> type
  size_t burn_ins_done_ = 0;
  TopologySlots slots_{TopologyLayout{}};
};

// The factory the runtime takes (docs/architecture.md "Cloud drivers").
CloudDriverFactory sim_cloud(SimCloudConfig config);

}  // namespace gf
