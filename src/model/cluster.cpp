#include "model/cluster.h"

#include <algorithm>

namespace gf {

namespace {

template <typename E, size_t N>
std::optional<E> parse_enum(std::string_view s, const std::pair<E, std::string_view> (&table)[N]) {
  for (const auto& [e, name] : table) {
    if (name == s) return e;
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string_view enum_name(E e, const std::pair<E, std::string_view> (&table)[N]) {
  for (const auto& [v, name] : table) {
    if (v == e) return name;
  }
  return "Unknown";
}

constexpr std::pair<ClusterStatus, std::string_view> kClusterStatus[] = {
    {ClusterStatus::kCreating, "Creating"},
    {ClusterStatus::kInService, "InService"},
    {ClusterStatus::kUpdating, "Updating"},
    {ClusterStatus::kRollingBack, "RollingBack"},
    {ClusterStatus::kFailed, "Failed"},
    {ClusterStatus::kDeleting, "Deleting"},
    {ClusterStatus::kSystemUpdating, "SystemUpdating"}};
constexpr std::pair<GroupStatus, std::string_view> kGroupStatus[] = {
    {GroupStatus::kCreating, "Creating"},
    {GroupStatus::kInService, "InService"},
    {GroupStatus::kUpdating, "Updating"},
    {GroupStatus::kDegraded, "Degraded"},
    {GroupStatus::kFailed, "Failed"},
    {GroupStatus::kDeleting, "Deleting"},
    {GroupStatus::kSystemUpdating, "SystemUpdating"}};
constexpr std::pair<NodeStatus, std::string_view> kNodeStatus[] = {
    {NodeStatus::kPending, "Pending"},
    {NodeStatus::kRunning, "Running"},
    {NodeStatus::kFailure, "Failure"},
    {NodeStatus::kShuttingDown, "ShuttingDown"},
    {NodeStatus::kSystemUpdating, "SystemUpdating"},
    {NodeStatus::kDeepHealthCheckInProgress, "DeepHealthCheckInProgress"},
    {NodeStatus::kNotFound, "NotFound"}};
constexpr std::pair<NodeType, std::string_view> kNodeType[] = {
    {NodeType::kNone, ""},
    {NodeType::kController, "Controller"},
    {NodeType::kLogin, "Login"},
    {NodeType::kCompute, "Compute"}};

}  // namespace

std::string_view to_string(ClusterStatus s) { return enum_name(s, kClusterStatus); }
std::string_view to_string(GroupStatus s) { return enum_name(s, kGroupStatus); }
std::string_view to_string(NodeStatus s) { return enum_name(s, kNodeStatus); }
std::string_view to_string(NodeType t) { return enum_name(t, kNodeType); }
std::string_view to_string(Orchestrator o) {
  return o == Orchestrator::kSlurm ? "Slurm" : "Native";
}
std::optional<Orchestrator> parse_orchestrator(std::string_view s) {
  if (s == "Slurm") return Orchestrator::kSlurm;
  if (s == "Native") return Orchestrator::kNative;
  return std::nullopt;
}
std::optional<ClusterStatus> parse_cluster_status(std::string_view s) {
  return parse_enum(s, kClusterStatus);
}
std::optional<GroupStatus> parse_group_status(std::string_view s) {
  return parse_enum(s, kGroupStatus);
}
std::optional<NodeStatus> parse_node_status(std::string_view s) {
  return parse_enum(s, kNodeStatus);
}
std::optional<NodeType> parse_node_type(std::string_view s) { return parse_enum(s, kNodeType); }

Json GroupSpec::to_json() const {
  Json j = {{"InstanceGroupName", name},
            {"InstanceType", instance_type},
            {"InstanceCount", target},
            {"MinInstanceCount", min},
            {"ExecutionRole", execution_role}};
  if (has_slurm_config) {
    Json sc = {{"NodeType", to_string(node_type)}};
    if (!partitions.empty()) sc["PartitionNames"] = partitions;
    if (!default_partition.empty()) sc["DefaultPartition"] = default_partition;
    j["SlurmConfig"] = sc;
  }
  if (threads_per_core) j["ThreadsPerCore"] = *threads_per_core;
  if (!lifecycle_config.is_null()) j["LifeCycleConfig"] = lifecycle_config;
  if (!extra.empty()) j["Extra"] = extra;
  return j;
}

Result<GroupSpec> GroupSpec::from_json(const Json& j) {
  ObjectReader r(j, "group");
  GroupSpec g;
  g.name = r.required_string("InstanceGroupName");
  g.instance_type = r.required_string("InstanceType");
  g.target = r.required_int("InstanceCount");
  g.min = r.optional_int("MinInstanceCount").value_or(0);
  g.execution_role = r.optional_string("ExecutionRole").value_or("");
  g.threads_per_core = r.optional_int("ThreadsPerCore");
  if (const Json* lc = r.optional_value("LifeCycleConfig")) g.lifecycle_config = *lc;
  if (const Json* ex = r.optional_object("Extra")) g.extra = *ex;
  if (const Json* sc = r.optional_object("SlurmConfig")) {
    ObjectReader s(*sc, "group.SlurmConfig");
    g.has_slurm_config = true;
    auto t = parse_node_type(s.required_string("NodeType"));
    if (!t)
      s.fail("NodeType", "unknown node type");
    else
      g.node_type = *t;
    g.partitions = s.optional_string_list("PartitionNames").value_or(std::vector<std::string>{});
    g.default_partition = s.optional_string("DefaultPartition").value_or("");
    r.fail_status(s.status());
  }
  if (!r.ok()) return r.status();
  return g;
}

InstanceGroup* Cluster::find_group(std::string_view n) {
  for (auto& g : groups) {
    if (g.spec.name == n) return &g;
  }
  return nullptr;
}

const InstanceGroup* Cluster::find_group(std::string_view n) const {
  for (const auto& g : groups) {
    if (g.spec.name == n) return &g;
  }
  return nullptr;
}

int64_t Cluster::current_count(std::string_view group) const {
  int64_t n = 0;
  for (const auto& [id, node] : nodes) n += node.group == group && node.is_current();
  return n;
}

int64_t Cluster::live_count(std::string_view group) const {
  int64_t n = 0;
  for (const auto& [id, node] : nodes) n += node.group == group && node.is_live();
  return n;
}

int64_t SoftwareUpdate::batch_size(int64_t targets) const {
  if (batch_type == "CAPACITY_PERCENTAGE") {
    return std::max<int64_t>(1, (targets * batch_value + 99) / 100);  // rounded up
  }
  return std::max<int64_t>(1, batch_value);
}

bool SoftwareUpdate::updates(std::string_view group) const {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

std::string slurm_node_name(const Node& n) {
  return n.group + "-" + std::to_string(n.slurm_slot > 0 ? n.slurm_slot : n.attempt);
}

}  // namespace gf
