// Wires one control plane together: control loop, controllers (provisioning), drivers (the
// simulated cloud) and the API, over a given clock and journal. `serve` runs it on a real (or
// sped-up) clock in thread mode; `simulate` and the scenario tests run it on a virtual clock in
// manual mode. Same wiring both ways, so what the tests see is what `serve` does.
#pragma once

#include <memory>

#include "api/api.h"
#include "cloud/sim/sim_cloud.h"
#include "core/random.h"
#include "dispatch/scheduling_controller.h"
#include "dispatch/workload_controller.h"
#include "healing/remediation_controller.h"
#include "journal/journal.h"
#include "loop/control_loop.h"
#include "notify/webhook_driver.h"
#include "provision/provisioner.h"

namespace gf {

struct RuntimeOptions {
  uint64_t seed = 1;
  LoopOptions loop;
  ProvisionOptions provision;
  sched::SchedulerOptions scheduler;
  SimCloudConfig cloud;
  healing::HealingOptions healing;
  ApiOptions api;
  const Catalog* catalog = nullptr;  // null = the built-in catalog
};

class Runtime {
 public:
  Runtime(RuntimeOptions options, Clock& clock, Journal& journal);

  // Rebuilds state from the journal and the simulated cloud's bookkeeping from the state.
  Status recover();

  ControlLoop& loop() { return loop_; }
  Api& api() { return api_; }
  Provisioner& provisioner() { return provisioner_; }
  SchedulingController& scheduling() { return scheduling_; }
  SchedulingCache& scheduling_cache() { return scheduling_cache_; }
  SimCloud& cloud() { return cloud_; }
  healing::RemediationController& remediation() { return remediation_; }
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
  healing::RemediationController remediation_;
  SimCloud cloud_;
  std::unique_ptr<WebhookDriver> webhook_;
  Api api_;
};

}  // namespace gf
