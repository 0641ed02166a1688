// Wires one control plane together: control loop, the scheduler cache, controllers
// (provisioning, scheduling, workloads, remediation), drivers (a cloud driver, webhooks) and the
// API, over a given clock and journal. `serve` runs it on a real (or
// sped-up) clock in thread mode; `simulate` and the scenario tests run it on a virtual clock in
// manual mode. Same wiring both ways, so what the tests see is what `serve` does.
#pragma once

#include <memory>

#include "api/api.h"
#include "cloud/cloud_driver.h"
#include "core/random.h"
#include "journal/journal.h"
#include "loop/control_loop.h"
#include "notify/webhook_driver.h"
#include "provision/provisioner.h"
#include "remediate/remediation_controller.h"
#include "retention/retention_controller.h"
#include "schedule/scheduling_controller.h"
#include "schedule/workload_controller.h"

namespace gf {

struct RuntimeOptions {
  uint64_t seed = 1;
  LoopOptions loop;
  ProvisionOptions provision;
  sched::SchedulerOptions scheduler;
  // Makes the cloud driver (required): cloud/sim's sim_cloud(config) for the simulated cloud,
  // cloud/local's local_cloud(config) for real instances.
  CloudDriverFactory cloud;
  // The cloud's instances are real processes that run real pods (the local cloud): jobs end when
  // their pods exit, not after a simulated duration. Must agree with `cloud`.
  bool real_instances = false;
  remediate::HealingOptions healing;
  ApiOptions api;
  const Catalog* catalog = nullptr;  // null = the built-in catalog
  // What leaves the hot state and when (docs/operations.md "What is kept where"); none = keep
  // everything in memory (tests that look at a finished job weeks later).
  std::optional<RetentionOptions> retention = RetentionOptions{};
};

class Runtime {
 public:
  Runtime(RuntimeOptions options, Clock& clock, Journal& journal);

  // Rebuilds state from the journal and the cloud driver's bookkeeping from the state.
  Status recover();

  ControlLoop& loop() { return loop_; }
  Api& api() { return api_; }
  Provisioner& provisioner() { return provisioner_; }
  SchedulingController& scheduling() { return scheduling_; }
  SchedulingCache& scheduling_cache() { return scheduling_cache_; }
  CloudDriver& cloud() { return *cloud_; }
  remediate::RemediationController& remediation() { return remediation_; }
  // Stops the webhook worker (before the loop goes away).
  void stop_drivers();
  Metrics& metrics() { return metrics_; }
  Random& random() { return random_; }

 private:
  RuntimeOptions options_;
  Clock& clock_;
  Metrics metrics_;
  Random random_;
  ControlLoop loop_;
  Provisioner provisioner_;
  SchedulingCache scheduling_cache_;
  SchedulingController scheduling_;
  WorkloadController workloads_;
  void wire_loop(Journal& journal);
  void wire_api_and_drivers();
  // Wait-for-idle on a real Slurm cluster's compute node (docs/slurm.md).
  std::optional<std::string> slurm_not_idle_of(const FleetState& s,
                                               const remediate::Remediation& r) const;
  remediate::RemediationController remediation_;
  std::optional<RetentionController> retention_;
  std::unique_ptr<CloudDriver> cloud_;
  std::unique_ptr<WebhookDriver> webhook_;
  Api api_;
};

}  // namespace gf
