// Clusters, instance groups and nodes (docs/provisioning.md): plain domain types with their wire
// enums. State owns instances of these; controllers read them; apply code in state/ changes them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/time.h"
#include "model/billing.h"
#include "model/slurm_node.h"

namespace gf {

enum class ClusterStatus {
  kCreating,
  kInService,
  kUpdating,
  kRollingBack,
  kFailed,
  kDeleting,
  kSystemUpdating
};
enum class GroupStatus {
  kCreating,
  kInService,
  kUpdating,
  kDegraded,
  kFailed,
  kDeleting,
  kSystemUpdating
};
// Node InstanceStatus.Status.
enum class NodeStatus {
  kPending,
  kRunning,
  kFailure,
  kShuttingDown,
  kSystemUpdating,
  kDeepHealthCheckInProgress,
  kNotFound
};
enum class NodeType { kNone, kController, kLogin, kCompute };
enum class Orchestrator { kSlurm, kNative };

std::string_view to_string(ClusterStatus s);
std::string_view to_string(GroupStatus s);
std::string_view to_string(NodeStatus s);
std::string_view to_string(NodeType t);
std::string_view to_string(Orchestrator o);
std::optional<Orchestrator> parse_orchestrator(std::string_view s);
std::optional<ClusterStatus> parse_cluster_status(std::string_view s);
std::optional<GroupStatus> parse_group_status(std::string_view s);
std::optional<NodeStatus> parse_node_status(std::string_view s);
std::optional<NodeType> parse_node_type(std::string_view s);

// What the user asked for one instance group (CreateCluster/UpdateCluster InstanceGroups[i]).
struct GroupSpec {
  std::string name;
  std::string instance_type;
  int64_t target = 0;                    // InstanceCount
  int64_t min = 0;                       // MinInstanceCount (defaults applied by validation)
  NodeType node_type = NodeType::kNone;  // SlurmConfig.NodeType
  std::vector<std::string> partitions;   // SlurmConfig.PartitionNames
  // SlurmConfig.DefaultPartition (a gpufleet extension, docs/slurm.md "The default partition"):
  // one of `partitions`, the cluster's Default=YES partition; "" = not this group's.
  std::string default_partition;
  bool has_slurm_config = false;
  std::string execution_role;
  std::optional<int64_t> threads_per_core;
  Json lifecycle_config;        // kept as given (SourceS3Uri, OnCreate, …); null when absent
  Json extra = Json::object();  // unknown fields, kept and echoed

  Json to_json() const;
  static Result<GroupSpec> from_json(const Json& j);  // the canonical form to_json writes
  bool operator==(const GroupSpec&) const = default;
};

struct InstanceGroup {
  GroupSpec spec;
  GroupStatus status = GroupStatus::kCreating;
  Time created_at{};
  // MinCount bookkeeping (docs/provisioning.md).
  bool ever_in_service = false;        // false = a "new" group for rollback purposes
  int64_t last_in_service_target = 0;  // counts at the last InService, for rollback
  int64_t last_in_service_min = 0;
  std::optional<Time> min_deadline;  // rollback when still short of MinCount at this time
  // Launch retry state: capped exponential backoff after failures, reset on success.
  int64_t consecutive_failures = 0;
  std::optional<Time> next_attempt;
  std::string last_failure;
  int64_t last_failed_attempt = 0;  // a later attempt that runs ends the backoff
  int64_t launch_attempts = 0;      // every launch of this group, 1-based (sim faults key on it)
};

struct Node {
  std::string instance_id;
  std::string group;
  std::string instance_type;
  NodeStatus status = NodeStatus::kPending;
  std::string message;
  int64_t attempt = 0;       // the group's launch attempt number
  int64_t launch_order = 0;  // fleet-wide order of launch requests: higher = more recent
  // A Slurm cluster's node: the lowest place in its group free at launch (1-based; 0 before
  // slots existed). Its Slurm name is `<group>-<slot>` (docs/slurm.md).
  int64_t slurm_slot = 0;
  Time requested_at{};
  std::optional<Time> launch_time;  // instance up, lifecycle script started: billing starts
  std::optional<Time> running_at;
  std::optional<Time> shutting_down_at;  // billing ends
  bool healthy = true;
  std::string termination_reason;
  int64_t price_micros_per_hour = 0;  // from the catalog when the launch was requested
  // Remediation (docs/remediation.md): cordoned = no new pods; maintenance = drained and being
  // acted on (its pods are evicted). host_id: the physical machine ("" = host_of() default).
  bool cordoned = false;
  bool maintenance = false;
  // An open alert whose fault stops jobs (fatal or hang, docs/remediation.md "Defaults by fault
  // class") is on it: it takes no new gang until the alert resolves; running gangs are not moved.
  bool faulted = false;
  std::string host_id;
  std::map<std::string, std::string> labels;
  // Software (docs/provisioning.md "Software updates"): the image it runs and the cluster's
  // update generation it was last brought to (0: as first launched, before any update).
  std::string image;
  int64_t software_generation = 0;
  // Where its pods are reached, as its agent reported it ("" for simulated instances).
  std::string address;
  // A node of a real Slurm cluster: what slurmctld said of it when its agent last looked
  // (docs/slurm.md); absent for simulated instances and before the first report.
  std::optional<SlurmNodeReport> slurm{};

  // The physical host under this node: host_id, or "host-<instance id without i->".
  std::string host() const {
    return host_id.empty()
               ? "host-" + (instance_id.rfind("i-", 0) == 0 ? instance_id.substr(2) : instance_id)
               : host_id;
  }

  bool launched() const { return launch_time.has_value(); }
  // Counts toward the group's CurrentCount.
  bool is_current() const { return status == NodeStatus::kRunning; }
  // Counts toward the desired total (not on its way out).
  bool is_live() const {
    return status != NodeStatus::kShuttingDown && status != NodeStatus::kFailure;
  }
};

// A Slurm cluster's node name: `<group>-<slot>` (docs/slurm.md; nodes launched before slots
// existed keep `<group>-<launch attempt>`).
std::string slurm_node_name(const Node& n);

// UpdateClusterSoftware in progress (docs/provisioning.md "Software updates"): the Running nodes
// of `groups` are brought to `image`, a batch at a time, with a wait between batches.
struct SoftwareUpdate {
  std::string image;                // ImageId ("latest" when the request named none)
  std::vector<std::string> groups;  // the instance groups it updates
  std::string batch_type;           // INSTANCE_COUNT | CAPACITY_PERCENTAGE
  int64_t batch_value = 1;
  Duration wait_interval{};
  Time started{};
  std::optional<Time> next_batch_at;  // after a batch: when the next may start
  int64_t batches = 0;                // batches started
  bool operator==(const SoftwareUpdate&) const = default;

  // Nodes in one batch, given the TargetCount of the groups it updates (at least 1).
  int64_t batch_size(int64_t targets) const;
  bool updates(std::string_view group) const;
};

struct Cluster {
  std::string name;
  std::string id;
  std::string arn;
  ClusterStatus status = ClusterStatus::kCreating;
  Time creation_time{};
  std::string failure_message;
  bool continuous = true;  // NodeProvisioningMode Continuous; false = legacy all-or-nothing
  Orchestrator orchestrator = Orchestrator::kSlurm;
  Json vpc_config;
  std::string node_recovery = "Automatic";
  bool ever_in_service = false;
  std::vector<InstanceGroup> groups;   // in creation order
  std::map<std::string, Node> nodes;   // by instance id; terminated nodes are removed
  std::vector<BillingRecord> billing;  // closed records (instances that reached ShuttingDown)
  Duration min_count_timeout = hours(3);
  // Legacy mode: the update being attempted (all or nothing) and what to restore on failure.
  std::optional<std::vector<GroupSpec>> legacy_previous_specs;
  // Software: the image new nodes launch with, the update generation they launch at, and the
  // update in progress, if any.
  std::string image;
  int64_t software_generation = 0;
  std::optional<SoftwareUpdate> software_update;

  InstanceGroup* find_group(std::string_view name);
  const InstanceGroup* find_group(std::string_view name) const;
  // Gangs may run here: neither failed, being deleted nor rolling back (a job on a cluster that
  // stops running jobs waits for failover instead of restarting there, docs/dispatch.md).
  bool runs_jobs() const {
    return status != ClusterStatus::kFailed && status != ClusterStatus::kDeleting &&
           status != ClusterStatus::kRollingBack;
  }
  int64_t current_count(std::string_view group) const;  // Running nodes
  int64_t live_count(std::string_view group) const;     // nodes not on their way out
};

}  // namespace gf
