// The provisioning controller (docs/provisioning.md–2.5): reconciles every cluster's groups toward
// their desired counts. Continuous mode: controller first, partial capacity accepted, failed
// launches retried with capped exponential backoff and jitter, MinCount with timeout and rollback.
// Legacy mode: all or nothing. It never does I/O: launches and terminations are intents for the
// cloud driver, whose outcomes come back through handle_report() as requests.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ids.h"
#include "core/random.h"
#include "loop/controller.h"
#include "model/catalog.h"
#include "model/cloud_ops.h"

namespace gf {

struct ProvisionOptions {
  Duration retry_base = seconds(30);  // first retry delay after a failed launch round
  Duration retry_max = minutes(10);   // cap of the exponential backoff
  Duration min_count_timeout = hours(3);
  int64_t max_launches_per_pass = 1000;  // per group, bounds one batch's size
  int64_t min_probe_launches = 8;        // a retry round asks for at least this many (if missing)
  uint64_t id_seed = 0;                  // instance and cluster ids derive from it and counters
  ArnConfig arn;
};

class Provisioner final : public Controller {
 public:
  Provisioner(ProvisionOptions options, const Catalog& catalog, Random& rng);

  std::string_view name() const override { return "provisioner"; }
  ControllerDecision decide(const FleetState& state, Time now) override;

  // A cloud driver's report, validated against the state (stale reports change nothing).
  Result<Decision> handle_report(const FleetState& state, Time now, const CloudReport& report);

  const ProvisionOptions& options() const { return options_; }
  const Catalog& catalog() const { return catalog_; }

  // Deterministic ids: same seed and counters, same ids; never reused within a journal.
  std::string instance_id(int64_t counter) const;
  std::string cluster_id(int64_t counter) const;
  // The delay before retry number `failures` (1-based), jittered from the seeded generator.
  Duration backoff(int64_t failures);

 private:
  void reconcile_cluster(const Cluster& c, Time now, int64_t& counter, ControllerDecision& d);
  void reconcile_group(const Cluster& c, const InstanceGroup& g, bool may_launch, Time now,
                       int64_t& counter, ControllerDecision& d);
  void launch(const Cluster& c, const InstanceGroup& g, int64_t n, int64_t& counter,
              ControllerDecision& d);
  void terminate(const Cluster& c, const Node& n, const std::string& reason, ControllerDecision& d);
  void terminate_excess(const Cluster& c, const InstanceGroup& g, int64_t excess,
                        const std::string& reason, ControllerDecision& d);
  // Intents the state shows in flight that this process has not handed out (after a restart):
  // asked for again. Looks at changed_ nodes only when set, else at every node.
  void reissue_lost_intents(const Cluster& c, ControllerDecision& d);
  void reissue_lost_intent(const Cluster& c, const std::string& id, const Node& n,
                           ControllerDecision& d);
  // UpdateClusterSoftware: the next batch once the last is over and its wait has passed; the end
  // once no node of the updated groups is left behind (docs/provisioning.md).
  void reconcile_software_update(const Cluster& c, Time now, ControllerDecision& d);
  void update_software(const Cluster& c, const Node& n, ControllerDecision& d);
  struct GroupCounts {
    int64_t live = 0;     // not on its way out
    int64_t current = 0;  // Running
    int64_t leaving = 0;  // ShuttingDown
  };
  std::unordered_map<std::string, GroupCounts> counts_;  // per group of the cluster in hand
  static void wake(ControllerDecision& d, Time t);

  ProvisionOptions options_;
  const Catalog& catalog_;
  Random& rng_;
  // Intents handed out by this process, per node: kIssuedLaunch | kIssuedTerminate. After a
  // restart it is empty, so whatever the state still shows in flight is asked for again (drivers
  // treat a repeat as the same operation). Entries of nodes that are gone are dropped each pass.
  static constexpr int kIssuedLaunch = 1;
  static constexpr int kIssuedTerminate = 2;
  static constexpr int kIssuedUpdate = 4;
  using IssuedMap = std::unordered_map<std::string, int>;  // by instance id
  std::unordered_map<std::string, IssuedMap> issued_;      // by cluster, as of the last pass
  // The cluster revision each cluster's entries are complete for: the next pass looks again only
  // at the nodes the state's node log names since then (FleetState::nodes_changed_since).
  std::unordered_map<std::string, uint64_t> issued_revision_;
  // During a pass, the cluster in hand's entries: as the last pass left them, and this pass's
  // (the same map when only `changed_` nodes are looked at).
  const IssuedMap* prev_issued_ = nullptr;
  IssuedMap* next_issued_ = nullptr;
  const std::vector<std::string>* changed_ = nullptr;
  // A cluster whose revision has not moved since a pass that decided nothing for it, and whose
  // next due time has not come, would get the same empty decision again: it is skipped, so a
  // pass costs what changed, not every node of the fleet (docs/performance.md).
  struct Quiet {
    uint64_t revision = 0;
    std::optional<Time> wake;
  };
  std::unordered_map<std::string, Quiet> quiet_;
};

}  // namespace gf
