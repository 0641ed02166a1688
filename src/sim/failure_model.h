// The failure model of `gpufleet simulate` (docs/scenarios.md "Failures"): node faults arriving
// as a seeded Poisson process per node at published fleet rates (defaults: Llama 3's 54 days on
// 16,384 H100s), a few "lemon" hosts failing several times as often, and each fault sent as the
// real detector input of its cause (an Xid line, a DCGM reading, an InfiniBand port state, a
// missed heartbeat), so the real detectors, policies and remediations handle it. Each fault is
// fixed only by the repair its draw needs (reboot, reprovision or migrate); a simulated on-call
// person approves what waits for a person after a response time.
//
// Deterministic: driven by the simulation's virtual time and seed; no I/O of its own (the
// simulation sends what it returns through the API).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/random.h"
#include "core/result.h"
#include "core/time.h"
#include "model/fault_classes.h"
#include "state/fleet_state.h"

namespace gf {

// One cause of the mix: its share (a weight), what it does to the gang running on the node, and
// which repair fixes it (docs/scenarios.md "Failures"; defaults with their sources there).
struct FailureCause {
  std::string name;
  double weight = 0;
  health::JobEffect effect = health::JobEffect::kFatal;
  double hang_share = 0;  // of its faults, those that stall the gang until the watchdog instead
  // What fixes it (shares, normalised): a reboot (any remediation), a reprovision (or more), new
  // hardware (migrate or delete), or no node action (it goes away by itself after
  // `clears_after`: the job's own bug once the job restarted, the fabric once network operations
  // fixed it, a host maintenance once it ended).
  double fix_reboot = 0, fix_reprovision = 0, fix_replace = 0, fix_none = 0;
  Duration clears_after{};
};

// What the simulated fleet runs under: the scenario's remediation as it is, every remediation
// left to the on-call (NodeRecovery None on every cluster; the on-call approves after
// responseTime), or nobody acting at all (NodeRecovery None, no on-call).
enum class RemediationMode { kAutomatic, kManual, kNone };
std::string_view to_string(RemediationMode m);

struct FailureModelSpec {
  double rate_per_1000_node_days = 3.79;  // Llama 3: 419 unexpected in 54 d on 2,048 nodes
  double lemon_share = 0.015;             // share of hosts that are lemons
  double lemon_factor = 7.0;              // their rate multiplier
  std::vector<FailureCause> mix;          // default: Llama 3's root causes
  Duration hang_detection = minutes(10);  // a hang ends the run when the NCCL watchdog fires
  std::optional<Duration> operator_response = hours(2);  // none: nobody ever acts
  RemediationMode remediation = RemediationMode::kAutomatic;
  std::vector<std::string> instance_groups;  // faults only here; empty: every group with GPUs
  Duration sweep = minutes(10);              // how often new nodes and the on-call are looked at
};

// The default mix (Llama 3 405B pre-training, Table 5; docs/scenarios.md lists the mapping).
std::vector<FailureCause> default_failure_mix();
// The known cause names, for messages.
std::vector<std::string> failure_cause_names();

// Parses `failures:` (an object, or `true` for every default).
Result<FailureModelSpec> parse_failure_model(const Json& value, const std::string& path);

// A fault to send: POST /v1/clusters/<cluster>/nodes/<node>/signals {Signal, ClearedBy}, and
// what it does to the gangs on the node (the simulation fails their pods through the pod-status
// API at `stops_at`: at once when fatal, after the hang detection when it hangs).
struct FaultInjection {
  Time at{};
  std::string cluster, node, host, cause;
  Json signal;
  std::vector<std::string> cleared_by;  // empty: any remediation fixes it
  std::string fix;                      // reboot | reprovision | replace | none (what it needs)
  health::JobEffect effect = health::JobEffect::kNone;
  std::optional<Time> stops_at;   // when the gangs on the node stop (fatal, hang)
  std::optional<Time> clears_at;  // fix none: when it goes away by itself
  bool injected = true;           // false: the node was failing already (absorbed)
  Json to_json() const;           // a line of faults.jsonl, without its time
};

// What a fault does later: stop the gangs on its node (fatal at once, hang after the watchdog),
// or go away by itself (fix none). Only the node's latest fault acts.
struct FaultEffect {
  Time at{};
  std::string cluster, node, cause;
  bool stop = true;  // false: clear
};

// What the on-call people do: approve a remediation, reset a tripped circuit breaker, or — when a
// proposal repeats an action that already failed on that node for the same alert — reject it and
// ask for the node to be replaced (docs/scenarios.md "Failures").
struct OperatorAction {
  std::string path;            // POST path
  std::string what;            // for counting: approve | reset-breaker | reject | replace
  Json body = Json::object();  // the request body
  std::string as = "oncall";   // the caller
};

class FailureInjector {
 public:
  FailureInjector(FailureModelSpec spec, uint64_t seed);

  // The next instant something is due: a fault or a sweep.
  Time next_due() const;
  // Picks up nodes that came and went, then returns the faults due at `now`. Every node draws
  // its faults from a stream of its own (seeded by the run's seed and its id) and a host's
  // lemon draw from the host's id, so variants of a run see the same faults at the same times
  // (common random numbers); a fault due on a node that already has an open alert or
  // remediation is absorbed (returned with injected = false, not sent).
  std::vector<FaultInjection> due(const FleetState& state, Time now);
  // The effects of earlier faults due at `now` (after due(): a fatal fault's stop is due at once).
  std::vector<FaultEffect> due_effects(Time now);
  // Every fault due so far, injected or absorbed, in order: the lines of faults.jsonl.
  const std::vector<FaultInjection>& history() const { return history_; }
  // The on-call's actions due at `now` (at sweeps).
  std::vector<OperatorAction> operator_actions(const FleetView& view, Time now);

  // For the KPIs.
  int64_t injected() const { return injected_; }
  const std::map<std::string, int64_t>& by_cause() const { return by_cause_; }
  const std::map<std::string, int64_t>& by_fix() const { return by_fix_; }
  const std::map<std::string, int64_t>& by_effect() const { return by_effect_; }
  int64_t absorbed() const { return absorbed_; }
  const std::set<std::string>& lemon_hosts() const { return lemons_; }
  const std::map<std::string, int64_t>& faults_by_host() const { return by_host_; }
  // Node-days of exposure (Running nodes the model watched), integrated at sweeps.
  double node_days() const { return static_cast<double>(exposure_us_) / 86400e6; }
  const FailureModelSpec& spec() const { return spec_; }

 private:
  struct Tracked {
    std::string cluster, host;
    Random rng{1};  // the node's own stream: gaps, causes, fixes, signal details
    Time next{};
  };
  void sync(const FleetState& state, Time now);
  // Starts (or keeps) watching node `id` when the model covers it; false when it does not.
  bool watch(const std::string& cluster, const std::string& id, const Node& n, Time now);
  void forget(const std::string& id);
  // An earlier remediation of r's node that took the same action for one of r's alerts and
  // failed, or null.
  static const remediate::Remediation* failed_before(const remediate::HealthState& health,
                                                     const remediate::Remediation& r);
  bool is_lemon(const std::string& host);
  FaultInjection make_fault(const std::string& node, Tracked& t, Time now);

  FailureModelSpec spec_;
  uint64_t seed_;
  double total_weight_ = 0;
  struct SeenCluster {
    uint64_t revision = 0;      // the cluster revision the last sweep saw
    std::set<std::string> ids;  // its nodes being tracked
  };
  std::map<std::string, SeenCluster, std::less<>> clusters_;
  std::map<std::string, Tracked> nodes_;          // by instance id
  std::set<std::pair<Time, std::string>> queue_;  // (next fault, instance id)
  std::map<std::string, bool> host_lemon_;        // by host, drawn on first sight
  std::set<std::string> lemons_;
  Time next_sweep_{};
  Time last_sweep_{};
  bool started_ = false;
  int64_t exposure_us_ = 0;
  int64_t injected_ = 0;
  int64_t absorbed_ = 0;
  std::multimap<Time, std::pair<FaultEffect, int64_t>> effects_;  // with the node's generation
  std::map<std::string, int64_t> generation_;                     // injected faults, by node
  std::vector<FaultInjection> history_;
  std::map<std::string, int64_t> by_cause_, by_fix_, by_effect_, by_host_;
};

}  // namespace gf
