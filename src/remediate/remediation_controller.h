// The health controller (docs/remediation.md): fires pending alerts when their persistence window
// has passed, brings recurring simulated faults back, hands alerts to the webhook driver, proposes
// remediations for firing alerts by policy, and runs each approved remediation through its
// safety gates (cooldown, circuit breaker, one per node pool, concurrency cap, spare capacity)
// and its steps: cordon → wait for idle (or the policy's max wait) → drain → act through the
// cloud driver → rejoin once the node's health checks pass. Freed hosts go through burn-in.
// Level-triggered: everything it needs is in the state, so after a restart it carries on.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "health/node_signals.h"
#include "loop/controller.h"
#include "model/cloud_ops.h"
#include "remediate/engine.h"

namespace gf::remediate {

struct HealingOptions {
  std::string webhook_url;             // every alert's firing and resolution, unchanged
  std::string support_webhook_url;     // alerts with no remediation mapped
  Duration rejoin_check = minutes(2);  // health checks after the action, before uncordon
  Duration delivery_retry_base = seconds(5);
  Duration delivery_retry_max = minutes(10);
  Duration heartbeat_interval = seconds(10);  // agents beat this often; 3 missed = unreachable
};

class RemediationController : public Controller {
 public:
  // `jobs_on_node`: how many jobs have pods bound to a node (the scheduler's count; wait-for-idle
  // and drain wait until it is zero).
  using JobsOnNode =
      std::function<size_t(const FleetState&, const std::string& cluster, const std::string& node)>;
  // `slurm_not_idle`: on a real Slurm cluster, why slurmctld does not show the node drained and
  // free of allocations yet (nullopt: idle, or not a real Slurm node); wait-for-idle waits for it
  // too (docs/slurm.md).
  using SlurmNotIdle =
      std::function<std::optional<std::string>(const FleetState&, const Remediation&)>;
  RemediationController(HealingOptions options, CapacityCheck capacity, JobsOnNode jobs_on_node,
                        SlurmNotIdle slurm_not_idle = {});

  std::string_view name() const override { return "remediation"; }
  ControllerDecision decide(const FleetState& state, Time now) override;

  // Outcomes of remediate/burn-in intents from the cloud driver (kRemediated, kBurnIn).
  Result<Decision> handle_report(const FleetState& state, Time now, const CloudReport& report);
  // The webhook driver's answer for one delivery.
  Result<Decision> handle_delivery(const FleetState& state, Time now, const std::string& alert_id,
                                   const std::string& target, const std::string& alert_state,
                                   bool ok, const std::string& error);
  // A node agent's heartbeat (loop thread). Kept in memory, not journaled: after a restart a
  // node is judged again only once it has beaten. Three missed beats raise host-reachability;
  // the next beat clears it.
  Result<Decision> handle_heartbeat(const FleetState& state, Time now, const std::string& cluster,
                                    const std::string& node);
  const HealingOptions& options() const { return options_; }
  const CapacityCheck& capacity() const { return capacity_; }

 private:
  void alerts(const FleetState& state, Time now, ControllerDecision& d);
  void deliveries(const FleetState& state, Time now, ControllerDecision& d);
  void proposals(const FleetState& state, Time now, ControllerDecision& d);
  void progress(const FleetState& state, Time now, ControllerDecision& d);
  // progress()'s steps for one open remediation. cancel_if_moot: its node is gone, or every
  // alert it answers cleared before the node was drained (true = cancelled). start_if_allowed:
  // an approved one passes the safety gates (cooldown, circuit breaker, one per node pool,
  // concurrency cap, spare capacity) and cordons its node, or says which gate holds it.
  // wait_for_idle / request_action / check_rejoin: the steps after cordoning.
  struct Gates;
  bool cancel_if_moot(const HealthState& h, const Remediation& r, const Node* node,
                      ControllerDecision& d);
  // A proposal the circuit breaker held, approved by its policy rule once a person reset the
  // breaker and while its alert still fires, no faster than the breaker allows.
  void resume_held(const HealthState& h, const Remediation& r, const Cluster& cluster, Time now,
                   std::map<std::string, int64_t>& resumed, ControllerDecision& d);
  void start_if_allowed(const HealthState& h, const Remediation& r, const Cluster& cluster,
                        const Node& node, Gates& gates, Time now, ControllerDecision& d);
  static bool stops_jobs(const HealthState& h, const Remediation& r);
  void wait_for_idle(const FleetState& state, const Remediation& r, Time now,
                     ControllerDecision& d);
  void request_action(const Remediation& r, const Node& node, ControllerDecision& d);
  void check_rejoin(const HealthState& h, const Remediation& r, Time now, ControllerDecision& d);
  void burn_in(const FleetState& state, ControllerDecision& d);
  void reachability(const FleetState& state, Time now, ControllerDecision& d);

  HealingOptions options_;
  CapacityCheck capacity_;
  JobsOnNode jobs_on_node_;
  SlurmNotIdle slurm_not_idle_;
  std::set<std::string> acting_;   // remediation ids whose intent this process handed out
  std::set<std::string> burning_;  // host ids whose burn-in intent this process handed out
  struct Retry {
    int failures = 0;
    Time next{};
  };
  std::map<std::string, Retry> delivering_;  // "<alert>|<target>|<state>" in flight or backing off
  int64_t auto_in_pass_ = 0;
  struct Beat {
    std::string cluster;
    health::HeartbeatTracker tracker;
    bool reported = false;  // the unreachable alert was raised
  };
  std::map<std::string, Beat> beats_;  // by node
};

}  // namespace gf::remediate
